"""Robustness statistics against hand computations, explicit loops and scipy."""
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from attrib_audit.stats.auroc import auroc
from attrib_audit.stats.bootstrap import bootstrap_aurocs, cluster_count_blocks, group_codes
from attrib_audit.stats.sensitivity import (
    assign_bins,
    class_spearman,
    cluster_permutations,
    drop_dataset,
    exchangeability_test,
    median_halves,
    quantile_edges,
    ranking,
    subset_bootstrap,
    two_way_ss,
)
from attrib_audit.stats.transfer import AurocMatrix, decompose


def test_quantile_bins_by_hand():
    x = np.arange(1, 11)
    edges = quantile_edges(x, 3)
    np.testing.assert_allclose(edges, [1, 4, 7, 10])  # 1 + 9/3, 1 + 18/3
    assert assign_bins(x, edges).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 2]
    assert quantile_edges([5, 5, 5, 9], 4).tolist() == [5, 6, 9]  # tied quantiles merge
    assert median_halves([3, 1, 2, 10]).tolist() == [[False, True, True, False], [True, False, False, True]]


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n // 2, int), np.zeros(n - n // 2, int)]
    groups = rng.integers(0, 20, n)
    s = np.vstack([y + rng.normal(0, 1, n), rng.normal(0, 1, n)])
    s[1, 3] = np.nan
    return s, y, groups, rng


def test_subset_bootstrap_point_and_replicates_against_a_loop():
    s, y, groups, rng = _data()
    lengths = rng.integers(5, 100, y.size)
    masks = median_halves(lengths)
    res = subset_bootstrap(s, y, groups, masks, n_boot=50, rng=np.random.default_rng(7))
    codes = group_codes(groups)
    counts = next(cluster_count_blocks(int(codes.max()) + 1, 50, np.random.default_rng(7), width=y.size))
    for i in range(2):
        for j in range(2):
            r = masks[j] & np.isfinite(s[i])
            assert res.point[i, j] == pytest.approx(roc_auc_score(y[r], s[i, r]))
            assert res.n[i, j] == r.sum() and res.n_pos[i, j] == y[r].sum()
            for b in (0, 17, 49):  # resample b: each row repeated as often as its cluster was drawn
                w = counts[b, codes[r]].astype(int)
                ys, ss = np.repeat(y[r], w), np.repeat(s[i, r], w)
                expect = roc_auc_score(ys, ss) if 0 < ys.sum() < ys.size else np.nan
                assert res.replicates[i, j, b] == pytest.approx(expect, nan_ok=True)
    whole = subset_bootstrap(s, y, groups, np.ones((1, y.size), bool), n_boot=50, rng=np.random.default_rng(3))
    ref = bootstrap_aurocs(s, y, groups, n_boot=50, rng=np.random.default_rng(3))
    np.testing.assert_allclose(whole.replicates[:, 0], ref.replicates)  # the audit's own draws


def test_class_spearman_matches_scipy():
    s, y, _, rng = _data(1)
    lengths = rng.integers(5, 100, y.size)
    rho, p, n = class_spearman(s, lengths, y)
    for i in range(2):
        for c in (0, 1):
            r = (y == c) & np.isfinite(s[i])
            ref = spearmanr(s[i, r], lengths[r])
            assert rho[i, c] == pytest.approx(ref.statistic) and p[i, c] == pytest.approx(ref.pvalue)
            assert n[i, c] == r.sum()


def test_two_way_ss_matches_decompose():
    a = np.array([[0.7, 0.6, 0.9], [0.8, 0.5, 0.6], [0.65, 0.7, 0.75]])
    mat = AurocMatrix(("a", "b", "c"), ("x", "y", "z"), a, np.zeros((3, 3, 1)))
    dc = decompose(mat, n_perm=10)
    ss_d, ss_m, ss_i = two_way_ss(a)
    assert ss_d / dc.ss_total == pytest.approx(dc.share_dataset)
    assert ss_m / dc.ss_total == pytest.approx(dc.share_metric)
    assert ss_i / dc.ss_total == pytest.approx(dc.share_interaction)
    np.testing.assert_allclose(two_way_ss(np.stack([a, a.T]))[2], [ss_i, two_way_ss(a.T)[2]])


def test_exchangeability_against_an_explicit_loop():
    rng = np.random.default_rng(4)
    n_clusters = 24
    cluster_ds = np.repeat([0, 1, 2], 8)
    row_cluster = np.repeat(np.arange(n_clusters), 3)  # three rows per cluster
    y = rng.integers(0, 2, row_cluster.size)
    s = np.vstack([2 * y * cluster_ds[row_cluster] + rng.normal(0, 1, y.size),
                   y * cluster_ds[row_cluster] + rng.normal(0, 1, y.size)])
    res = exchangeability_test(s, y, row_cluster, cluster_ds, 200, np.random.default_rng(9))
    assign = cluster_permutations(cluster_ds, 200, np.random.default_rng(9))
    assert (np.sort(assign, axis=1) == np.sort(cluster_ds)).all()  # each dataset keeps its number of clusters

    def table(lab):
        ds = lab[row_cluster]
        return np.array([[auroc(s[i, ds == j], y[ds == j]) for j in range(3)] for i in range(2)])

    obs = two_way_ss(table(cluster_ds))
    assert res.ss_interaction == pytest.approx(obs[2]) and res.ss_dataset == pytest.approx(obs[0])
    null = np.array([two_way_ss(table(a)) for a in assign])
    ok = np.isfinite(null).all(axis=1)
    assert res.n_perm_dropped == int((~ok).sum())
    assert res.p_interaction == pytest.approx((1 + (null[ok, 2] >= obs[2] - 1e-12).sum()) / (1 + ok.sum()))
    assert res.p_dataset == pytest.approx((1 + (null[ok, 0] >= obs[0] - 1e-12).sum()) / (1 + ok.sum()))
    assert res.p_dataset < 0.05  # dataset 2's metric separates far better: datasets are not exchangeable


def test_drop_dataset_and_ranking():
    mat = AurocMatrix(("a", "b"), ("x", "y", "z"), np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]),
                      np.arange(12.0).reshape(2, 3, 2))
    sub = drop_dataset(mat, "y")
    assert sub.datasets == ("x", "z") and sub.point.tolist() == [[0.1, 0.3], [0.4, 0.6]]
    assert sub.replicates[1, 1].tolist() == [10.0, 11.0]
    with pytest.raises(ValueError, match="not in the matrix"):
        drop_dataset(mat, "w")
    assert ranking(["a", "b", "c"], np.array([0.5, np.nan, 0.7])) == ["c", "a", "b"]
