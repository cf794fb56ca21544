"""Deployable thresholds: Learn-then-Test's guarantee by simulation, exact bounds against scipy, rates against
sklearn's sample_weight, and the transfer matrix, cross-fitting and labels needed against plain loops."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.special import ndtr
from sklearn.metrics import confusion_matrix, precision_score, recall_score

from attrib_audit.files.records import to_record
from attrib_audit.stats.bootstrap import cluster_count_blocks, cluster_sum_replicates, group_folds
from attrib_audit.stats.threshold import (
    Target,
    binomial_pvalue,
    certify,
    clopper_pearson,
    cross_fit,
    fewest_labels,
    gate_rates,
    hoeffding_bentkus_pvalue,
    label_need,
    make_target,
    naive_threshold,
    risk_upper_bound,
    slice_thresholds,
    transfer_matrix,
    units_needed,
    units_needed_without_failures,
)
from attrib_audit.stats.types import LabelledScores

FP10 = Target("false_pass", 0.1)
MU = 2.0  # supported scores ~ N(MU, 1), unsupported ~ N(0, 1)


def true_false_pass(t: float) -> float:
    return float(1.0 - ndtr(t))


def true_precision_risk(t: float) -> float:  # prevalence 1/2
    fp, tp = 1.0 - ndtr(t), 1.0 - ndtr(t - MU)
    return float(fp / (fp + tp))


def draw(rng, n, m=1, icc=0.0):
    """n pairs in groups of m; a group shares a score shift (intra-cluster correlation icc), labels independent of
    it."""
    y = (rng.random(n) < 0.5).astype(np.int64)
    g = np.arange(n) // m
    shift = rng.standard_normal(int(g[-1]) + 1)[g]
    return MU * y + np.sqrt(icc) * shift + np.sqrt(1.0 - icc) * rng.standard_normal(n), y, g


def exceedance(target, risk_of, n_draws=500, n=200, m=1, icc=0.0, unit="auto", seed=0):
    """(certified, naive) share of calibration draws whose threshold's TRUE risk is above the target, and certified
    count."""
    rng = np.random.default_rng(seed)
    cert_bad = naive_bad = certified = 0
    for _ in range(n_draws):
        s, y, g = draw(rng, n, m, icc)
        data = LabelledScores(s, y, g if m > 1 else None)
        c, v = certify(data, target, 0.1, unit=unit), naive_threshold(data, target)
        certified += c.certified
        cert_bad += c.certified and risk_of(c.threshold) > target.alpha
        naive_bad += v.threshold is not None and risk_of(v.threshold) > target.alpha
    return cert_bad / n_draws, naive_bad / n_draws, certified


def test_certified_false_pass_exceeds_the_target_in_at_most_delta_of_draws_and_the_naive_far_more():
    cert, naive, certified = exceedance(FP10, true_false_pass, n_draws=600)
    print(f"\nfalse-pass ≤ 0.1, delta 0.1, 600 draws of 200 pairs: certified exceeds in {cert:.3f}, "
          f"naive in {naive:.3f}")
    assert certified == 600
    assert cert <= 0.1
    assert naive >= 0.4  # the in-sample threshold sits on the target: about half its draws are above it


def test_certified_precision_keeps_the_guarantee_conditioning_on_the_passed_set():
    target = Target("precision", 0.9)
    cert, naive, certified = exceedance(target, true_precision_risk, n_draws=500)
    print(f"\nprecision ≥ 0.9: certified exceeds in {cert:.3f} ({certified}/500 certified), naive in {naive:.3f}")
    assert certified >= 300 and cert <= 0.1 and naive >= 0.4


def test_clustered_data_needs_the_group_unit():
    """Groups of 10 sharing a score shift: treating pairs as exchangeable breaks the guarantee; groups keep it."""
    group, naive, _ = exceedance(FP10, true_false_pass, n_draws=500, n=600, m=10, icc=0.5, unit="group", seed=1)
    pair, _, _ = exceedance(FP10, true_false_pass, n_draws=500, n=600, m=10, icc=0.5, unit="pair", seed=1)
    print(f"\nclustered (60 groups of 10, icc 0.5): group unit exceeds in {group:.3f}, pair unit in {pair:.3f}, "
          f"naive in {naive:.3f}")
    assert group <= 0.1 < pair
    assert naive >= 0.4


def test_weights_keep_the_guarantee_for_the_pool_an_informative_sample_was_drawn_from():
    """Pairs scoring ≥ 1 are sampled 5× less often: unweighted, the sample hides false passes; 1/π restores them."""
    rng = np.random.default_rng(3)
    weighted_bad = unweighted_bad = 0
    for _ in range(500):
        s, y, _ = draw(rng, 4000)
        pi = np.where(s < 1.0, 0.2, 0.04)
        take = rng.random(s.size) < pi
        w_cert = certify(LabelledScores(s[take], y[take], weights=1.0 / pi[take]), FP10, 0.1)
        u_cert = certify(LabelledScores(s[take], y[take]), FP10, 0.1)
        weighted_bad += true_false_pass(w_cert.threshold) > 0.1
        unweighted_bad += true_false_pass(u_cert.threshold) > 0.1
    print(f"\ninformative sample: weighted certificate exceeds in {weighted_bad / 500:.3f}, unweighted in "
          f"{unweighted_bad / 500:.3f}")
    assert weighted_bad / 500 <= 0.1 and unweighted_bad / 500 > 0.5


# --- exact bounds and p-values ----------------------------------------------------------------------------------

def test_clopper_pearson_matches_scipy_exact_interval():
    for n in (1, 2, 7, 25, 100, 333):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for level in (0.8, 0.95):
                lo, hi = clopper_pearson(k, n, level)
                ref = sps.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
                assert float(lo) == pytest.approx(ref.low, abs=1e-10) and float(hi) == pytest.approx(ref.high,
                                                                                                     abs=1e-10)


def test_binomial_pvalue_is_the_binomial_tail_and_crosses_delta_at_the_clopper_pearson_bound():
    for n in (10, 25, 60, 200):
        for k in range(0, n // 3):
            for alpha in (0.05, 0.1, 0.2):
                p = float(binomial_pvalue(k / n, n, alpha))
                assert p == pytest.approx(sps.binom.cdf(k, n, alpha), rel=1e-9, abs=1e-300)
                # one-sided upper bound at 1 − δ is the two-sided exact interval's upper end at 1 − 2δ
                ub = sps.binomtest(k, n).proportion_ci(confidence_level=0.8, method="exact").high
                assert float(risk_upper_bound(k / n, n, 0.1, "binomial")[0]) == pytest.approx(ub, abs=1e-10)
                if abs(ub - alpha) > 1e-9:
                    assert (p <= 0.1) == (ub <= alpha)


def test_hoeffding_bentkus_pvalue_known_answers():
    for n, k, alpha in ((50, 2, 0.1), (100, 5, 0.1), (30, 0, 0.05), (400, 30, 0.1), (20, 5, 0.1)):
        r = k / n
        a = min(r, alpha)
        h = (a * math.log(a / alpha) if a > 0 else 0.0) + (1 - a) * math.log((1 - a) / (1 - alpha))
        expected = min(1.0, math.exp(-n * h), math.e * sps.binom.cdf(math.ceil(n * r), n, alpha))
        assert float(hoeffding_bentkus_pvalue(r, n, alpha)) == pytest.approx(expected, rel=1e-9)
        assert float(hoeffding_bentkus_pvalue(r, n, alpha)) >= float(binomial_pvalue(r, n, alpha)) - 1e-15
    assert float(hoeffding_bentkus_pvalue(0.0, 30, 0.1)) == pytest.approx(0.9 ** 30)  # Hoeffding = (1 − α)^n at 0
    ub = float(risk_upper_bound(0.05, 100, 0.1, "hoeffding_bentkus")[0])
    assert float(hoeffding_bentkus_pvalue(0.05, 100, ub)) == pytest.approx(0.1, abs=1e-9)
    assert float(hoeffding_bentkus_pvalue(0.05, 100, ub - 1e-6)) > 0.1


@pytest.mark.parametrize("method", ["binomial", "hoeffding_bentkus"])
def test_units_needed_is_the_first_n_a_loop_finds(method):
    for risk, alpha in ((0.0, 0.1), (0.02, 0.1), (0.05, 0.1), (0.01, 0.05), (0.15, 0.2)):
        n = units_needed(risk, alpha, 0.1, method)
        first = next(m for m in range(1, 100_000)
                     if (binomial_pvalue if method == "binomial" else hoeffding_bentkus_pvalue)(risk, m, alpha) <= 0.1)
        assert n == first
    assert units_needed(0.0, 0.1, 0.1) == math.ceil(math.log(0.1) / math.log(0.9))  # (1 − α)^n ≤ δ: 22
    assert units_needed(0.1, 0.1, 0.1) is None and units_needed(0.2, 0.1, 0.1) is None


# --- the fixed sequence, against a plain loop -----------------------------------------------------------------

def loop_certify(s, y, alpha, delta):
    """LTT by hand: candidates high to low, scipy's binomial tail per threshold, stop at the first p > δ."""
    neg = s[y == 0]
    best = None
    for t in sorted(set(s.tolist()), reverse=True):
        k = int((neg >= t).sum())
        if sps.binom.cdf(k, neg.size, alpha) > delta:
            break
        best = t
    return best


