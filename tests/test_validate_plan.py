"""`attrib-audit plan`: the simulation against Hanley–McNeil, against a direct loop, and end to end."""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest

from attrib_audit.cli import main
from attrib_audit.data.demo import demo_paths
from attrib_audit.stats import auroc
from attrib_audit.validate.plan import BinormalPopulation, EmpiricalPopulation, estimate_icc, hanley_mcneil_se, simulate


def test_simulated_half_width_matches_hanley_mcneil_where_its_formula_is_exact():
    """Exponential scores are the model Hanley–McNeil's Q1 = A/(2−A), Q2 = 2A²/(1+A) describe exactly."""
    rng = np.random.default_rng(0)
    y = (rng.random(40_000) < 0.3).astype(int)
    s = np.where(y == 1, rng.exponential(1.0, y.size), rng.exponential(1 / 3.0, y.size))  # A = 3/4
    pop = EmpiricalPopulation(s[None, :], y, prevalence=0.3)
    a = pop.true_aurocs()[0]
    assert a == pytest.approx(0.75, abs=0.01)
    n = 240
    row = simulate(pop, n, best=0, runner=None, m=1, icc=0.0, n_sims=80, n_boot=250, seed=1)
    hm = 1.96 * hanley_mcneil_se(a, 0.3 * n, 0.7 * n)
    assert row.half_width == pytest.approx(hm, rel=0.07)


def _pairwise_auroc(s, y):
    pos, neg = s[y == 1], s[y == 0]
    return ((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())


def test_vectorised_simulation_matches_a_direct_loop_over_resamples():
    """Same simulated samples; the oracle resamples clusters one at a time and counts pairs explicitly."""
    pop = BinormalPopulation((0.8, 0.72), prevalence=0.4, corr=0.5)
    n, m, icc, sims, boots = 160, 4, 0.3, 60, 200
    fast = simulate(pop, n, best=0, runner=1, m=m, icc=icc, n_sims=sims, n_boot=boots, seed=5)
    rng_data, rng_boot = np.random.default_rng([5, 0]), np.random.default_rng(99)  # simulate's samples, own resamples
    widths, hits = [], []
    for _ in range(sims):
        scores, y, groups = pop.draw(n, m, icc, rng_data)
        members = [np.flatnonzero(groups == g) for g in range(groups.max() + 1)]
        reps = np.empty((2, boots))
        for b in range(boots):
            rows = np.concatenate([members[g] for g in rng_boot.integers(0, len(members), len(members))])
            reps[:, b] = [_pairwise_auroc(scores[k, rows], y[rows]) for k in (0, 1)]
        lo, hi = np.quantile(reps[0], [0.025, 0.975])
        widths.append((hi - lo) / 2)
        hits.append(np.quantile(reps[0] - reps[1], 0.025) > 0)
    assert fast.half_width == pytest.approx(np.mean(widths), rel=0.05)
    assert fast.power == pytest.approx(np.mean(hits), abs=0.12)


def test_populations_keep_their_aurocs_and_cluster_correlation():
    pop = BinormalPopulation((0.8, 0.7), prevalence=0.3, corr=0.4)
    scores, y, groups = pop.draw(60_000, 5, 0.3, np.random.default_rng(2))
    assert [auroc(s, y) for s in scores] == pytest.approx([0.8, 0.7], abs=0.01)
    emp = EmpiricalPopulation(scores[:, :20_000], y[:20_000], prevalence=0.5)
    s2, y2, g2 = emp.draw(30_000, 6, 0.4, np.random.default_rng(3))
    assert y2.mean() == pytest.approx(0.5, abs=0.01)
    assert [auroc(s, y2) for s in s2] == pytest.approx(emp.true_aurocs(), abs=0.012)
    assert estimate_icc(s2, y2, g2) == pytest.approx(0.4, abs=0.08)
    shifted = emp.with_difference(0, 1, 0.05)
    assert shifted.true_aurocs()[0] - shifted.true_aurocs()[1] == pytest.approx(0.05, abs=1e-3)


def test_a_small_slice_gets_the_nearest_reachable_gap():
    """5 positives × 8 negatives: the runner-up's AUROC moves in steps of 1/40, so a gap of 0.06 (target 0.815)
    cannot be hit within 0.001; the shift lands on the nearest reachable AUROC (0.8125) instead of failing."""
    y = np.array([1] * 5 + [0] * 8)
    rng = np.random.default_rng(1)
    pop = EmpiricalPopulation(np.vstack([y * 1.5 + rng.normal(0, 1, 13), y * 0.5 + rng.normal(0, 1, 13)]), y, 0.4)
    assert pop.true_aurocs()[0] == 0.875 and pop.auroc_step() == pytest.approx(1 / 40)
    truth = pop.with_difference(0, 1, 0.06).true_aurocs()
    assert truth[1] == pytest.approx(0.8125) and truth[0] - truth[1] == pytest.approx(0.0625)
    assert pop.with_difference(0, 1, 0.05).true_aurocs()[1] == pytest.approx(0.825)  # reachable: hit exactly


def test_weighted_population_is_the_population_with_rows_repeated():
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1], 30)
    scores = np.vstack([y + rng.normal(0, 1, 60), y * 0.5 + rng.normal(0, 1, 60)])
    k = rng.integers(1, 5, 60)  # integer 1/π: each sampled row stands for k pool rows
    weighted = EmpiricalPopulation(scores, y, 0.4, weights=k.astype(float))
    repeated = EmpiricalPopulation(np.repeat(scores, k, axis=1), np.repeat(y, k), 0.4)
    assert weighted.true_aurocs() == pytest.approx(repeated.true_aurocs(), abs=1e-12)
    a, b = weighted.draw(500, 3, 0.2, np.random.default_rng(9)), repeated.draw(500, 3, 0.2, np.random.default_rng(9))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    shift_w, shift_r = weighted.with_difference(0, 1, 0.05), repeated.with_difference(0, 1, 0.05)
    assert shift_w.true_aurocs() == pytest.approx(shift_r.true_aurocs(), abs=1e-6)


