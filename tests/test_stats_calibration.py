"""Calibration: ECE and reliability bins against loops and sklearn's calibration_curve, recalibration maps against
sklearn's isotonic and sigmoid fits with sample_weight, the vectorised bootstrap against a loop, and transfer."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import _sigmoid_calibration, calibration_curve
from sklearn.isotonic import IsotonicRegression

from attrib_audit.stats.bootstrap import cluster_count_blocks
from attrib_audit.stats.calibration import (
    bin_edges,
    calibration_transfer,
    expected_calibration_error,
    fit_calibration,
    recalibrate,
    reliability,
)
from attrib_audit.stats.types import LabelledScores


def loop_ece(s, y, w, edges):
    """Σ over bins of (bin weight / total) · |mean label − mean score|, a bin being (e_i, e_{i+1}] (first closed)."""
    total, out = w.sum(), 0.0
    for i in range(len(edges) - 1):
        inside = (s > edges[i]) & (s <= edges[i + 1]) if i else (s <= edges[1])
        if i == len(edges) - 2:
            inside = s > edges[i] if i else np.ones_like(s, dtype=bool)
        if inside.any():
            wb = w[inside]
            out += wb.sum() / total * abs((wb * y[inside]).sum() / wb.sum() - (wb * s[inside]).sum() / wb.sum())
    return out


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_matches_a_loop_weighted_and_not(strategy):
    rng = np.random.default_rng(0)
    for trial in range(40):
        n = int(rng.integers(5, 300))
        s = rng.random(n)
        if trial % 3 == 0:
            s = np.round(s, 1)  # scores on the bin edges
        y = (rng.random(n) < s ** 2).astype(int)
        w = rng.uniform(0.2, 5.0, n) if trial % 2 else np.ones(n)
        edges = bin_edges(s, 10, strategy)
        assert expected_calibration_error(s, y, w, strategy=strategy) == pytest.approx(loop_ece(s, y, w, edges))


def test_reliability_bins_match_sklearn_calibration_curve():
    rng = np.random.default_rng(1)
    for strategy in ("uniform", "quantile"):
        s = np.r_[rng.random(400), [0.0, 0.1, 0.5, 1.0]]
        y = (rng.random(s.size) < s).astype(int)
        rel = reliability(LabelledScores(s, y), n_bins=8, strategy=strategy, n_boot=100)
        prob_true, prob_pred = calibration_curve(y, s, n_bins=8, strategy=strategy)
        full = rel.count > 0
        np.testing.assert_allclose(rel.frac_supported[full], prob_true)
        np.testing.assert_allclose(rel.mean_score[full], prob_pred)
        assert rel.count.sum() == s.size


def test_ece_bootstrap_replicates_equal_a_loop_over_the_same_cluster_draws():
    rng = np.random.default_rng(2)
    n = 120
    s, groups = rng.random(n), rng.integers(0, 30, n)
    y = (rng.random(n) < s).astype(int)
    w = rng.uniform(0.5, 2.0, n)
    data = LabelledScores(s, y, groups, w)
    rel = reliability(data, n_boot=60, rng=np.random.default_rng(4))
    codes = data.codes
    counts = np.vstack(list(cluster_count_blocks(int(codes.max()) + 1, 60, np.random.default_rng(4))))
    reps = [loop_ece(s, y, w * counts[b, codes], bin_edges(s)) for b in range(60)]  # a resample = row multiplicities
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert (rel.ece.ci_low, rel.ece.ci_high) == pytest.approx((lo, hi))
    assert rel.ece.estimate == pytest.approx(loop_ece(s, y, w, bin_edges(s)))
    assert rel.ece.n_groups == np.unique(groups).size


def test_isotonic_and_platt_maps_match_sklearn_with_sample_weight():
    rng = np.random.default_rng(3)
    for trial in range(30):
        n = int(rng.integers(5, 250))
        s = rng.random(n) * (4.0 if trial % 3 == 0 else 1.0)
        if trial % 2:
            s = np.round(s * 5) / 5  # ties
        y = rng.integers(0, 2, n)
        y[:2] = (0, 1)
        w = rng.uniform(0.2, 5.0, n)
        query = np.r_[s, rng.uniform(-1.0, 5.0, 40)]  # outside the data: clipped
        iso = IsotonicRegression(out_of_bounds="clip").fit(s, y, sample_weight=w)
        np.testing.assert_allclose(fit_calibration(s, y, w)(query), iso.predict(query), atol=1e-12)
        a, b = _sigmoid_calibration(s, y, sample_weight=w)  # Platt's smoothed targets, as CalibratedClassifierCV
        platt = fit_calibration(s, y, w, method="platt")
        assert (platt.a, platt.b) == pytest.approx((a, b), abs=1e-5)


def test_separable_classes_still_give_a_finite_platt_map():
    s = np.r_[np.linspace(0, 0.4, 20), np.linspace(0.6, 1, 20)]
    y = np.r_[np.zeros(20), np.ones(20)].astype(int)
    m = fit_calibration(s, y, method="platt")
    assert np.isfinite([m.a, m.b]).all() and m(np.array([0.0]))[0] < 0.1 < 0.9 < m(np.array([1.0]))[0]


def test_recalibration_is_judged_on_held_out_groups_and_helps_a_miscalibrated_score():
    rng = np.random.default_rng(5)
    n = 1500
    groups = np.arange(n) // 3
    s = rng.random(n)
    y = (rng.random(n) < s ** 3).astype(int)  # the score overstates support
    rec = recalibrate(LabelledScores(s, y, groups), folds=5, n_boot=300, rng=0)
    assert rec.folds == 5 and rec.raw.ece.estimate > 0.15
    assert rec.held_out.ece.estimate < 0.06 and rec.improvement.ci_low > 0.05
    assert rec.improvement.estimate == pytest.approx(rec.raw.ece.estimate - rec.held_out.ece.estimate)
    # the held-out scores come from maps that never saw their pair's group
    fold_map = fit_calibration(s[groups >= 100], y[groups >= 100])
    assert not np.allclose(fold_map(s[groups < 100]), fit_calibration(s, y)(s[groups < 100]))
    # raw scores outside [0, 1] are not probabilities: only the recalibrated side is read
    logit = recalibrate(LabelledScores(np.log(s / (1 - s)), y, groups), method="platt", n_boot=100)
    assert logit.raw is None and logit.improvement is None and logit.held_out.ece.estimate < 0.06


def test_calibration_transfer_flags_a_map_that_fails_on_another_slice():
    rng = np.random.default_rng(6)
    slices = {}
    for name, power in (("A", 1.0), ("B", 1.0), ("C", 4.0)):
        s = rng.random(1200)
        slices[name] = LabelledScores(s, (rng.random(1200) < s ** power).astype(int), np.arange(1200) // 4)
    tr = calibration_transfer(slices, n_boot=300, seed=1)
    assert len(tr.cells) == 9
    assert tr.cell("A", "B").holds and tr.cell("B", "A").holds
    assert not tr.cell("A", "C").holds and not tr.cell("C", "A").holds
    for name in slices:
        diag = tr.cell(name, name)
        assert diag.held_out and diag.excess.estimate == 0.0 and diag.holds
    cell = tr.cell("A", "C")
    c = slices["C"]
    assert cell.ece.estimate == pytest.approx(expected_calibration_error(tr.maps["A"](c.scores), c.labels))
    assert cell.excess.estimate == pytest.approx(cell.ece.estimate - tr.cell("C", "C").ece.estimate)
    np.testing.assert_allclose(np.diag(tr.estimates()), [tr.cell(k, k).ece.estimate for k in slices])


def test_calibration_errors_are_clear():
    with pytest.raises(ValueError, match="not probabilities"):
        reliability(LabelledScores(np.array([-1.0, 2.0]), np.array([0, 1])))
    with pytest.raises(ValueError, match="method"):
        fit_calibration(np.array([0.1, 0.9]), np.array([0, 1]), method="beta")
    with pytest.raises(ValueError, match="both classes"):
        recalibrate(LabelledScores(np.array([0.1, 0.9, 0.5]), np.array([1, 1, 1])))