def loop_naive(s, y, w, alpha):
    out = None
    for t in sorted(set(s.tolist()), reverse=True):
        if w[(y == 0) & (s >= t)].sum() / w[y == 0].sum() <= alpha:
            out = t
    return out


def test_certify_and_naive_match_plain_loops():
    rng = np.random.default_rng(5)
    for trial in range(60):
        n = int(rng.integers(60, 300))
        s, y, _ = draw(rng, n)
        if trial % 3 == 0:
            s = np.round(s, 1)  # ties
        alpha, delta = (0.1, 0.1) if trial % 2 else (0.2, 0.05)
        c = certify(LabelledScores(s, y), Target("false_pass", alpha), delta)
        assert c.threshold == loop_certify(s, y, alpha, delta)
        assert c.p_value_method == "binomial" and c.unit == "pair"
        if c.certified:
            assert c.risk == pytest.approx(((s >= c.threshold) & (y == 0)).sum() / (y == 0).sum())
            assert c.upper_bound <= alpha and c.p_value <= delta
        w = rng.uniform(0.5, 3.0, n)
        assert naive_threshold(LabelledScores(s, y, weights=w), Target("false_pass", alpha)).threshold == \
            loop_naive(s, y, w, alpha)


def test_catch_is_the_false_pass_risk_in_the_teams_words():
    s, y, _ = draw(np.random.default_rng(2), 300)
    data = LabelledScores(s, y)
    a, b = certify(data, make_target(max_false_pass=0.1)), certify(data, make_target(min_catch=0.9))
    assert a.threshold == b.threshold and a.risk == b.risk
    assert to_record(b)["certified_rate"] == b.certified_rate == pytest.approx(1 - a.risk)


