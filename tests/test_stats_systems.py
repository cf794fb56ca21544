"""System-level agreement: known answers from scipy and plain loops on real SummEval scores, the joint
input bootstrap against a loop over the same draws, CI coverage in a simulated population, reversals,
significance clusters and the design for inputs not shared by all systems."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from scipy.stats import norm

from attrib_audit.files.records import to_record
from attrib_audit.stats.classification import best_threshold
from attrib_audit.stats.means import bootstrap_means
from attrib_audit.stats.systems import (
    agreement_differences,
    agreement_replicates,
    agreement_stats,
    human_ceiling,
    pair_differences,
    percentile_cis,
    rank_agreement,
    reversals,
    significance_clusters,
    summarise_systems,
    system_bootstrap,
    system_rows,
)

DATA = Path(__file__).parent / "data" / "summeval_system_scores.jsonl"
METRICS = ("lexical", "minilm", "blend", "bertscore")


@pytest.fixture(scope="module")
def summeval() -> dict:
    """SummEval's 16 systems × 100 articles: labels and four real scores (see tests/data/NOTICE.md)."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    out = {key: np.array([r[key] for r in rows]) for key in ("system", "group", "label", *METRICS)}
    assert out["label"].size == 1600 and np.unique(out["system"]).size == 16 and np.unique(out["group"]).size == 100
    return out


def _subset(data: dict, mask: np.ndarray) -> dict:
    return {key: value[mask] for key, value in data.items()}


# ---- plain-loop references --------------------------------------------------------------------------------------

def loop_rates(systems, values) -> dict[str, float]:
    """Mean of `values` per system over its finite rows, one row at a time."""
    sums, counts = {}, {}
    for s, v in zip(systems, values):
        if np.isfinite(v):
            sums[s] = sums.get(s, 0.0) + float(v)
            counts[s] = counts.get(s, 0) + 1
    return {s: sums[s] / counts[s] for s in sums}


def loop_pairwise(h, x, same_system=None) -> tuple[float, float]:
    """(pairwise accuracy, acc_eq) over position pairs, skipping pairs of a system with its own copy."""
    right = ordered = right_eq = pairs = 0.0
    for a in range(len(h)):
        for b in range(a + 1, len(h)):
            if same_system is not None and same_system[a] == same_system[b]:
                continue
            sh, sx = np.sign(h[a] - h[b]), np.sign(x[a] - x[b])
            pairs += 1
            right_eq += sh == sx
            if sh != 0:
                ordered += 1
                right += 1.0 if sx == sh else 0.5 if sx == 0 else 0.0
    return (right / ordered if ordered else np.nan), right_eq / pairs


def _check_agreement(stats: dict, q: int, b: int, h, x, same_system=None) -> None:
    """Undefined statistics (all humans tied, a constant side) are NaN on both sides."""
    acc, acc_eq = loop_pairwise(h, x, same_system)
    with np.errstate(invalid="ignore", divide="ignore"):
        pearson = np.nan if np.ptp(h) == 0 or np.ptp(x) == 0 else sps.pearsonr(h, x).statistic
    expected = (sps.kendalltau(h, x).statistic, acc, acc_eq, pearson)
    got = [stats[key][q, b] for key in ("tau", "pairwise_accuracy", "acc_eq", "pearson")]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10, equal_nan=True)


# ---- known answers on real scores -------------------------------------------------------------------------------

def test_point_statistics_match_scipy_and_loops_on_summeval(summeval):
    # the pass threshold is chosen on other rows (the first 50 articles), the statistics use the other 50
    groups = np.unique(summeval["group"])
    train = np.isin(summeval["group"], groups[:50])
    thresholds = {m: best_threshold(summeval[m][train], summeval["label"][train])[0] for m in ("lexical", "minilm")}
    d = _subset(summeval, ~train)
    res = system_bootstrap(d["label"], {m: d[m] for m in METRICS}, d["system"], d["group"], thresholds=thresholds,
                           n_boot=50, rng=0)
    names = sorted(set(d["system"].tolist()))
    assert list(res.systems) == names
    human = loop_rates(d["system"], d["label"])
    h = np.array([human[s] for s in names])
    np.testing.assert_allclose(res.point[0], h, rtol=1e-12)
    for summary, metrics in (("mean", METRICS), ("pass", ("lexical", "minilm"))):
        agr = agreement_replicates(res, summary, metrics)
        for q, m in enumerate(metrics):
            values = d[m] if summary == "mean" else (d[m] >= thresholds[m]).astype(float)
            per_system = loop_rates(d["system"], values)
            x = np.array([per_system[s] for s in names])
            np.testing.assert_allclose(res.point[res.row(m, summary)], x, rtol=1e-12)
            _check_agreement({k: v[:, None] for k, v in agr.point.items()}, q, 0, h, x)
    assert agr.human_ties == sum(h[a] == h[b] for a in range(16) for b in range(a + 1, 16)) > 0  # ties do occur


