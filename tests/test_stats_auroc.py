import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from attrib_audit.stats import auroc, average_ranks, weighted_auroc


@pytest.mark.parametrize("seed", range(5))
def test_auroc_matches_sklearn_with_ties(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 500)
    s = np.round(rng.normal(size=500) + 0.7 * y, 1)  # rounding makes many ties
    assert abs(auroc(s, y) - roc_auc_score(y, s)) < 1e-12


def test_auroc_hand_computed():
    # pos {0.9, 0.5}, neg {0.5, 0.1}: pairs (0.9>0.5)=1, (0.9>0.1)=1, (0.5=0.5)=1/2, (0.5>0.1)=1 -> 3.5/4
    assert auroc(np.array([0.9, 0.5, 0.5, 0.1]), np.array([1, 1, 0, 0])) == pytest.approx(0.875, abs=1e-15)


def test_auroc_extremes_and_undefined():
    assert auroc(np.array([1.0, 2.0]), np.array([0, 1])) == 1.0
    assert auroc(np.array([2.0, 1.0]), np.array([0, 1])) == 0.0
    assert auroc(np.array([3.0, 3.0]), np.array([0, 1])) == 0.5
    assert np.isnan(auroc(np.array([1.0, 2.0]), np.array([1, 1])))


def test_auroc_rejects_nan_and_non_binary():
    with pytest.raises(ValueError, match="NaN"):
        auroc(np.array([np.nan, 1.0]), np.array([0, 1]))
    with pytest.raises(ValueError, match="0/1"):
        auroc(np.array([0.2, 1.0]), np.array([0, 2]))


def test_average_ranks_match_scipy():
    x = np.random.default_rng(3).integers(0, 20, 300).astype(float)
    np.testing.assert_allclose(average_ranks(x), rankdata(x, method="average"))


def test_weighted_average_ranks_are_the_ranks_of_rows_repeated():
    rng = np.random.default_rng(5)
    x = np.round(rng.random(40) * 6)  # ties
    k = rng.integers(1, 5, 40)
    first = np.cumsum(k) - k  # where each row's first copy lands in np.repeat
    np.testing.assert_allclose(average_ranks(x, k), rankdata(np.repeat(x, k), method="average")[first])
    np.testing.assert_allclose(average_ranks(x, np.ones(40)), rankdata(x, method="average"))


def test_weighted_auroc_equals_auroc_of_expanded_sample():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 60)
    s = np.round(rng.normal(size=60) + y, 1)
    w = rng.integers(0, 4, size=(25, 60)).astype(float)
    got = weighted_auroc(s, y, w)
    for b in range(25):
        rep = np.repeat(np.arange(60), w[b].astype(int))
        want = roc_auc_score(y[rep], s[rep]) if len(set(y[rep])) == 2 else np.nan
        assert (np.isnan(want) and np.isnan(got[b])) or abs(got[b] - want) < 1e-12


@pytest.mark.parametrize("shape", [(1, 5), (7, 63), (7, 64), (300, 200)])
def test_cumsum_down_is_numpys_cumsum_bit_for_bit(shape):
    """The row-loop cumulative sum the clustered bootstrap uses adds in numpy's order: identical, not just close."""
    from attrib_audit.stats.auroc import _cumsum_down

    a = np.random.default_rng(shape[0]).random(shape) * 1e3
    assert np.array_equal(_cumsum_down(a), np.cumsum(a, axis=0))


def test_clustered_bootstrap_matches_a_loop_over_resamples():
    """cluster_auroc for B resamples at once equals sklearn on each resample's rows repeated by their cluster's
    count."""
    from attrib_audit.stats.auroc import cluster_auroc

    rng = np.random.default_rng(3)
    s, y = rng.integers(0, 12, 90) / 12, rng.random(90) < 0.4
    codes = rng.integers(0, 30, 90)
    counts = rng.poisson(1.0, (80, 30)).astype(float)
    got = cluster_auroc(s, y, codes, counts)
    for b in range(80):
        rep = counts[b, codes].astype(int)
        yy, ss = np.repeat(y, rep), np.repeat(s, rep)
        want = roc_auc_score(yy, ss) if 0 < yy.sum() < yy.size else np.nan
        assert np.isclose(got[b], want, equal_nan=True)


@pytest.mark.parametrize("n_boot", [2, 3, 257, 700])
def test_clustered_bootstrap_blocks_change_no_bit(monkeypatch, n_boot):
    """Resamples are computed a block at a time; any block width gives the very same floats (weighted rows too)."""
    import importlib

    mod = importlib.import_module("attrib_audit.stats.auroc")  # the module: the package exports a function of its name
    rng = np.random.default_rng(n_boot)
    s, y = rng.random(300).round(2), rng.random(300) < 0.3
    codes, w = rng.integers(0, 90, 300), rng.random(300) + 0.05
    counts = rng.poisson(1.0, (n_boot, 90)).astype(float)
    whole = mod.cluster_auroc(s, y, codes, counts, w)
    monkeypatch.setattr(mod, "_MIN_WIDTH", 2)
    monkeypatch.setattr(mod, "_BLOCK_CELLS", 1)
    assert np.array_equal(mod.cluster_auroc(s, y, codes, counts, w), whole, equal_nan=True)