def test_precision_certificate_matches_a_loop_over_the_passed_sets():
    rng = np.random.default_rng(8)
    for _ in range(30):
        s, y, _ = draw(rng, int(rng.integers(100, 400)))
        c = certify(LabelledScores(s, y), Target("precision", 0.9), 0.1)
        n_min = units_needed(0.0, 0.1, 0.1)
        best, started = None, False
        for t in sorted(set(s.tolist()), reverse=True):
            passed = s >= t
            if not started and passed.sum() < n_min:
                continue
            started = True
            if sps.binom.cdf(int((passed & (y == 0)).sum()), int(passed.sum()), 0.1) > 0.1:
                break
            best = t
        assert c.threshold == best


def test_group_unit_is_the_mean_of_each_groups_share_and_singletons_are_pairs():
    rng = np.random.default_rng(4)
    s, y, g = draw(rng, 300, m=5, icc=0.3)
    data = LabelledScores(s, y, g)
    c = certify(data, FP10, 0.1)
    assert c.unit == "group" and c.p_value_method == "hoeffding_bentkus"
    for t, risk in zip(c.scan.thresholds[::17], c.scan.risk[::17]):
        shares = [((s >= t) & (y == 0) & (g == k)).sum() / ((y == 0) & (g == k)).sum()
                  for k in np.unique(g) if ((y == 0) & (g == k)).any()]
        assert risk == pytest.approx(np.mean(shares))
    single = LabelledScores(s, y, np.arange(300))
    by_group, by_pair = certify(single, FP10, 0.1, unit="group"), certify(single, FP10, 0.1, unit="pair")
    assert by_group.threshold == by_pair.threshold and by_group.p_value_method == "binomial"
    with pytest.raises(ValueError, match="hoeffding_bentkus"):
        certify(data, FP10, 0.1, p_value="binomial")