def test_agreement_with_ties_in_both_matches_the_loop():
    rng = np.random.default_rng(3)
    for _ in range(20):
        h = rng.integers(0, 4, 9) / 4  # many human ties
        x = rng.integers(0, 3, (3, 9)) / 2  # and metric ties
        stats = agreement_stats(h[:, None], x[:, :, None])
        for q in range(3):
            if np.ptp(h) == 0 or np.ptp(x[q]) == 0:
                assert np.isnan(stats["tau"][q, 0])
                continue
            _check_agreement(stats, q, 0, h, x[q])


# ---- the bootstrap against a loop over the same draws ---------------------------------------------------------

def _loop_replicates(d: dict, metrics, thresholds, draws: np.ndarray) -> np.ndarray:
    """(V, S, B) per-system values, rebuilding each resample's rows from its drawn inputs (sorted-id codes)."""
    groups = np.unique(d["group"])
    systems = np.unique(d["system"])
    out = []
    for drawn in draws:
        rows = np.concatenate([np.flatnonzero(d["group"] == groups[g]) for g in drawn])
        values = [d["label"][rows]] + [d[m][rows] for m in metrics] + \
                 [(d[m][rows] >= thresholds[m]).astype(float) for m in metrics]
        out.append([[loop_rates(d["system"][rows], v)[s] for s in systems] for v in values])
    return np.moveaxis(np.array(out), 0, -1)


@pytest.mark.parametrize("resample", [("inputs",), ("systems", "inputs")])
def test_joint_input_bootstrap_equals_a_plain_loop(summeval, resample):
    keep = np.isin(summeval["system"], ["M0", "M5", "M11", "M17", "M20", "M22"]) & \
        np.isin(summeval["group"], np.unique(summeval["group"])[:40])
    d = _subset(summeval, keep)
    metrics, thresholds = ("lexical", "bertscore"), {"lexical": 0.15, "bertscore": 0.7}
    n_boot, seed = 60, 11
    res = system_bootstrap(d["label"], {m: d[m] for m in metrics}, d["system"], d["group"], thresholds=thresholds,
                           resample=resample, n_boot=n_boot, rng=seed)
    rng = np.random.default_rng(seed)  # the documented draws: inputs first, then systems
    input_draws = rng.integers(0, 40, size=(n_boot, 40))
    expected = _loop_replicates(d, metrics, thresholds, input_draws)
    np.testing.assert_allclose(res.replicates, expected, rtol=1e-12)
    agr = agreement_replicates(res, "mean")
    if resample == ("inputs",):
        assert res.system_weights is None
        system_draws = np.tile(np.arange(6), (n_boot, 1))
    else:
        system_draws = rng.integers(0, 6, size=(n_boot, 6))
        assert res.system_weights.sum(axis=0).tolist() == [6.0] * n_boot
    for b in range(n_boot):
        idx = system_draws[b]
        if np.unique(idx).size < 2:
            continue
        h = expected[0, idx, b]
        for q in range(2):
            _check_agreement(agr.replicates, q, b, h, expected[1 + q, idx, b], same_system=idx)
        observed = res.point[0][idx]  # the ceiling: resampled human rates against the observed ones
        acc, acc_eq = loop_pairwise(h, observed, idx)
        np.testing.assert_allclose([agr.ceiling[k][b] for k in ("tau", "pairwise_accuracy", "acc_eq")],
                                   [sps.kendalltau(h, observed).statistic, acc, acc_eq], atol=1e-12, equal_nan=True)


