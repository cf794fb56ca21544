"""Clustered bootstrap of means: known answers, the cluster-means identity, and scipy agreement."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from attrib_audit.stats.proportion import clustered_mean_ci, clustered_mean_replicates, clustered_means


def test_constant_values_give_a_degenerate_interval():
    e = clustered_mean_ci(np.ones(30), [i // 3 for i in range(30)], n_boot=500, seed=1)
    assert (e.estimate, e.ci_low, e.ci_high, e.n, e.n_groups) == (1.0, 1.0, 1.0, 30, 10)


def test_replicates_equal_bootstrap_of_cluster_means_with_the_same_draws():
    rng = np.random.default_rng(0)
    k, size, B = 12, 4, 300
    cluster_vals = rng.random(k)
    values = np.repeat(cluster_vals, size)  # equal-size clusters, constant within each
    groups = np.repeat([f"g{i:02d}" for i in range(k)], size)  # sorts as cluster index (codes follow sort order)
    _, reps, n_groups = clustered_mean_replicates(values, groups, n_boot=B, rng=np.random.default_rng(7))
    draws = np.random.default_rng(7).integers(0, k, size=(B, k))
    np.testing.assert_allclose(reps[0], cluster_vals[draws].mean(axis=1), rtol=1e-12)
    assert n_groups == k


def test_unclustered_ci_agrees_with_scipy_percentile_bootstrap():
    x = np.random.default_rng(3).binomial(1, 0.3, size=400).astype(float)
    e = clustered_mean_ci(x, np.arange(x.size), n_boot=20000, seed=5)
    ref = sps.bootstrap((x,), np.mean, n_resamples=20000, method="percentile", random_state=11).confidence_interval
    assert e.estimate == pytest.approx(x.mean())
    assert e.ci_low == pytest.approx(ref.low, abs=0.006) and e.ci_high == pytest.approx(ref.high, abs=0.006)


def test_rows_share_draws_so_differences_are_paired():
    rng = np.random.default_rng(2)
    a, b = rng.binomial(1, 0.7, 200).astype(float), rng.binomial(1, 0.5, 200).astype(float)
    groups = rng.integers(0, 40, 200)
    _, reps, _ = clustered_mean_replicates(np.vstack([a, b, a - b]), groups, n_boot=400, rng=4)
    np.testing.assert_allclose(reps[0] - reps[1], reps[2], atol=1e-12)
    ests = clustered_means(np.vstack([a, b]), groups, n_boot=400, rng=4)
    assert ests[0].estimate == pytest.approx(a.mean()) and ests[0].ci_low < a.mean() < ests[0].ci_high


def test_clustering_widens_the_interval_for_correlated_units():
    rng = np.random.default_rng(9)
    values = np.repeat(rng.binomial(1, 0.5, 30), 10).astype(float)
    flat = clustered_mean_ci(values, np.arange(300), n_boot=2000, seed=0)
    clus = clustered_mean_ci(values, np.repeat(np.arange(30), 10), n_boot=2000, seed=0)
    assert (clus.ci_high - clus.ci_low) > 2 * (flat.ci_high - flat.ci_low)


def test_nan_and_shape_errors():
    with pytest.raises(ValueError, match="NaN"):
        clustered_mean_ci(np.array([1.0, np.nan]), [0, 1])
    with pytest.raises(ValueError, match="columns"):
        clustered_mean_ci(np.ones(3), [0, 1])