def test_weighted_effective_size_equals_a_loop_and_equal_weights_change_nothing():
    rng = np.random.default_rng(6)
    s, y, _ = draw(rng, 250)
    w = rng.uniform(1.0, 6.0, s.size)
    c = certify(LabelledScores(s, y, weights=w), FP10, 0.1)
    neg = y == 0
    for t, risk, n_eff in list(zip(c.scan.thresholds, c.scan.risk, c.scan.n_effective))[::23]:
        z = (s[neg] >= t).astype(float)
        r = (w[neg] * z).sum() / w[neg].sum()
        kish = w[neg].sum() ** 2 / (w[neg] ** 2).sum()
        var = (w[neg] ** 2 * (z - r) ** 2).sum() / w[neg].sum() ** 2
        assert risk == pytest.approx(r)
        assert n_eff == pytest.approx(min(kish, r * (1 - r) / var) if 0 < r < 1 else kish)
    plain, equal = certify(LabelledScores(s, y), FP10, 0.1), certify(LabelledScores(s, y, weights=np.full(250, 7.0)),
                                                                     FP10, 0.1)
    assert plain.threshold == equal.threshold and plain.upper_bound == pytest.approx(equal.upper_bound)
    assert "Horvitz" in equal.assumption and "Horvitz" not in plain.assumption


def test_a_grid_fixed_in_advance_is_scanned_instead_of_the_scores():
    s, y, _ = draw(np.random.default_rng(1), 400)
    grid = np.linspace(-3, 5, 81)
    c = certify(LabelledScores(s, y), FP10, 0.1, grid=grid)
    assert c.threshold in grid and c.candidates == 81
    k = [((s >= t) & (y == 0)).sum() for t in grid[::-1]]
    ok = [sps.binom.cdf(v, (y == 0).sum(), 0.1) <= 0.1 for v in k]
    assert c.threshold == grid[::-1][ok.index(False) - 1]


# --- one clear reason ------------------------------------------------------------------------------------------

def test_one_class_too_few_labels_and_an_unmeetable_target_each_give_one_line():
    rng = np.random.default_rng(0)
    one = LabelledScores(rng.random(50), np.ones(50, dtype=int))
    c, v = certify(one, FP10), naive_threshold(one, FP10)
    assert c.threshold is None and c.reason.startswith("one class only (50 supported, 0 unsupported")
    assert v.threshold is None and v.reason == c.reason
    assert cross_fit(one, FP10, n_boot=50).certified is None
    few = LabelledScores(np.r_[rng.random(10), 1 + rng.random(10)], np.r_[np.zeros(10), np.ones(10)].astype(int))
    c = certify(few, FP10)
    assert c.reason == ("too few labels: 10 unsupported pairs, but showing false-pass ≤ 0.1 at delta 0.1 needs at "
                        "least 22 even when none fails")
    assert naive_threshold(few, FP10).threshold is not None  # the naive rule happily picks one
    assert certify(few, Target("precision", 0.95)).reason == (
        "too few labels: 20 pairs, but showing precision ≥ 0.95 at delta 0.1 needs at least 45 even when none fails")
    need = fewest_labels(few, c)
    assert need.units_needed == 22 and need.labels_needed == 44 and need.more_labels == 24
    flat = LabelledScores(np.full(100, 0.7), np.r_[np.zeros(50), np.ones(50)].astype(int))  # a constant scorer
    for target in (FP10, Target("precision", 0.95)):
        c, v = certify(flat, target), naive_threshold(flat, target)
        assert c.reason.startswith(f"no threshold meets {target.describe()} even in-sample")
        assert v.reason.startswith(f"no threshold meets {target.describe()} even in-sample")
    for r in (certify(one, FP10).reason, certify(few, FP10).reason, certify(flat, FP10).reason):
        assert "\n" not in r


@pytest.mark.parametrize("target", [Target("false_pass", 1e-9), Target("false_pass", 1e-7), Target("false_pass", 1e-8),
                                    Target("precision", 0.999999999), Target("catch", 0.999999999)])
@pytest.mark.parametrize("clustered", [False, True])
def test_a_target_beyond_any_search_says_how_many_labels_it_would_need(target, clustered):
    """Targets so strict that the count of labels passes the search's cap: a reason with that count, no crash."""
    rng = np.random.default_rng(3)
    s, y, g = draw(rng, 400, m=4 if clustered else 1)
    data = LabelledScores(s, y, g if clustered else None)
    c = certify(data, target)
    need = units_needed_without_failures(target.alpha, 0.1, c.p_value_method)
    assert need > 10_000_000 and units_needed(0.0, target.alpha, 0.1, c.p_value_method) is None  # past the cap
    assert need == pytest.approx(math.log(0.1) / math.log1p(-target.alpha), rel=1e-6)  # (1 − α)^n ≤ δ, to float error
    assert c.threshold is None and c.reason.startswith("too few labels: ")
    assert c.reason.endswith(f"needs at least {need} even when none fails") and "\n" not in c.reason
    fewest = fewest_labels(data, c)  # the most conservative thresholds fail no unsupported pair: their count is solved
    assert fewest.risk == 0.0 and fewest.units_needed == need and fewest.labels_needed >= need
    zero = np.flatnonzero(c.scan.risk == 0.0)
    assert fewest.threshold == c.scan.thresholds[zero[np.argmax(c.scan.n_effective[zero])]]  # most units: fewest labels
    assert slice_thresholds(data, target, n_boot=20, folds=2).certified.reason == c.reason  # and the whole slice runs