def test_within_system_bootstrap_equals_a_loop_and_carries_the_caveat(summeval):
    # each system answers its own articles: article k goes to systems k mod 3 and (k + 1) mod 3 only
    systems = ["M0", "M11", "M22"]
    groups = np.unique(summeval["group"])[:30]
    owner = {g: {systems[k % 3], systems[(k + 1) % 3]} for k, g in enumerate(groups)}
    keep = np.array([g in owner and s in owner[g] for s, g in zip(summeval["system"], summeval["group"])])
    d = _subset(summeval, keep)
    res = system_bootstrap(d["label"], {"lexical": d["lexical"]}, d["system"], d["group"], n_boot=40, rng=5)
    assert not res.design.paired and res.design.confounded and res.design.n_shared == 0
    assert "confound" in res.design.caveat and res.design.rows_dropped == 0 and res.design.n_used == 30
    assert res.n_inputs.tolist() == [20, 20, 20]
    rng = np.random.default_rng(5)
    draws = rng.integers(0, res.n_inputs[None, :, None], size=(40, 3, 20))
    for b in range(40):
        for s, name in enumerate(systems):
            answered = [g for g in groups if name in owner[g]]  # in sorted-id order
            rows = np.concatenate([np.flatnonzero((d["group"] == answered[k]) & (d["system"] == name))
                                   for k in draws[b, s]])
            assert res.replicates[0, s, b] == pytest.approx(d["label"][rows].mean(), abs=1e-12)
            assert res.replicates[1, s, b] == pytest.approx(d["lexical"][rows].mean(), abs=1e-12)


def test_system_rates_share_the_draws_of_bootstrap_means(summeval):
    res = system_bootstrap(summeval["label"], {}, summeval["system"], summeval["group"], n_boot=300, rng=9)
    for s in (0, 7, 15):
        rows = summeval["system"] == res.systems[s]
        ref = bootstrap_means(summeval["label"][rows].astype(float), summeval["group"][rows], n_boot=300, rng=9)
        np.testing.assert_allclose(res.replicates[0, s], ref.replicates[0], rtol=1e-12)


def test_percentile_cis_match_percentile_ci_row_by_row():
    from attrib_audit.stats.bootstrap import percentile_ci

    x = np.random.default_rng(0).normal(size=(5, 3, 101))
    x[1, 2, :7] = np.nan
    lo, hi, dropped = percentile_cis(x, 0.9)
    for a in range(5):
        for b in range(3):
            assert (lo[a, b], hi[a, b], dropped[a, b]) == pytest.approx(percentile_ci(x[a, b], 0.9))


# ---- inputs not shared by every system --------------------------------------------------------------------------

def test_enough_shared_inputs_are_used_and_counted(summeval):
    late = np.isin(summeval["group"], np.unique(summeval["group"])[80:])
    keep = ~(late & (summeval["system"] == "M5"))  # M5 skips 20 articles
    d = _subset(summeval, keep)
    res = system_bootstrap(d["label"], {"lexical": d["lexical"]}, d["system"], d["group"], n_boot=20, rng=0)
    design = res.design
    assert (design.paired, design.confounded, design.n_inputs, design.n_shared, design.n_used) == \
        (True, False, 100, 80, 80)
    assert design.rows_dropped == 15 * 20 and design.rows_used == 16 * 80
    few = system_bootstrap(d["label"], {"lexical": d["lexical"]}, d["system"], d["group"], n_boot=20, rng=0,
                           min_shared=81)
    assert few.design.confounded and few.design.n_shared == 80 and few.design.n_used == 100


# ---- coverage in a simulated population -------------------------------------------------------------------------

