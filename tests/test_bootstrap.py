import numpy as np
import pytest
from scipy.stats import norm

from attrib_audit.stats import (
    bootstrap_aurocs,
    cluster_weight_blocks,
    clustered_auroc_ci,
    group_codes,
    paired_auroc_difference,
    percentile_ci,
)


def test_weights_are_cluster_multiplicities():
    groups = np.array(["a", "a", "b", "c", "c", "c"])
    codes = group_codes(groups)
    (w,) = list(cluster_weight_blocks(codes, 50, np.random.default_rng(0)))
    assert w.shape == (50, 6)
    assert (w[:, 0] == w[:, 1]).all() and (w[:, 3] == w[:, 5]).all()
    # each resample draws exactly K=3 clusters
    per_cluster = np.stack([w[:, 0], w[:, 2], w[:, 3]], axis=1)
    assert (per_cluster.sum(axis=1) == 3).all()


def test_blocks_cover_b_exactly_under_memory_cap(monkeypatch):
    import attrib_audit.stats.bootstrap as bs
    import attrib_audit.stats.rng as rng

    monkeypatch.setattr(rng, "MAX_CELLS", 1000)
    codes = np.arange(300) // 2
    blocks = list(bs.cluster_weight_blocks(codes, 17, np.random.default_rng(1)))
    assert len(blocks) > 1 and sum(b.shape[0] for b in blocks) == 17


def test_seeded_reproducibility_and_ci_contains_point():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    s = rng.normal(size=200) + y
    g = np.arange(200) // 4
    a = clustered_auroc_ci(s, y, g, n_boot=500, seed=11)
    b = clustered_auroc_ci(s, y, g, n_boot=500, seed=11)
    assert a == b
    assert a.ci_low < a.estimate < a.ci_high
    assert a.n == 200 and a.n_groups == 50


def test_resamples_losing_a_class_are_dropped_and_counted():
    y = np.array([1] + [0] * 9)
    s = np.linspace(0, 1, 10)
    est = clustered_auroc_ci(s, y, np.arange(10), n_boot=1000, seed=0)
    # the single positive is missed with probability (9/10)^10 ~ 0.35
    assert 250 < est.n_boot_dropped < 450
    assert np.isfinite(est.ci_low)


def test_clustering_widens_interval_for_duplicated_rows():
    rng = np.random.default_rng(5)
    y0 = rng.integers(0, 2, 60)
    s0 = rng.normal(size=60) + y0
    y, s = np.repeat(y0, 5), np.repeat(s0, 5)
    clustered = clustered_auroc_ci(s, y, np.repeat(np.arange(60), 5), n_boot=1000, seed=1)
    naive = clustered_auroc_ci(s, y, np.arange(300), n_boot=1000, seed=1)
    assert (clustered.ci_high - clustered.ci_low) > 1.7 * (naive.ci_high - naive.ci_low)


def test_ci_coverage_on_binormal_data():
    """~95% of intervals cover the true AUROC Φ(d/√2) of N(d,1) vs N(0,1) scores."""
    d, n, sims = 1.0, 150, 200
    truth = norm.cdf(d / np.sqrt(2))
    rng = np.random.default_rng(2024)
    covered = 0
    for _ in range(sims):
        y = rng.integers(0, 2, n)
        s = rng.normal(size=n) + d * y
        est = clustered_auroc_ci(s, y, np.arange(n), n_boot=400, seed=rng)
        covered += est.ci_low <= truth <= est.ci_high
    assert 0.90 <= covered / sims <= 0.99


def test_paired_difference_identical_scorers_is_zero():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 100)
    s = rng.normal(size=100) + y
    d = paired_auroc_difference(s, s.copy(), y, np.arange(100), n_boot=300, seed=0)
    assert d.estimate == 0 and d.ci_low == 0 and d.ci_high == 0


def test_paired_interval_narrower_than_unpaired_for_correlated_scorers():
    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, 300)
    base = rng.normal(size=300) + y
    a, b = base + 0.1 * rng.normal(size=300), base + 0.1 * rng.normal(size=300) + 0.2 * y
    g = np.arange(300)
    paired = paired_auroc_difference(b, a, y, g, n_boot=1000, seed=3)
    ea = clustered_auroc_ci(a, y, g, n_boot=1000, seed=4)
    eb = clustered_auroc_ci(b, y, g, n_boot=1000, seed=5)
    assert paired.ci_high - paired.ci_low < 0.5 * ((ea.ci_high - ea.ci_low) + (eb.ci_high - eb.ci_low))
    assert paired.ci_low > 0  # b really is better, and pairing sees it


def test_nan_scores_excluded_per_scorer_only():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 80)
    s = rng.normal(size=80) + y
    t = s.copy()
    t[:10] = np.nan
    res = bootstrap_aurocs(np.vstack([s, t]), y, np.arange(80), n_boot=200, rng=0)
    assert res.n.tolist() == [80, 70]
    from attrib_audit.stats import auroc

    assert res.point[1] == pytest.approx(auroc(s[10:], y[10:]))


def test_percentile_ci_ignores_nan():
    lo, hi, dropped = percentile_ci(np.array([np.nan, 0.0, 1.0, 2.0, np.nan]), level=0.5)
    assert dropped == 2 and lo == pytest.approx(0.5) and hi == pytest.approx(1.5)