@pytest.mark.parametrize("method", ["binomial", "hoeffding_bentkus"])
def test_units_needed_without_failures_is_units_needed_at_no_failure(method):
    for alpha in (0.5, 0.2, 0.1, 0.05, 0.01, 1e-3, 1e-4, 1e-5):
        for delta in (0.01, 0.05, 0.1, 0.2):
            assert units_needed_without_failures(alpha, delta, method) == units_needed(0.0, alpha, delta, method)


def test_bad_input_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        Target("false_pass", 0.0)
    with pytest.raises(ValueError, match="exactly one"):
        make_target(max_false_pass=0.1, min_precision=0.9)
    with pytest.raises(ValueError, match="NaN"):
        LabelledScores(np.array([0.1, np.nan]), np.array([0, 1]))
    with pytest.raises(ValueError, match="0/1"):
        LabelledScores(np.array([0.1, 0.2]), np.array([0, 2]))
    with pytest.raises(ValueError, match="positive finite"):
        LabelledScores(np.array([0.1, 0.2]), np.array([0, 1]), weights=np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="delta"):
        certify(LabelledScores(np.array([0.1, 0.2]), np.array([0, 1])), FP10, delta=1.0)


# --- rates with CIs ----------------------------------------------------------------------------------------------

def test_gate_rates_match_sklearn_with_sample_weight():
    rng = np.random.default_rng(7)
    for _ in range(20):
        s, y, g = draw(rng, int(rng.integers(40, 200)), m=3)
        w = rng.uniform(0.3, 4.0, s.size)
        ts = np.quantile(s, [0.2, 0.5, 0.8])
        rates = gate_rates(LabelledScores(s, y, g, w), ts, n_boot=200, rng=1)
        for t, r in zip(ts, rates):
            pred = (s >= t).astype(int)
            tn, fp, fn, tp = confusion_matrix(y, pred, sample_weight=w, labels=[0, 1]).ravel()
            assert r.false_pass.estimate == pytest.approx(fp / (fp + tn))
            assert r.catch.estimate == pytest.approx(tn / (fp + tn))
            assert r.precision.estimate == pytest.approx(precision_score(y, pred, sample_weight=w))
            assert r.supported_pass.estimate == pytest.approx(recall_score(y, pred, sample_weight=w))
            assert r.false_pass.method == "clustered-bootstrap-percentile"
            assert r.false_pass.ci_low <= r.false_pass.estimate <= r.false_pass.ci_high


def test_unclustered_unweighted_rates_get_exact_intervals():
    s, y, _ = draw(np.random.default_rng(9), 150)
    (r,) = gate_rates(LabelledScores(s, y), [0.8])
    k, n = int(((s >= 0.8) & (y == 0)).sum()), int((y == 0).sum())
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert (r.false_pass.ci_low, r.false_pass.ci_high) == pytest.approx((ref.low, ref.high))
    assert (r.catch.ci_low, r.catch.ci_high) == pytest.approx((1 - ref.high, 1 - ref.low))
    assert r.false_pass.method == "clopper-pearson" and r.false_pass.n == n


def test_cluster_sum_replicates_and_folds_equal_loops():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 12, 90)
    codes = np.unique(codes, return_inverse=True)[1]
    v = rng.random((90, 3))
    reps = cluster_sum_replicates(v, codes, 50, np.random.default_rng(3))
    counts = np.vstack(list(cluster_count_blocks(int(codes.max()) + 1, 50, np.random.default_rng(3))))
    for b in range(50):
        loop = sum(counts[b, c] * v[codes == c].sum(axis=0) for c in range(int(codes.max()) + 1))
        np.testing.assert_allclose(reps[b], loop)
    fold = group_folds(codes, 4, np.random.default_rng(1))
    for c in np.unique(codes):
        assert np.unique(fold[codes == c]).size == 1  # a cluster never straddles folds
    assert set(np.unique(fold)) == {0, 1, 2, 3}


