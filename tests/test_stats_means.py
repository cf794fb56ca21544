import numpy as np
import pytest
from scipy import stats as sps

from attrib_audit.stats.means import bootstrap_means, mean_estimate, paired_mean_difference


def test_replicates_equal_explicit_resampling_of_clusters():
    rng = np.random.default_rng(1)
    x = rng.normal(size=12)
    groups = np.repeat(np.arange(4), 3)  # 4 clusters of 3 rows
    res = bootstrap_means(x, groups, n_boot=50, rng=np.random.default_rng(7))
    draws = np.random.default_rng(7).integers(0, 4, size=(50, 4))  # the same draws, taken one by one
    expected = [np.concatenate([x[groups == g] for g in d]).mean() for d in draws]
    np.testing.assert_allclose(res.replicates[0], expected)
    assert res.point[0] == pytest.approx(x.mean())
    assert res.n_groups == 4 and res.n[0] == 12


def test_ci_matches_scipy_percentile_bootstrap_for_singleton_clusters():
    x = np.random.default_rng(3).normal(0.3, 1.0, size=300)
    est = mean_estimate(bootstrap_means(x, np.arange(300), n_boot=8000, rng=0), 0)
    ref = sps.bootstrap((x,), np.mean, n_resamples=8000, method="percentile", random_state=0).confidence_interval
    assert est.ci_low == pytest.approx(ref.low, abs=0.01)
    assert est.ci_high == pytest.approx(ref.high, abs=0.01)


def test_paired_difference_of_a_constant_shift_has_a_degenerate_interval():
    a = np.random.default_rng(0).uniform(size=40)
    ma, mb, d = paired_mean_difference(a + 0.25, a, np.arange(40), n_boot=500, rng=2)
    assert (d.estimate, d.ci_low, d.ci_high) == pytest.approx((0.25, 0.25, 0.25))
    assert ma.estimate - mb.estimate == pytest.approx(0.25)
    assert ma.ci_high - ma.ci_low > 0.05  # the means themselves vary; only the paired difference is exact


def test_nan_rows_are_left_out_not_imputed():
    x = np.array([1.0, np.nan, 3.0, 5.0])
    res = bootstrap_means(x, ["a", "b", "c", "d"], n_boot=200, rng=0)
    assert res.point[0] == pytest.approx(3.0) and res.n[0] == 3
    only_nan = np.array([[np.nan, np.nan]])
    res2 = bootstrap_means(only_nan, [0, 1], n_boot=10, rng=0)
    assert np.isnan(res2.point[0]) and np.isnan(res2.replicates).all()


def test_shape_errors_are_clear():
    with pytest.raises(ValueError, match="columns"):
        bootstrap_means(np.zeros((2, 3)), [0, 1], n_boot=5)
    with pytest.raises(ValueError, match="same length"):
        paired_mean_difference(np.zeros(3), np.zeros(4), [0, 1, 2])