def run(*argv) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(list(argv))
    return code, buf.getvalue()


def test_plan_from_assumptions_prints_table_recommendation_and_hanley_mcneil():
    code, out = run("plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.06", "--detect", "0.1",
                    "--grid", "100,250,400", "--sims", "25", "--n-boot", "120")
    assert code == 0
    assert "n pairs" in out and "power(metric1 > metric2)" in out
    rec = int(out.split("recommendation: label ")[1].split()[0])
    assert rec in (250, 400)
    assert "Hanley–McNeil" in out


def test_plan_from_an_audit_folder(tmp_path):
    """A real lexical audit of the demo file, then plan from its score distribution and clusters."""
    folder = tmp_path / "audit"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["audit", str(demo_paths()[0]), "--scorers", "lexical", "--n-boot", "50", "--n-perm", "50",
                     "--no-cache", "--quiet", "--out", str(folder)]) == 0
    code, out = run("plan", "--results", str(folder), "--half-width", "0.08", "--grid", "100,300,600", "--sims", "30",
                    "--n-boot", "100")
    assert code == 0 and "slice attributionbench" in out and "best metric lexical" in out
    assert "recommendation:" in out and "intra-cluster correlation" in out
    # --detect needs a runner-up: add a second metric to the audit's scores and compare
    frame = pd.read_parquet(folder / "scores.parquet")
    frame["noisy"] = frame["lexical"] + np.random.default_rng(0).normal(0, 0.2, len(frame))
    frame.to_parquet(folder / "scores.parquet")
    res = json.loads((folder / "results.json").read_text())
    res["scorers"].append({**res["scorers"][0], "scorer": "noisy"})
    (folder / "results.json").write_text(json.dumps(res))
    code, out = run("plan", "--results", str(folder), "--detect", "0.05", "--grid", "200,2000", "--sims", "30",
                    "--n-boot", "100", "--icc", "0.2", "--pairs-per-cluster", "3")
    assert code == 0 and "shifted to AUROC" in out and "power(" in out and "3 pairs per cluster" in out
    # a small slice (5 supported, 8 not): its AUROC moves in steps of 1/40, so 0.06 is not a reachable gap; the plan
    # uses the nearest reachable one and says so instead of stopping
    sl = frame["slice"].astype(str).iloc[0]
    part = frame[frame["slice"].astype(str) == sl]
    small = pd.concat([part[part["label"] == 1].head(5), part[part["label"] == 0].head(8)])
    small.to_parquet(folder / "scores.parquet")
    code, out = run("plan", "--results", str(folder), "--slice", sl, "--detect", "0.06", "--grid", "100",
                    "--sims", "10", "--n-boot", "50")
    gap = float(out.split("so the true gap is ")[1].split(",")[0])
    assert code == 0 and "the nearest to --detect 0.06 on this slice (its AUROC moves in steps of 0.0250)" in out
    assert gap != 0.06 and abs(gap - 0.06) <= 0.0125 and f"to show a {gap} AUROC gap" in out


