"""Cohen's kappa against sklearn, confusion matrices, and the clustered bootstrap of kappa."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion

from attrib_audit.stats.agreement import clustered_kappa_ci, cohen_kappa, confusion_matrix
from attrib_audit.stats.bootstrap import cluster_count_blocks, group_codes


@pytest.mark.parametrize("seed", range(6))
def test_kappa_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(5, 300)), int(rng.integers(2, 5))
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < 0.6, a, rng.integers(0, k, n))
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    labels, cm = confusion_matrix(a, b, labels=list(range(k)))
    np.testing.assert_array_equal(cm, sk_confusion(a, b, labels=list(range(k))))


def test_kappa_known_answers_and_strings():
    assert cohen_kappa([0, 1, 0, 1], [0, 1, 1, 1]) == pytest.approx(0.5)
    assert cohen_kappa([1, 1, 0], [1, 1, 1]) == pytest.approx(0.0)
    assert np.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))  # p_e = 1: undefined, as sklearn
    a, b = ["yes", "no", "yes", "no", "yes"], ["yes", "no", "no", "no", "yes"]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    with pytest.raises(ValueError):
        cohen_kappa([0, 2], [0, 1], labels=[0, 1])


def test_clustered_kappa_replicates_equal_direct_resamples():
    """The matrix-product bootstrap gives exactly kappa of each explicitly resampled data set."""
    rng = np.random.default_rng(3)
    n = 60
    groups = rng.integers(0, 15, n).astype(str)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.7, a, 1 - a)
    est = clustered_kappa_ci(a, b, groups, labels=[0, 1], n_boot=50, seed=np.random.default_rng(9))
    codes = group_codes(groups)
    counts = next(cluster_count_blocks(int(codes.max()) + 1, 50, np.random.default_rng(9), width=6))
    direct = []
    for row in counts:
        rows = np.repeat(np.arange(n), row[codes].astype(int))
        direct.append(cohen_kappa_score(a[rows], b[rows], labels=[0, 1]))
    lo, hi = np.quantile(direct, [0.025, 0.975])
    assert est.ci_low == pytest.approx(lo) and est.ci_high == pytest.approx(hi)
    assert est.estimate == pytest.approx(cohen_kappa_score(a, b))
    assert est.n == n and est.n_groups == 15 and est.n_boot_dropped == 0


def test_clustered_kappa_is_seeded_and_covers_truth():
    rng = np.random.default_rng(0)
    n = 400
    groups = np.repeat(np.arange(100), 4).astype(str)
    a = rng.integers(0, 2, n)
    b = np.where(rng.random(n) < 0.8, a, rng.integers(0, 2, n))
    e1 = clustered_kappa_ci(a, b, groups, n_boot=300, seed=1)
    e2 = clustered_kappa_ci(a, b, groups, n_boot=300, seed=1)
    assert (e1.ci_low, e1.ci_high) == (e2.ci_low, e2.ci_high)
    assert e1.ci_low < e1.estimate < e1.ci_high and e1.ci_high - e1.ci_low < 0.25
