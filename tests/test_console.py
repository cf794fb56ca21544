"""The one console renderer: one grid, one spelling of a missing value, and `audit`/`demo` lead with the answer
(the verdict per construct and the AUROC table on one screen; every other section with -v)."""
from __future__ import annotations

import json
from dataclasses import replace

from attrib_audit.audit.agreement import Agreement, Confusion, Kappa
from attrib_audit.cli import main
from attrib_audit.report.console import format_agreement, format_plan, grid
from attrib_audit.validate.plan import PlanRow, SamplePlan


def test_grid_pads_aligns_and_rules():
    assert grid(["a", "bb"], [["xyz", "1"], ["", "22"]], rule=True, align="<>") == [
        "a    bb", "---  --", "xyz   1", "     22"]
    assert grid(None, [["k", "v"], ["key", "value"]], indent="  ") == ["  k    v", "  key  value"]


def test_a_missing_value_is_always_a_dash():
    nan = float("nan")
    row = Kappa(kappa=nan, ci_low=nan, ci_high=nan, n=0, n_groups=0, n_excluded=3, raw_agreement=None,
                n_boot_dropped=20, confusion=Confusion(counts=((0, 0), (0, 0))))
    text = format_agreement(Agreement(run_id=None, a="x", b="human", a_from="score >= 0.5", b_from="human labels",
                                      n_boot=20, seed=0, ci="95%", overall=row,
                                      slices=(replace(row, slice="s", kappa=0.5),)))
    assert "undefined" in text and "0.500" in text and "n/a" not in text
    plan = SamplePlan(title="assumed", best="m1", best_auroc=0.8, runner="m2", notes=(), pairs_per_cluster=1,
                      icc=0.0, sims=10, n_boot=20, recommended_n=None, goals=("g",),
                      rows=(PlanRow(n=50, half_width=0.1, power=None, undefined=2),))
    text = format_plan(plan)
    assert "—" in text and "(2 one-class samples)" in text and "more than 50 pairs are needed for g" in text


def _audit(tmp_path, *extra: str) -> tuple[int, str]:
    rows = [{"id": f"{d}{i}", "dataset": d, "claim": f"claim {i % 5} about {d}",
             "evidence": f"claim {i % 5} about {d}" if i % 2 else "nothing here", "label": i % 2,
             "construct": "attribution"} for d in ("a", "b", "c") for i in range(20)]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    return main(["audit", str(path), "--scorers", "lexical", "--score-col", "mine=label", "--n-boot", "40",
                 "--n-perm", "40", "--no-cache", "--quiet", "--out", str(out), *extra]), str(out)


def test_audit_prints_the_answer_first_and_the_rest_with_verbose(tmp_path, capsys):
    rc, out = _audit(tmp_path)
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert rc == 0 and lines[0].startswith("Which metric to use, per construct")
    assert lines[1].startswith("  attribution (3 datasets): use ") and "regret " in lines[1] and "[" in lines[1]
    assert "slice" in lines[3] and "AUROC [95% clustered-bootstrap CI]" in printed
    assert "== transfer within" not in printed and "== sensitivity" not in printed
    assert "add -v" in printed and lines[-1].endswith(f"results: {out}/results.json") and len(lines) <= 20
    rc, _ = _audit(tmp_path, "-v")
    verbose = capsys.readouterr().out
    assert rc == 0 and printed.splitlines()[:10] == verbose.splitlines()[:10]
    assert verbose.index("== transfer within") < verbose.index("== sensitivity") < verbose.index("results: ")
    assert "add -v" not in verbose