def test_cross_fit_judges_each_fold_with_thresholds_fitted_without_its_groups():
    rng = np.random.default_rng(11)
    s, y, g = draw(rng, 900, m=3, icc=0.2)
    data = LabelledScores(s, y, g)
    held = cross_fit(data, FP10, 0.1, folds=4, rng=np.random.default_rng(5), n_boot=200)
    fold = group_folds(data.codes, 4, np.random.default_rng(5))  # the same first draws
    passed_c, passed_n = np.zeros(s.size, bool), np.zeros(s.size, bool)
    for f, (tc, tn) in enumerate(held.fold_thresholds):
        part = data.subset(fold != f)
        assert tc == certify(part, FP10, 0.1, unit="group").threshold
        assert tn == naive_threshold(part, FP10).threshold
        passed_c[fold == f], passed_n[fold == f] = s[fold == f] >= tc, s[fold == f] >= tn
    assert held.certified_folds == held.naive_folds == 4
    assert held.certified.false_pass.estimate == pytest.approx((passed_c & (y == 0)).sum() / (y == 0).sum())
    assert held.naive.false_pass.estimate == pytest.approx((passed_n & (y == 0)).sum() / (y == 0).sum())
    assert held.certified.threshold is None  # per-fold thresholds


def test_transfer_matrix_equals_a_loop_and_flags_a_broken_target():
    rng = np.random.default_rng(12)
    slices = {}
    for name, shift in (("A", 0.0), ("B", 0.0), ("C", 1.2)):  # C's unsupported pairs score higher
        s, y, _ = draw(rng, 600)
        slices[name] = LabelledScores(s + shift * (y == 0), y)
    thresholds = {k: certify(v, FP10).threshold for k, v in slices.items()}
    thresholds["B"] = None  # a slice without a certificate gives no row
    mat = transfer_matrix(slices, thresholds, FP10, n_boot=100)
    assert {c.fitted_on for c in mat.cells} == {"A", "C"} and len(mat.cells) == 6
    est = mat.estimates()
    assert np.isnan(est[1]).all()
    for c in mat.cells:
        d = slices[c.applied_to]
        neg = d.labels == 0
        fp = (d.scores[neg] >= c.threshold).mean()
        k, n = int((d.scores[neg] >= c.threshold).sum()), int(neg.sum())
        ref = sps.binomtest(k, n).proportion_ci(method="exact")
        assert c.rates.false_pass.estimate == pytest.approx(fp)
        assert (c.rates.false_pass.ci_low, c.rates.false_pass.ci_high) == pytest.approx((ref.low, ref.high))
        passed = d.scores >= c.threshold
        assert c.rates.precision.estimate == pytest.approx(d.labels[passed].mean())
        assert c.broken == (ref.low > 0.1)
        assert c.in_sample == (c.fitted_on == c.applied_to)
    assert mat.cell("A", "C").broken and not mat.cell("A", "A").broken
    assert mat.cell("C", "A").rates.false_pass.estimate < 0.1  # C's stricter threshold is safe on A


def test_slice_thresholds_gathers_everything_a_results_entry_needs():
    s, y, g = draw(np.random.default_rng(13), 400, m=2)
    st = slice_thresholds(LabelledScores(s, y, g), FP10, 0.1, n_boot=100)
    assert st.certified.threshold is not None and st.naive.threshold < st.certified.threshold
    assert st.certified.unit == "group" and "groups are exchangeable" in st.certified.assumption
    assert st.naive_rates.false_pass.estimate <= 0.1
    assert st.held_out.certified.false_pass.ci_high >= st.held_out.certified.false_pass.ci_low
    assert st.label_need.threshold <= st.naive.threshold + 1e-12 or st.label_need.risk < 0.1
    entry = to_record(st.certified)  # the certificate as thresholds.json holds it: the target first, no scan
    assert list(entry)[:2] == ["target", "delta"] and "scan" not in entry and entry["certified_rate"] is not None


def test_label_need_converts_units_to_labels_at_the_slices_mix():
    s, y, _ = draw(np.random.default_rng(14), 240)
    data = LabelledScores(s, y)
    c = certify(data, FP10)
    need = label_need(data, c)
    assert need.risk < 0.1 and need.units_needed == units_needed(need.risk, 0.1, 0.1)
    assert need.labels_needed == math.ceil(need.units_needed * 240 / (y == 0).sum())
    at = label_need(data, c, threshold=c.threshold)
    assert at.more_labels == 0  # the certified threshold needs nothing more