class Population:
    """8 systems with known pass rates on inputs of shared difficulty, and two metrics of known quality.

    Labels: y = [a_s + z_k + e > 0] with z_k ~ N(0, 0.8²) shared by all systems, so P(y = 1) = p_s.
    "biased" = y + b_s + 0.5 u_k + e' (system biases b_s mis-rank some pairs); "noisy" = 0.5 y + 0.5 u_k + 1.5 e'
    (ranks systems exactly in the population, but noisily). u_k is a second input effect.
    """

    S, K, SZ, GAMMA = 8, 100, 0.8, 0.5
    p = np.linspace(0.3, 0.95, 8)
    bias = np.random.default_rng(5).normal(0.0, 0.15, 8)
    threshold = 0.5

    def __init__(self) -> None:
        self.a = norm.ppf(self.p) * np.sqrt(1 + self.SZ ** 2)
        sd = np.sqrt(1 + self.GAMMA ** 2)
        self.mean = {"biased": self.p + self.bias, "noisy": 0.5 * self.p}
        self.pass_rate = {
            "biased": self.p * norm.cdf((1 + self.bias - self.threshold) / sd)
            + (1 - self.p) * norm.cdf((self.bias - self.threshold) / sd),
            "noisy": self.p * norm.cdf((0.5 - self.threshold) / np.sqrt(0.25 + 2.25))
            + (1 - self.p) * norm.cdf(-self.threshold / np.sqrt(0.25 + 2.25)),
        }

    def draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        z = rng.normal(0, self.SZ, (n, 1, self.K))
        u = rng.normal(0, 1, (n, 1, self.K))
        y = (self.a[None, :, None] + z + rng.normal(0, 1, (n, self.S, self.K)) > 0).astype(float)
        scores = {"biased": y + self.bias[None, :, None] + self.GAMMA * u + rng.normal(0, 1, y.shape),
                  "noisy": 0.5 * y + self.GAMMA * u + 1.5 * rng.normal(0, 1, y.shape)}
        return y, scores


def test_ci_coverage_in_a_population_with_known_rates_and_metric_quality():
    pop = Population()
    # Targets. Per system: the known rates, means and pass rates. Agreement: its expectation at K inputs per
    # system (see the module docstring), by Monte Carlo; the ceiling: the same for a metric equal to the true rates.
    y, scores = pop.draw(np.random.default_rng(12345), 3000)
    h = y.mean(axis=2).T
    x = np.stack([scores[m].mean(axis=2).T for m in ("biased", "noisy")])
    at_k = {key: v.mean(axis=1) for key, v in agreement_stats(h, x).items()}
    exact = np.broadcast_to(pop.p[None, :, None], (1, *h.shape))
    ceil = {key: v.mean() for key, v in agreement_stats(h, exact).items()}
    systems = np.repeat(np.arange(pop.S), pop.K).astype(str)
    groups = np.tile(np.arange(pop.K), pop.S).astype(str)
    hits: dict[str, list[bool]] = {}
    noise_free: list[bool] = []
    rng = np.random.default_rng(2024)
    n_sim = 200
    for sim in range(n_sim):
        y, scores = pop.draw(rng, 1)
        res = system_bootstrap(y.ravel(), {m: v.ravel() for m, v in scores.items()}, systems, groups,
                               thresholds={"biased": pop.threshold, "noisy": pop.threshold}, n_boot=400, rng=sim)
        for row in system_rows(res):
            s = int(row.system)
            hits.setdefault("human rate", []).append(row.human.ci_low <= pop.p[s] <= row.human.ci_high)
            for m in ("biased", "noisy"):
                hits.setdefault("metric mean", []).append(row.mean[m].ci_low <= pop.mean[m][s] <= row.mean[m].ci_high)
                hits.setdefault("metric pass rate", []).append(
                    row.pass_rate[m].ci_low <= pop.pass_rate[m][s] <= row.pass_rate[m].ci_high)
        agr = agreement_replicates(res, "mean")
        for q, ra in enumerate(rank_agreement(agr)):
            for key in ("tau", "pairwise_accuracy", "acc_eq", "pearson"):
                e = getattr(ra, key)
                hits.setdefault(f"{key} at K ({ra.metric})", []).append(e.ci_low <= at_k[key][q] <= e.ci_high)
            if ra.metric == "noisy":  # it ranks the population exactly: noise-free τ = 1
                noise_free.append(ra.tau.ci_high >= 1.0)
        diff = agreement_differences(agr)[0]
        hits.setdefault("tau difference at K", []).append(
            diff.tau.ci_low <= at_k["tau"][0] - at_k["tau"][1] <= diff.tau.ci_high)
        for key, e in human_ceiling(agr).items():
            hits.setdefault(f"ceiling {key}", []).append(e.ci_low <= ceil[key] <= e.ci_high)
        d = pair_differences(res)
        truth = pop.p[d.i] - pop.p[d.j]
        hits.setdefault("human pair difference", []).extend(((d.low <= truth) & (truth <= d.high)).tolist())
    coverage = {key: float(np.mean(v)) for key, v in hits.items()}
    assert len(hits["tau at K (biased)"]) == n_sim
    assert min(coverage.values()) >= 0.9, sorted(coverage.items())
    # why agreement is stated at K inputs: the noise-free value of a perfect but noisy ranker is out of reach
    assert np.mean(noise_free) < 0.5


