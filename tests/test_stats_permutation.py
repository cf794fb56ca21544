"""The vectorised permutation tests (Kendall's W, the decomposition's relabelling) against plain loops
that draw the same keys: identical p-values for the same seed, and the values pinned before vectorising."""
import numpy as np
import pytest

from attrib_audit.stats import rank
from attrib_audit.stats.rank import column_ranks, kendall_w, kendall_w_test, permuted_row_sums
from attrib_audit.stats.transfer import AurocMatrix, decompose


def loop_row_sums(columns: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """One table: column j is reordered by the stable argsort of n fresh uniform keys."""
    return np.sum([columns[j][np.argsort(gen.random(columns.shape[1]), kind="stable")]
                   for j in range(columns.shape[0])], axis=0)


def loop_w_p(matrix: np.ndarray, n_perm: int, seed: int) -> tuple[float, float]:
    gen, ranks, w = np.random.default_rng(seed), column_ranks(matrix), kendall_w(matrix)
    n, k = ranks.shape
    tie = sum(float((c ** 3 - c).sum()) for c in (np.unique(col, return_counts=True)[1] for col in ranks.T))
    null = []
    for _ in range(n_perm):
        r = loop_row_sums(ranks.T, gen)
        null.append(12.0 * float(((r - r.mean()) ** 2).sum()) / (k * k * (n ** 3 - n) - k * tie))
    null = np.array(null)
    return (1 + (null >= w - 1e-12).sum()) / (1 + n_perm), (1 + (null <= w + 1e-12).sum()) / (1 + n_perm)


def loop_decompose_p(a: np.ndarray, n_perm: int, seed: int) -> tuple[float, float]:
    gen, d = np.random.default_rng(seed), a.shape[1]
    mu = a.mean()
    resid = a - a.mean(axis=0) - a.mean(axis=1, keepdims=True) + mu
    ss_total, ss_int = ((a - mu) ** 2).sum(), (resid ** 2).sum()
    centred = a - a.mean(axis=0)
    ss_within, ss_metric = (centred ** 2).sum(), d * ((a.mean(axis=1) - mu) ** 2).sum()
    null = []
    for _ in range(n_perm):
        rows = loop_row_sums(centred.T, gen) / d
        null.append(d * ((rows - rows.mean()) ** 2).sum())
    null, tol = np.array(null), 1e-12 * ss_total
    return ((1 + ((ss_within - null) >= ss_int - tol).sum()) / (1 + n_perm),
            (1 + (null >= ss_metric - tol).sum()) / (1 + n_perm))


def _matrix(a: np.ndarray) -> AurocMatrix:
    m, d = a.shape
    return AurocMatrix(tuple(f"m{i}" for i in range(m)), tuple(f"d{j}" for j in range(d)), a, np.zeros((m, d, 1)))


@pytest.mark.parametrize("shape,ties", [((8, 6), False), ((5, 4), True), ((12, 3), True), ((2, 2), False)])
def test_w_p_values_equal_the_loop_on_the_same_seed(shape, ties):
    a = np.random.default_rng(sum(shape)).uniform(0.5, 0.95, shape)
    if ties:
        a = np.round(a * 8) / 8
    res = kendall_w_test(a, 400, rng=7)
    assert (res.p_concordance, res.p_discordance) == loop_w_p(a, 400, 7)


@pytest.mark.parametrize("shape", [(8, 6), (4, 3), (10, 2)])
def test_decomposition_p_values_equal_the_loop_on_the_same_seed(shape):
    a = np.random.default_rng(shape[0]).uniform(0.5, 0.95, shape)
    dc = decompose(_matrix(a), 400, rng=3)
    assert (dc.p_interaction, dc.p_metric) == loop_decompose_p(a, 400, 3)


def test_p_values_pinned_from_the_argsort_implementation():
    """Same seed, same p-values as the earlier take_along_axis(argsort(rng.random)) code."""
    a = np.random.default_rng(0).uniform(0.5, 0.95, (8, 6))
    w = kendall_w_test(a, 10_000, rng=1)
    assert (w.p_concordance, w.p_discordance, w.null_mean) == (
        0.5782421757824218, 0.42925707429257076, 0.16601137566137567)
    tied = np.round(np.random.default_rng(2).random((5, 4)) * 4) / 4
    w = kendall_w_test(tied, 5000, rng=3)
    assert (w.p_concordance, w.p_discordance) == (0.4371125774845031, 0.5924815036992601)
    assert w.null_mean == pytest.approx(0.2541637096774193, rel=1e-12)
    dc = decompose(_matrix(a), 10_000, rng=4)
    assert (dc.p_interaction, dc.p_metric) == (0.3982601739826017, 0.6018398160183982)


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64])
@pytest.mark.parametrize("n", [1, 2, 8, 9, 40])
def test_integer_sort_orders_equal_the_stable_argsort_of_random(bitgen, n):
    index = np.tile(np.arange(n, dtype=np.uint64), (30, 3, 1))
    orders = rank._key_orders(np.random.Generator(bitgen(5)), index, np.zeros_like(index))
    expected = np.argsort(np.random.Generator(bitgen(5)).random((30, 3, n)), axis=-1, kind="stable")
    np.testing.assert_array_equal(orders, expected)


def test_blocks_do_not_change_the_draws(monkeypatch):
    cols = np.random.default_rng(1).random((5, 7))
    whole = permuted_row_sums(cols, 300, np.random.default_rng(9))
    monkeypatch.setattr(rank, "_BLOCK_CELLS", 40)  # one permutation per block
    np.testing.assert_array_equal(permuted_row_sums(cols, 300, np.random.default_rng(9)), whole)
    gen = np.random.default_rng(9)
    np.testing.assert_allclose(whole, [loop_row_sums(cols, gen) for _ in range(300)], rtol=1e-15)