@pytest.mark.parametrize("argv, message", [
    (["plan", "--auroc", "0.8", "--prevalence", "0.3"], "give a target"),
    (["plan", "--auroc", "0.8", "--half-width", "0.05"], "needs --prevalence"),
    (["plan", "--half-width", "0.05"], "either --results"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--detect", "0.4"], "must be in"),  # the runner-up's 0.4
])
def test_plan_input_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("attrib-audit plan: ") and message in err and err.count("\n") == 1


def test_library_errors_are_exceptions_not_exits():
    from attrib_audit.errors import UsageError
    from attrib_audit.validate.plan import EmpiricalPopulation

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    pop = EmpiricalPopulation(np.vstack([y + rng.normal(0, 1, 200), rng.normal(0, 1, 200)]), y, 0.5)
    with pytest.raises(UsageError, match="puts the runner-up's AUROC at"):
        pop.with_difference(0, 1, 2.0)


def test_plan_never_asks_for_more_than_the_pool_and_says_when_it_is_out_of_reach():
    from attrib_audit.report.console import format_plan
    from attrib_audit.validate.plan import PlanOptions, fpc, plan

    assert fpc(150, 150) == 0.0 and abs(fpc(50, 150) - ((100 / 149) ** 0.5)) < 1e-12
    opts = PlanOptions(auroc=(0.7,), prevalence=0.3, half_width=0.05, sims=20, n_boot=100, pool=150)
    (p,) = plan(opts)
    assert [r.n for r in p.rows] == [50, 100, 150] and p.recommended_n is None
    assert p.rows[-1].half_width_pool == 0.0
    text = format_plan(p)
    assert "out of reach: even labelling the whole pool of 150 pairs" in text and "label 500" not in text
    (easy,) = plan(PlanOptions(auroc=(0.7,), prevalence=0.3, half_width=0.2, sims=20, n_boot=100, pool=150))
    assert easy.recommended_n is not None and easy.recommended_n <= 150


def test_gate_plan_pool_reach_gives_the_best_bound_the_whole_pool_can_certify():
    import numpy as np

    from attrib_audit.stats.threshold import Target, certify, fewest_labels, risk_upper_bound
    from attrib_audit.stats.types import LabelledScores
    from attrib_audit.validate.plan import pool_reach

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    data = LabelledScores(rng.normal(size=60) + 2.0 * y, y)
    t = Target("false_pass", 0.05)
    cert = certify(data, t, 0.1, unit="pair")
    need = fewest_labels(data, cert)
    assert cert.threshold is None and need.labels_needed > 100
    r = pool_reach(need, t, 0.1, cert.p_value_method, data.n, 100)
    assert not r.reachable and r.labels == 100
    units = need.units_at_hand * 100 / 60
    assert r.bound_with_pool == float(risk_upper_bound(need.risk, units, 0.1, "binomial")[0]) > 0.05
    assert pool_reach(need, t, 0.1, cert.p_value_method, data.n, 10 ** 6).reachable


def test_plan_without_a_pool_says_its_sizes_are_not_capped(capsys):
    """`plan --auroc 0.7` asked a 150-pair team for 500 labels without a word about the pool it ignored."""
    argv = ["plan", "--auroc", "0.7", "--prevalence", "0.3", "--half-width", "0.05", "--sims", "20", "--n-boot", "100",
            "--grid", "100,200,400,600"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "recommendation: label 600 pairs" in out or "more than 600" in out
    assert out.rstrip().endswith("sizes not capped: no --pool given. With fewer pairs to label than this asks for, "
                                 "--pool N|FILE caps the plan at them and says what they can reach")
    assert main(argv + ["--pool", "150"]) == 0
    out = capsys.readouterr().out
    assert "not capped" not in out and "the pool holds 150 pairs" in out