# ---- reversals, clusters, metric vs metric ---------------------------------------------------------------------

def _planted(rng: np.random.Generator, k: int = 300) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """Systems A–D on k shared inputs; the `flattering` metric adds 0.9 to B's scores and 0.4 to D's."""
    rates = {"A": 0.9, "B": 0.5, "C": 0.7, "D": 0.7}
    systems = np.repeat(list(rates), k)
    groups = np.tile(np.arange(k), len(rates)).astype(str)
    y = (rng.random(systems.size) < np.array([rates[s] for s in systems])).astype(float)
    noise = rng.normal(0, 0.3, y.size)
    flattering = y + 0.9 * (systems == "B") + 0.4 * (systems == "D") + noise
    scores = {"label": y.copy(), "flattering": flattering, "honest": y + noise}
    return y, systems, groups, scores


def test_a_planted_reversal_is_found_and_none_for_the_label_itself():
    y, systems, groups, scores = _planted(np.random.default_rng(1))
    res = system_bootstrap(y, scores, systems, groups, n_boot=1000, rng=3)
    found = reversals(res, "flattering")
    # population means of the metric: A 0.9, B 1.4, C 0.7, D 1.1; humans: A 0.9 > C = D 0.7 > B 0.5.
    # C vs D is no reversal: the metric prefers D, but humans cannot tell them apart.
    assert {(r.human_prefers, r.metric_prefers) for r in found} == {("A", "B"), ("C", "B"), ("D", "B"), ("A", "D")}
    assert found[0].human_prefers == "A" and found[0].metric_prefers == "B"  # the largest human difference first
    for r in found:
        assert r.human_difference.ci_low > 0 and r.metric_difference.ci_high < 0
        a, b = systems == r.human_prefers, systems == r.metric_prefers
        assert r.human_difference.estimate == pytest.approx(y[a].mean() - y[b].mean())
        m = scores["flattering"]
        assert r.metric_difference.estimate == pytest.approx(m[a].mean() - m[b].mean())
    assert reversals(res, "label") == [] and reversals(res, "honest") == []
    assert all(reversals(res, m, level=0.5) == [] for m in ("label", "honest"))  # even at a lax level
    label = rank_agreement(agreement_replicates(res, "mean", ["label"]))[0]
    assert (label.tau.estimate, label.pairwise_accuracy.estimate, label.acc_eq.estimate) == (1.0, 1.0, 1.0)
    assert (label.tau.ci_low, label.pairwise_accuracy.ci_low, label.acc_eq.ci_low) == (1.0, 1.0, 1.0)


def test_reversals_and_clusters_on_summeval_lexical(summeval):
    res = system_bootstrap(summeval["label"], {"lexical": summeval["lexical"], "label": summeval["label"]},
                           summeval["system"], summeval["group"], n_boot=1000, rng=0)
    found = reversals(res, "lexical")
    assert found and all(r.human_difference.ci_low > 0 > r.metric_difference.ci_high for r in found)
    assert reversals(res, "label") == []
    clusters = significance_clusters(res)
    assert sum(len(c) for c in clusters.clusters) == 16 and clusters.order[0] == "M5"
    assert clusters.clusters[-1] == ("M20", "M11")  # the two systems humans rate lowest stand apart
    assert 0 < clusters.share_resolved < 1
    for better, worse in clusters.resolved:
        assert clusters.values[clusters.order.index(better)] > clusters.values[clusters.order.index(worse)]


def test_significance_clusters_cut_where_every_system_above_beats_every_system_below():
    rng = np.random.default_rng(0)
    rates = {"A": 0.95, "B": 0.93, "C": 0.6, "D": 0.58, "E": 0.2}
    k = 400
    systems = np.repeat(list(rates), k)
    y = (rng.random(systems.size) < np.array([rates[s] for s in systems])).astype(float)
    res = system_bootstrap(y, {}, systems, np.tile(np.arange(k), 5), n_boot=1000, rng=1)
    sc = significance_clusters(res)
    assert [set(c) for c in sc.clusters] == [{"A", "B"}, {"C", "D"}, {"E"}]
    assert len(sc.resolved) == 8  # every pair across clusters, none within
    labels_only = summarise_systems(res)  # no metric: the per-system table, the ceiling and the clusters
    assert labels_only.agreement == [] and labels_only.human_clusters == sc
    assert labels_only.ceiling["tau"].ci_high == 1.0 and labels_only.ceiling["tau"].estimate > 0.6


