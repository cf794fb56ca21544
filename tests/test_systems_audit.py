"""The system-level section end to end: the `system` column, the section in results.json on a SummEval copy (real
scores of the issue's four scorers, precomputed), `systems --results` equal to it, `audit --check` reproducing it,
`select --level system`, the terminal and the report; thresholds chosen on other slices only; the caveat when
systems answer different inputs (scoring a file with `systems DATA`)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from attrib_audit.audit.systems import (
    SystemSettings,
    pick_ranker,
    saved_systems,
    systems_section,
    transferred_thresholds,
)
from attrib_audit.data import DataSpec, FileSource, load_data, load_pairs
from attrib_audit.files.records import to_record
from attrib_audit.stats.classification import best_threshold
from cli_run import run_main as run

SUMMEVAL = Path(__file__).parent / "data" / "summeval_system_scores.jsonl"
METRICS = ("lexical", "minilm", "blend", "bertscore")
# the scores file holds no texts (see tests/data/NOTICE.md): its claim and evidence columns are stand-ins, the
# four metrics are precomputed columns, so nothing is scored and the statistics run on the real scores
SUMMEVAL_ARGS = [str(SUMMEVAL), "--claim-col", "system", "--evidence-col", "group", "--scorers", "none",
                 *(a for m in METRICS for a in ("--score-col", f"{m}={m}")), "--n-boot", "300", "--n-perm", "50"]


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def audit(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("summeval") / "audit"
    code, stdout, err = run(["audit", *SUMMEVAL_ARGS, "--no-cache", "--out", str(out), "--report"])
    assert code == 0, err
    return out, stdout


def test_the_pair_schema_reads_a_system_column_and_system_col_maps_one(tmp_path):
    rows = [{"id": f"r{i}", "dataset": "d", "claim": "c", "evidence": "e", "label": i % 2, "system": s, "model": m}
            for i, (s, m) in enumerate([("A", "x"), ("", "y"), (None, 7), ("B", None)])]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert load_pairs(path).systems == ["A", None, None, "B"]  # a blank cell names no system
    mapped = load_data(DataSpec(files=(FileSource(path=str(path)),), columns={"system": "model"}))
    assert mapped.systems == ["x", "y", "7", None] and mapped.has_systems
    assert not load_pairs(path, columns={"system": "absent"}).has_systems
    assert list(mapped.take([3, 0]).records())[1].system == "x"


def test_summeval_audit_adds_the_system_level_section_with_known_answers(audit):
    out, stdout = audit
    res = json.loads((out / "results.json").read_text())
    block = res["systems"]
    assert list(res).index("systems") == list(res).index("sensitivity") + 1
    assert (block["n_boot"], block["seed"], block["resample"], block["min_shared"]) == (300, 0, ["inputs"], 30)
    assert res["spec"]["stats"]["system_resample"] == ["inputs"]
    [e] = block["slices"]
    assert e["status"] == "ok" and e["n_systems"] == 16 and e["n_rows"] == 1600
    assert e["design"]["paired"] and e["design"]["n_used"] == 100 and e["design"]["caveat"] is None
    # known answers: per-system rates by a plain loop, τ-b from scipy, AUROC copied from the item level
    rows = rows_of(SUMMEVAL)
    systems = sorted({r["system"] for r in rows})
    human = np.array([np.mean([r["label"] for r in rows if r["system"] == s]) for s in systems])
    for m in METRICS:
        mean = np.array([np.mean([r[m] for r in rows if r["system"] == s]) for s in systems])
        agree = next(a for a in e["agreement"] if a["metric"] == m)
        assert agree["tau"]["estimate"] == pytest.approx(sps.kendalltau(human, mean).statistic, abs=1e-12)
        assert agree["tau"]["ci_low"] <= agree["tau"]["estimate"] <= agree["tau"]["ci_high"]
        side = next(x for x in e["item_vs_system"] if x["metric"] == m)
        auroc = next(r for r in res["auroc"] if r["scorer"] == m)
        assert (side["auroc"], side["auroc_ci_low"], side["tau"]) == (auroc["auroc"], auroc["ci_low"], agree["tau"])
    got = {r["system"]: r["human"]["estimate"] for r in e["systems"]}
    assert got == pytest.approx(dict(zip(systems, human)))
    # one slice: no other slice to choose a threshold on, so no pass rate, and the section says so
    assert all(t["threshold"] is None for t in e["thresholds"].values())
    assert all(r["pass_rate"] == {} for r in e["systems"]) and {a["summary"] for a in e["agreement"]} == {"mean"}
    assert any(n.startswith("no pass rate for lexical, minilm, blend, bertscore: no other slice") for n in e["notes"])
    assert e["reversals"] and {r["metric"] for r in e["reversals"]} <= set(METRICS)
    # the terminal leads with the answer: one line per slice plus the reversal count, the tables only with -v
    pick = pick_ranker(saved_systems(block, "results.json").slices[0])  # the typed record read back
    brief = stdout[stdout.index("System level:"):].split("\n\n")[0].splitlines()
    assert len(brief) == 3 and f"rank with {pick.metric} — τ-b" in brief[1] and "reversals" in brief[2]
    assert "Reversals (labels prefer A" not in stdout


def test_systems_from_saved_scores_equals_the_audit_section_and_check_reproduces_it(audit):
    out, _ = audit
    res = json.loads((out / "results.json").read_text())
    code, stdout, err = run(["systems", "--results", str(out), "--json"])
    assert code == 0, err
    assert json.loads(stdout) == res["systems"]
    code, stdout, _ = run(["systems", "--results", str(out), "-v"])
    assert code == 0 and "equals the section saved in results.json" in stdout and "Reversals (labels prefer" in stdout
    code, stdout, _ = run(["systems", "--results", str(out), "--json", "--resample", "systems,inputs"])
    wide = json.loads(stdout)["slices"][0]
    assert wide["agreement"][0]["tau"]["method"] == "joint-inputs+systems-bootstrap-percentile"
    code, stdout, err = run(["audit", "--check", str(out), "--no-cache"])
    assert code == 0 and stdout.startswith("reproduced"), stdout + err


def test_check_finds_a_changed_system_level_number(audit, tmp_path):
    out, _ = audit
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("results.json", "scores.parquet", "bootstrap.npz"):
        (copy / name).write_bytes((out / name).read_bytes())
    res = json.loads((copy / "results.json").read_text())
    res["systems"]["slices"][0]["agreement"][0]["tau"]["ci_low"] += 0.01
    (copy / "results.json").write_text(json.dumps(res))
    code, stdout, _ = run(["audit", "--check", str(copy), "--no-cache"])
    assert code == 1 and "systems.slices" in stdout and "tau.ci_low" in stdout


def test_select_level_system_names_the_metric_to_rank_systems_with(audit):
    out, _ = audit
    e = json.loads((out / "results.json").read_text())["systems"]["slices"][0]
    code, stdout, _ = run(["select", "--results", str(out), "--level", "system", "--json"])
    [pick] = json.loads(stdout)
    taus = {a["metric"]: a["tau"]["estimate"] for a in e["agreement"]}
    assert code == 0 and taus[pick["metric"]] == max(taus.values())
    assert pick["verdict"] in ("best-for-ranking", "tied-for-ranking")
    for other in pick["tied_with"]:  # the paired τ difference with the pick holds 0
        d = next(d for d in e["differences"] if {d["metric_a"], d["metric_b"]} == {pick["metric"], other})
        assert d["tau"]["ci_low"] <= 0 <= d["tau"]["ci_high"]
    assert pick["n_reversals"] == sum(r["metric"] == pick["metric"] for r in e["reversals"])
    code, stdout, _ = run(["select", "--results", str(out), "--level", "system", "--scorers", "lexical"])
    assert code == 0 and "recommended: lexical   [only-candidate]" in stdout
    code, _, err = run(["select", "--results", str(out), "--level", "system", "--scorers", "nope"])
    assert code == 2 and "nope" in err and len(err.strip().splitlines()) == 1


def test_the_report_renders_the_system_level_section(audit):
    out, _ = audit
    e = json.loads((out / "results.json").read_text())["systems"]["slices"][0]
    md = (out / "report.md").read_text()
    assert "## System level: ranking generators" in md
    section = md[md.index("## System level"):]
    for a in e["agreement"]:
        t = a["tau"]
        assert f"| {a['metric']} | mean | {t['estimate']:.3f} [{t['ci_low']:.3f}, {t['ci_high']:.3f}] |" in section
    r = e["reversals"][0]
    assert f"| {r['metric']} | mean | {r['human_prefers']} | {r['metric_prefers']} |" in section
    plots = {p.name for p in (out / "plots").iterdir()}
    assert {"systems_scatter_0_summeval_system_scores.svg", "systems_ranks_0_summeval_system_scores.svg"} <= plots
    html = (out / "report.html").read_text()
    assert 'id="systems"' in html and 'id="fig-systems_ranks_0_summeval_system_scores"' in html


def _two_slices() -> dict:
    rows = rows_of(SUMMEVAL)
    groups = sorted({r["group"] for r in rows})
    first = set(groups[:50])
    return {"keys": np.array(["A" if r["group"] in first else "B" for r in rows], dtype=object),
            "labels": np.array([r["label"] for r in rows]), "groups": [r["group"] for r in rows],
            "systems": [r["system"] for r in rows], "scores": {m: np.array([r[m] for r in rows]) for m in METRICS}}


def test_pass_rates_use_a_threshold_chosen_on_the_other_slices_only():
    d = _two_slices()
    block = to_record(systems_section(d["keys"], d["labels"], d["groups"], d["systems"], d["scores"], [],
                                      SystemSettings(n_boot=50, seed=1, level=0.95)))
    for e in block["slices"]:
        other = d["keys"] != e["slice"]
        for m in METRICS:
            t = e["thresholds"][m]
            assert t["from"] == ["B" if e["slice"] == "A" else "A"]
            assert t["threshold"] == best_threshold(d["scores"][m][other], d["labels"][other])[0]
            mine = d["keys"] == e["slice"]
            for r in e["systems"]:
                rows = mine & (np.array(d["systems"]) == r["system"])
                assert r["pass_rate"][m]["estimate"] == pytest.approx(np.mean(d["scores"][m][rows] >= t["threshold"]))
        assert {a["summary"] for a in e["agreement"]} == {"mean", "pass"}
    # the slice's own rows never choose its threshold: changing them leaves it as it was
    changed = {m: np.where(d["keys"] == "A", 1.0 - x, x) for m, x in d["scores"].items()}
    assert transferred_thresholds(d["keys"], d["labels"], changed, "A") == \
        transferred_thresholds(d["keys"], d["labels"], d["scores"], "A")


def test_a_slice_with_one_system_is_skipped_with_the_reason_and_rows_without_one_are_counted():
    d = _two_slices()
    systems = [s if k == "A" else ("M0" if s != "M1" else None) for s, k in zip(d["systems"], d["keys"])]
    block = systems_section(d["keys"], d["labels"], d["groups"], systems, d["scores"], [],
                            SystemSettings(n_boot=30, seed=0, level=0.95))
    a, b = block.slices
    assert a.status == "ok" and a.statistics is not None and a.statistics.design.paired
    assert b.status == "skipped" and b.statistics is None and "1 system named" in b.reason
    assert b.n_without_system == 50 and pick_ranker(b).verdict == "no-recommendation"
    assert list(to_record(b)) == ["slice", "n_rows", "n_without_system", "n_systems", "thresholds", "status", "reason",
                                  "notes"]  # a skipped slice holds no statistics keys, not nulls
    assert systems_section(d["keys"], d["labels"], d["groups"], [None] * len(systems), d["scores"], [],
                           SystemSettings(n_boot=30, seed=0, level=0.95)) is None


def generated(tmp_path: Path, names=("good", "fair", "poor"), shared: bool = False) -> Path:
    """Systems of falling quality answering 40 inputs each: their own (`shared` False) or the same ones."""
    rng = np.random.default_rng(5)
    words = ["paris", "rome", "oslo", "bern", "lima", "cats", "dogs", "rain", "snow", "tea"]
    rows = []
    for s, quality in zip(names, (0.9, 0.6, 0.3)):
        for i in range(40):
            evidence = " ".join(rng.choice(words, 8))
            y = int(rng.random() < quality)
            claim = " ".join(evidence.split()[:4]) if y else " ".join(rng.choice(words, 4))
            rows.append({"id": f"{s}-{i}", "dataset": "gen", "claim": claim, "evidence": evidence, "label": y,
                         "model": s, "group": f"input-{i}" if shared else f"{s}-input-{i}"})
    path = tmp_path / "gen.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_systems_answering_different_inputs_get_the_caveat_when_scoring_a_file(tmp_path):
    """`systems DATA` scores the file (lexical, really run) and, with no input shared by every system, resamples
    within systems and says that input differences confound the ranking."""
    path = generated(tmp_path)
    code, stdout, err = run(["systems", str(path), "--system-col", "model", "--scorers", "lexical", "--no-cache",
                             "--n-boot", "200"])
    assert code == 0, err
    assert "inputs NOT shared" in stdout and "caveat: only 0 of 120 inputs are answered by every system" in stdout
    assert "confound the ranking" in stdout
    code, stdout, _ = run(["systems", str(path), "--system-col", "model", "--scorers", "lexical", "--no-cache",
                           "--n-boot", "200", "--json"])
    e = json.loads(stdout)["slices"][0]
    assert not e["design"]["paired"] and e["design"]["confounded"] and e["n_systems"] == 3
    assert e["agreement"][0]["tau"]["method"].startswith("within-system-inputs")


def test_systems_refuses_what_it_cannot_rank(tmp_path):
    rows = [{"id": f"r{i}", "dataset": "d", "claim": "a b c", "evidence": "a b" if i % 2 else "x y", "label": i % 2}
            for i in range(20)]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, _, err = run(["systems", str(path), "--scorers", "lexical", "--no-cache", "--quiet"])
    assert code == 2 and "--system-col" in err and len(err.strip().splitlines()) == 1
    out = tmp_path / "audit"
    assert run(["audit", str(path), "--scorers", "lexical", "--no-cache", "--n-boot", "30", "--n-perm", "30",
                "--out", str(out)])[0] == 0
    assert "systems" not in json.loads((out / "results.json").read_text())
    for argv in (["systems", "--results", str(out)], ["select", "--results", str(out), "--level", "system"]):
        code, _, err = run(argv)
        assert code == 2 and "--system-col" in err and len(err.strip().splitlines()) == 1


def test_a_wrong_type_in_the_saved_system_section_is_one_line_naming_the_key(audit, tmp_path):
    out, _ = audit
    copy = tmp_path / "typed"
    copy.mkdir()
    for name in ("results.json", "scores.parquet"):
        (copy / name).write_bytes((out / name).read_bytes())
    res = json.loads((copy / "results.json").read_text())
    assert saved_systems(res["systems"], "results.json").slices[0].statistics is not None  # as written: reads back
    res["systems"]["slices"][0]["design"] = None
    (copy / "results.json").write_text(json.dumps(res))
    code, _, err = run(["select", "--results", str(copy), "--level", "system"])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "results.json: key 'systems.slices[0].design': expected an object, got null" in err


def test_untrusted_system_settings_in_results_json_are_refused_in_one_line(audit, tmp_path):
    out, _ = audit
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("results.json", "scores.parquet"):
        (copy / name).write_bytes((out / name).read_bytes())
    res = json.loads((copy / "results.json").read_text())
    res["systems"]["resample"] = ["inputs", "everything"]
    (copy / "results.json").write_text(json.dumps(res))
    code, _, err = run(["systems", "--results", str(copy)])
    assert code == 2 and "system_resample" in err and len(err.strip().splitlines()) == 1


def test_system_names_are_data_in_the_report_and_its_plots(tmp_path):
    """Names holding Markdown or mathtext syntax are drawn literally (a `$` must not start TeX in a plot)."""
    names = ("$a$b|x", "*bold* [l](u)", "<i>c</i>")
    out = tmp_path / "audit"
    code, stdout, err = run(["audit", str(generated(tmp_path, names, shared=True)), "--system-col", "model",
                             "--scorers", "lexical", "--no-cache", "--n-boot", "50", "--n-perm", "30", "--quiet",
                             "--out", str(out), "--report"])
    assert code == 0, err
    e = json.loads((out / "results.json").read_text())["systems"]["slices"][0]
    assert e["design"]["paired"] and e["design"]["n_used"] == 40 and sorted(r["system"] for r in e["systems"]) == \
        sorted(names)
    md = (out / "report.md").read_text()
    assert r"$a$b\|x" in md and r"\*bold\* [l\](u)" in md and r"\<i>c\</i>" in md
    assert "&lt;i&gt;c&lt;/i&gt;" in (out / "report.html").read_text()


def test_the_renderers_read_the_records_alike_fresh_and_read_back_from_json():
    """A section as computed (NaN where a statistic is undefined) and as results.json reads it back (null → NaN, or
    None for a None-able field) gives the same pick, the same terminal text and the same JSON."""
    from attrib_audit.report.console import format_ranker, format_systems, format_systems_brief

    d = _two_slices()
    flat = {m: np.where(d["keys"] == "B", 0.5, x) for m, x in d["scores"].items()}  # every system ties on slice B
    fresh = systems_section(d["keys"], d["labels"], d["groups"], d["systems"], flat, [],
                            SystemSettings(n_boot=40, seed=2, level=0.95))
    back = saved_systems(json.loads(json.dumps(to_record(fresh), allow_nan=False)), "results.json")
    assert to_record(back) == to_record(fresh)
    a, b = back.slices
    assert b.statistics is not None and all(np.isnan(x.tau.estimate) for x in b.statistics.agreement)
    assert isinstance(a.thresholds["lexical"].threshold, float) and a.thresholds["lexical"].from_slices == ["B"]
    assert a.item_vs_system is not None and a.item_vs_system[0].auroc is None  # no AUROC rows given: None, not NaN
    for x, y in zip(fresh.slices, back.slices):
        assert to_record(pick_ranker(x)) == to_record(pick_ranker(y))
        assert format_ranker(pick_ranker(x)) == format_ranker(pick_ranker(y))
    assert pick_ranker(b).verdict == "no-recommendation" and "no candidate has a defined τ-b" in pick_ranker(b).caveat
    assert pick_ranker(a).metric in METRICS and pick_ranker(a).tau == a.statistics.agreement[
        [x.metric for x in a.statistics.agreement].index(pick_ranker(a).metric)].tau
    assert format_systems(back) == format_systems(fresh) and format_systems_brief(back) == format_systems_brief(fresh)
    assert "B (16 systems × 50 shared inputs): no recommendation" in format_systems_brief(back)
