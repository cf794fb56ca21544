"""Horvitz–Thompson weighted AUROC and weighted clustered bootstrap; unbiasedness of the sampling designs."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from attrib_audit.stats import auroc, bootstrap_aurocs, ht_auroc, percentile_ci
from attrib_audit.validate.designs import equal_allocation, pps_probabilities, systematic_sample
from attrib_audit.validate.sample import sample_pool


def test_weighted_auroc_matches_sklearn_sample_weight_with_ties():
    rng = np.random.default_rng(0)
    s, y, w = np.round(rng.normal(size=400), 1), rng.integers(0, 2, 400), rng.uniform(0.5, 8, 400)
    assert ht_auroc(s, y, w) == pytest.approx(roc_auc_score(y, s, sample_weight=w), abs=1e-12)
    assert ht_auroc(s, y, np.ones(400)) == pytest.approx(auroc(s, y), abs=1e-12)


def test_integer_weights_bootstrap_equals_bootstrap_of_repeated_rows():
    """A pair of weight k is k copies of it in its cluster: same draws, same replicates."""
    rng = np.random.default_rng(1)
    n = 120
    s, y = rng.normal(size=(2, n)) + rng.integers(0, 2, n), rng.integers(0, 2, n)
    groups = rng.integers(0, 30, n).astype(str)
    w = rng.integers(1, 4, n)
    rep = np.repeat(np.arange(n), w)
    weighted = bootstrap_aurocs(s, y, groups, n_boot=300, rng=7, weights=w.astype(float))
    copied = bootstrap_aurocs(s[:, rep], y[rep], groups[rep], n_boot=300, rng=7)
    np.testing.assert_allclose(weighted.point, copied.point, atol=1e-12)
    np.testing.assert_allclose(weighted.replicates, copied.replicates, atol=1e-12)


def test_bad_weights_are_refused():
    with pytest.raises(ValueError, match="positive finite"):
        ht_auroc(np.arange(4.0), np.array([0, 1, 0, 1]), np.array([1.0, 0.0, 1.0, 1.0]))


def test_systematic_pps_draws_each_unit_with_its_probability():
    pi = pps_probabilities(np.array([1, 2, 3, 10, 1, 1, 1.0]), 3)
    assert pi.sum() == pytest.approx(3) and pi[3] == 1.0  # the big unit is taken with certainty
    rng = np.random.default_rng(2)
    counts = np.zeros(7)
    for _ in range(4000):
        chosen = systematic_sample(pi, rng)
        assert chosen.size == 3
        counts[chosen] += 1
    np.testing.assert_allclose(counts / 4000, pi, atol=0.03)


def test_equal_allocation_caps_small_strata():
    alloc = equal_allocation(np.array([3, 50, 50, 2, 100]), 60)
    assert alloc.sum() == 60 and alloc[0] == 3 and alloc[3] == 2 and alloc.max() - alloc[[1, 2, 4]].min() <= 1


def _pool(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    common = rng.normal(size=n)
    s1 = 1.2 * y + common
    s2 = 1.2 * y + 0.5 * common + 1.2 * rng.normal(size=n)
    return np.vstack([s1, s2]), y


def test_weighted_disagreement_sample_covers_the_pool_auroc_and_unweighted_is_biased():
    """200 disagreement samples of 300 from a labelled pool of 3000: the HT-weighted clustered CI holds the
    pool's AUROC in ≥ 90% of draws; the unweighted estimate is pulled down (the design over-samples hard pairs)."""
    sm, y = _pool()
    truth = auroc(sm[0], y)
    rng = np.random.default_rng(3)
    covered, weighted, unweighted = 0, [], []
    for _ in range(200):
        idx, pi = sample_pool(sm, 300, "disagreement", rng, np.arange(y.size))
        boot = bootstrap_aurocs(sm[:1, idx], y[idx], idx, n_boot=200, rng=rng, weights=1.0 / pi[idx])
        lo, hi, _ = percentile_ci(boot.replicates[0])
        covered += lo <= truth <= hi
        weighted.append(boot.point[0])
        unweighted.append(auroc(sm[0, idx], y[idx]))
    assert covered / 200 >= 0.9
    assert abs(np.mean(weighted) - truth) < 0.008
    assert np.mean(unweighted) - truth < -0.015


@pytest.mark.parametrize("strategy", ["random", "stratified", "disagreement"])
def test_cluster_sampling_takes_whole_clusters_and_weights_sum_to_the_pool(strategy):
    sm, y = _pool(900, seed=4)
    clusters = np.arange(900) // 3
    idx, pi = sample_pool(sm, 150, strategy, np.random.default_rng(5), clusters)
    assert set(np.bincount(clusters[idx])[np.unique(clusters[idx])]) == {3}
    assert np.all(pi == pi[::3].repeat(3))  # one probability per cluster
    assert pi[::3].sum() == pytest.approx(50)  # 150 pairs = 50 clusters of 3, in expectation and here
    if strategy != "disagreement":  # equal-probability within strata: the weights add up to the pool exactly
        assert (1.0 / pi[idx]).sum() == pytest.approx(900)


def test_weighted_cluster_sample_covers_the_pool_auroc():
    """Whole questions drawn by disagreement (clusters of 1–5 pairs sharing a score shift): the weighted
    clustered bootstrap still holds the pool's AUROC in ≥ 90% of 200 draws."""
    rng = np.random.default_rng(6)
    sizes = rng.integers(1, 6, 1000)
    clusters = np.repeat(np.arange(1000), sizes)
    shift = 0.7 * rng.normal(size=1000)[clusters]
    y = (rng.random(clusters.size) < 0.4).astype(int)
    common = rng.normal(size=clusters.size)
    sm = np.vstack([1.2 * y + common + shift, 1.2 * y + 0.5 * common + 1.2 * rng.normal(size=clusters.size) + shift])
    truth = auroc(sm[0], y)
    covered = 0
    for _ in range(200):
        idx, pi = sample_pool(sm, 300, "disagreement", rng, clusters)
        boot = bootstrap_aurocs(sm[:1, idx], y[idx], clusters[idx], n_boot=200, rng=rng, weights=1.0 / pi[idx])
        lo, hi, _ = percentile_ci(boot.replicates[0])
        covered += lo <= truth <= hi
    assert covered / 200 >= 0.9