def test_metric_vs_metric_difference_is_paired():
    y, systems, groups, scores = _planted(np.random.default_rng(4))
    res = system_bootstrap(y, scores, systems, groups, n_boot=1000, rng=2)
    agr = agreement_replicates(res, "mean")
    diffs = {(d.metric_a, d.metric_b): d for d in agreement_differences(agr)}
    assert set(diffs) == {("label", "flattering"), ("label", "honest"), ("flattering", "honest")}
    assert diffs[("label", "flattering")].tau.ci_low > 0
    same = agreement_differences(agr, pairs=[("honest", "honest")])[0]
    assert (same.tau.estimate, same.tau.ci_low, same.tau.ci_high) == (0.0, 0.0, 0.0)
    assert same.tau.method.startswith("paired-")


def test_summarise_systems_is_reproducible_and_serialisable(summeval):
    args = (summeval["label"], {m: summeval[m] for m in METRICS}, summeval["system"], summeval["group"])
    kwargs = dict(thresholds={"lexical": 0.12}, n_boot=200)
    a = summarise_systems(system_bootstrap(*args, rng=7, **kwargs))
    b = summarise_systems(system_bootstrap(*args, rng=np.random.default_rng(7), **kwargs))
    assert json.dumps(to_record(a)) == json.dumps(to_record(b))
    out = to_record(a)
    assert [(x["metric"], x["summary"]) for x in out["agreement"]] == [(m, "mean") for m in METRICS] + \
        [("lexical", "pass")]
    assert len(out["differences"]) == 6 and out["design"]["n_used"] == 100 and not out["design"]["confounded"]
    assert set(out["ceiling"]) == {"tau", "pairwise_accuracy", "acc_eq"}
    assert {r["summary"] for r in out["reversals"]} <= {"mean", "pass"}
    assert len(out["systems"]) == 16 and set(out["systems"][0]["pass_rate"]) == {"lexical"}


def test_nan_scores_are_left_out_of_that_metric_only():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=float)
    systems = np.array(["a"] * 4 + ["b"] * 4)
    groups = np.tile(["g1", "g2", "g3", "g4"], 2)
    score = np.array([0.9, np.nan, 0.7, 0.8, 0.1, 0.2, np.nan, 0.3])
    res = system_bootstrap(y, {"m": score}, systems, groups, thresholds={"m": 0.5}, n_boot=50, rng=0)
    rows = system_rows(res)
    assert rows[0].mean["m"].estimate == pytest.approx(0.8) and rows[0].mean["m"].n == 3
    assert rows[1].pass_rate["m"].estimate == 0.0 and rows[1].human.n == 4
    assert rows[0].human.estimate == 0.75


def test_bad_input_gets_a_clear_error():
    y, s, g = np.array([1, 0, 1, 0]), ["a", "a", "b", "b"], ["x", "y", "x", "y"]
    with pytest.raises(ValueError, match="0/1"):
        system_bootstrap(np.array([1, 2, 0, 1]), {}, s, g)
    with pytest.raises(ValueError, match="at least 2 systems"):
        system_bootstrap(y, {}, ["a"] * 4, g)
    with pytest.raises(ValueError, match="resample"):
        system_bootstrap(y, {}, s, g, resample=("systems",))
    with pytest.raises(ValueError, match="unknown metrics"):
        system_bootstrap(y, {"m": [0.1] * 4}, s, g, thresholds={"other": 0.5})
    with pytest.raises(ValueError, match="3 entries for 4 rows"):
        system_bootstrap(y, {}, s[:3], g)
    res = system_bootstrap(y, {"m": [0.1, 0.2, 0.3, 0.4]}, s, g, n_boot=10)
    with pytest.raises(ValueError, match="no threshold"):
        res.row("m", "pass")
    with pytest.raises(ValueError, match="unknown metric"):
        reversals(res, "nope")
