"""Vectorised statistics against explicit loops that build each resample / permutation by hand.

Each oracle redraws from the same seeded generator, materialises the resample (rows of the
drawn clusters, concatenated) or the permuted matrix, and recomputes the statistic from
scratch with sklearn / plain sums, so a wrong weight, index or axis shows up as a mismatch.
"""
import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from attrib_audit.stats import bootstrap_aurocs, percentile_ci
from attrib_audit.stats.transfer import AurocMatrix, best_per_dataset, decompose, portability


def clustered_sample(seed=0, n_clusters=40):
    """Clusters of 1–6 rows (named so that string order differs from creation order), scores, labels."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, n_clusters)
    groups = np.repeat([f"claim-{k * 7 % n_clusters}" for k in range(n_clusters)], sizes)
    effect = np.repeat(rng.normal(0, 0.7, n_clusters), sizes)  # rows of a cluster are correlated
    y = rng.integers(0, 2, groups.size)
    s = np.round(y + effect + rng.normal(0, 1, groups.size), 1)  # rounding makes ties
    return s, y, groups


def loop_replicates(s, y, groups, n_boot, seed):
    """AUROC of each resample, built as the concatenated rows of K clusters drawn with replacement."""
    names = np.unique(groups)
    members = [np.flatnonzero(groups == g) for g in names]
    draws = np.random.default_rng(seed).integers(0, len(names), size=(n_boot, len(names)))
    out = []
    for b in range(n_boot):
        rows = np.concatenate([members[k] for k in draws[b]])
        yb = y[rows]
        out.append(roc_auc_score(yb, s[rows]) if 0 < yb.sum() < yb.size else np.nan)
    return np.array(out)


def test_clustered_bootstrap_matches_a_loop_over_materialised_resamples():
    s, y, groups = clustered_sample()
    assert np.bincount(np.unique(groups, return_inverse=True)[1]).max() > 1  # real multi-row clusters
    res = bootstrap_aurocs(s[None, :], y, groups, n_boot=300, rng=4)
    expected = loop_replicates(s, y, groups, 300, 4)
    np.testing.assert_allclose(res.replicates[0], expected, rtol=0, atol=1e-12)
    lo, hi, dropped = percentile_ci(res.replicates[0])
    ok = expected[np.isfinite(expected)]
    assert (lo, hi) == pytest.approx(tuple(np.quantile(ok, [0.025, 0.975])), abs=1e-12)
    assert dropped == int(np.isnan(expected).sum())


def test_resamples_that_lose_a_class_match_the_loop():
    s, y, groups = clustered_sample(seed=3, n_clusters=6)
    res = bootstrap_aurocs(s[None, :], y, groups, n_boot=400, rng=1)
    expected = loop_replicates(s, y, groups, 400, 1)
    np.testing.assert_array_equal(np.isnan(res.replicates[0]), np.isnan(expected))
    np.testing.assert_allclose(res.replicates[0], expected, atol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_aligned_comparison_matches_a_loop_on_the_common_rows(weighted):
    s, y, groups = clustered_sample(seed=1)
    rng = np.random.default_rng(9)
    w = rng.uniform(1, 4, s.size) if weighted else np.ones(s.size)  # Horvitz–Thompson 1/π per row
    t = s + rng.normal(0, 0.5, s.size)
    t[rng.random(s.size) < 0.2] = np.nan  # a scorer that fails on a fifth of the rows
    s2 = s.copy()
    s2[rng.random(s.size) < 0.1] = np.nan
    res = bootstrap_aurocs(np.vstack([s2, t]), y, groups, n_boot=200, rng=6, weights=w if weighted else None)
    al = res.aligned([0, 1])
    common = np.isfinite(s2) & np.isfinite(t)
    for i, x in enumerate((s2, t)):
        assert al.point[i] == pytest.approx(roc_auc_score(y[common], x[common], sample_weight=w[common]), abs=1e-12)
    assert al.n == common.sum() and al.dropped.tolist() == [int(np.isnan(s2).sum()), int(np.isnan(t).sum())]
    # the resample draws clusters of the whole slice, then keeps the drawn rows both scorers scored
    names = np.unique(groups)
    members = [np.flatnonzero(groups == g) for g in names]
    draws = np.random.default_rng(6).integers(0, len(names), size=(200, len(names)))
    for b in range(200):
        rows = np.concatenate([members[k] for k in draws[b]])
        rows = rows[common[rows]]
        for i, x in enumerate((s2, t)):
            want = roc_auc_score(y[rows], x[rows], sample_weight=w[rows]) if 0 < y[rows].sum() < rows.size else np.nan
            assert al.replicates[i, b] == pytest.approx(want, abs=1e-12, nan_ok=True)


def noisy_matrix(seed=0, m=4, d=3, b=250):
    rng = np.random.default_rng(seed)
    point = rng.uniform(0.55, 0.85, (m, d))
    point[0] = point.max(axis=0) + 0.03  # best everywhere, and m1 a near tie: both portability branches occur
    point[1] = point[0] - 0.01
    reps = point[:, :, None] + rng.normal(0, 0.03, (1, d, b)) + rng.normal(0, 0.02, (m, d, b))
    reps[rng.random((m, d, b)) < 0.05] = np.nan  # some resamples lost a class
    return AurocMatrix(tuple(f"m{i}" for i in range(m)), tuple(f"d{j}" for j in range(d)), point, reps)


def _q(values, level=0.95):
    v = [x for x in values if np.isfinite(x)]
    return tuple(np.quantile(v, [(1 - level) / 2, (1 + level) / 2]))


def test_best_per_dataset_and_portability_match_loops():
    mat = noisy_matrix()
    m, d, b = mat.replicates.shape
    best = best_per_dataset(mat)
    port = {p.metric: p for p in portability(mat)}
    for j in range(d):
        k = max(range(m), key=lambda i: mat.point[i, j])
        lo, hi = _q([mat.replicates[k, j, r] for r in range(b)])
        assert (best[j].best, best[j].ci_low, best[j].ci_high) == (mat.metrics[k], pytest.approx(lo), pytest.approx(hi))
        for i in range(m):
            within = mat.point[i, j] >= lo
            assert (mat.datasets[j] in port[mat.metrics[i]].breaks_on) == (not within)
            diffs = [mat.replicates[k, j, r] - mat.replicates[i, j, r] for r in range(b)]
            d_lo, d_hi = _q(diffs) if i != k else (0.0, 0.0)
            assert (mat.datasets[j] in port[mat.metrics[i]].paired_breaks_on) == (not d_lo <= 0 <= d_hi)
    for p in port.values():
        assert p.portable == (not p.breaks_on) and p.paired_portable == (not p.paired_breaks_on)
    assert any(p.breaks_on for p in port.values()) and any(p.portable for p in port.values())  # both branches seen


def _ss(a):
    """Metric and interaction sums of squares of a two-way table, by plain loops."""
    m, d = a.shape
    grand = sum(a[i, j] for i in range(m) for j in range(d)) / (m * d)
    row = [sum(a[i, j] for j in range(d)) / d for i in range(m)]
    col = [sum(a[i, j] for i in range(m)) / m for j in range(d)]
    ss_metric = d * sum((row[i] - grand) ** 2 for i in range(m))
    ss_int = sum((a[i, j] - row[i] - col[j] + grand) ** 2 for i in range(m) for j in range(d))
    return ss_metric, ss_int


@pytest.mark.parametrize("seed", [0, 5])
def test_decomposition_p_values_match_a_loop_over_relabellings(seed):
    rng = np.random.default_rng(seed)
    point = rng.uniform(0.5, 0.9, (4, 3)) + np.array([[0.05], [0.0], [-0.03], [0.02]])
    mat = AurocMatrix(("a", "b", "c", "e"), ("x", "y", "z"), point, np.repeat(point[:, :, None], 2, axis=2))
    n_perm = 400
    dec = decompose(mat, n_perm=n_perm, rng=seed + 100)
    obs_metric, obs_int = _ss(point)
    u = np.random.default_rng(seed + 100).random((n_perm, 3, 4))  # the generator's draws, relabelling per dataset
    ge_metric = ge_int = 0
    for p in range(n_perm):
        shuffled = np.empty_like(point)
        for j in range(3):
            order = np.argsort(u[p, j])
            for i in range(4):
                shuffled[i, j] = point[order[i], j]
        ss_metric, ss_int = _ss(shuffled)
        ge_metric += ss_metric >= obs_metric - 1e-12
        ge_int += ss_int >= obs_int - 1e-12
    assert dec.p_metric == pytest.approx((1 + ge_metric) / (1 + n_perm))
    assert dec.p_interaction == pytest.approx((1 + ge_int) / (1 + n_perm))
    assert 0 < ge_metric < n_perm or 0 < ge_int < n_perm  # the null is not degenerate here
