import numpy as np
import pytest
import scipy.stats as ss

from attrib_audit.stats.rank import kendall_tau_matrix, kendall_w, kendall_w_test, permuted_rank_w, spearman


@pytest.mark.parametrize("ties", [False, True])
def test_kendall_tau_matrix_matches_scipy(ties):
    rng = np.random.default_rng(7)
    for n in (2, 3, 5, 8, 12, 34, 40):  # 34+ forces scipy's asymptotic branch even without ties
        a = rng.random((n, 4))
        if ties:
            a = np.round(a * 3) / 3
        kt = kendall_tau_matrix(a)
        for i in range(4):
            for j in range(4):
                if i == j:
                    continue
                ref = ss.kendalltau(a[:, i], a[:, j])
                np.testing.assert_allclose(kt.tau[i, j], ref.statistic, rtol=1e-12, equal_nan=True)
                np.testing.assert_allclose(kt.pvalue[i, j], ref.pvalue, rtol=1e-9, atol=1e-15, equal_nan=True)
                assert kt.method[i, j] in ("exact", "asymptotic", "undefined")


def test_identical_rankings_give_tau_one_and_inverted_give_minus_one():
    base = np.array([0.9, 0.8, 0.7, 0.6, 0.55, 0.5])
    a = np.column_stack([base, base - 0.1, base[::-1]])  # same ranking, same ranking, inverted
    kt = kendall_tau_matrix(a)
    assert kt.tau[0, 1] == pytest.approx(1.0) and kt.tau[0, 2] == pytest.approx(-1.0)
    assert kt.pvalue[0, 2] == pytest.approx(ss.kendalltau(base, base[::-1]).pvalue)  # exact: 2/6! = 0.00278
    assert kt.pvalue[0, 2] == pytest.approx(2 / 720)


def test_constant_column_is_undefined_like_scipy():
    a = np.array([[0.5, 0.1], [0.5, 0.2], [0.5, 0.3]])
    kt = kendall_tau_matrix(a)
    assert np.isnan(kt.tau[0, 1]) and np.isnan(kt.pvalue[0, 1]) and kt.method[0, 1] == "undefined"
    assert np.isnan(ss.kendalltau(a[:, 0], a[:, 1]).statistic)


def test_kendall_w_matches_friedman_with_ties():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n, k = int(rng.integers(3, 9)), int(rng.integers(2, 7))
        a = rng.integers(0, 4, (n, k)).astype(float)
        if (a == a[0]).all(axis=0).any():  # a rater with all items tied: Friedman divides by zero
            continue
        q = ss.friedmanchisquare(*a).statistic  # Q = k (n − 1) W with the same tie correction
        assert kendall_w(a) == pytest.approx(q / (k * (n - 1)))


def test_kendall_w_relation_to_mean_spearman_without_ties():
    rng = np.random.default_rng(4)
    a = rng.random((8, 6))
    rho = ss.spearmanr(a).statistic
    k = a.shape[1]
    mean_rho = (rho.sum() - k) / (k * (k - 1))
    assert kendall_w(a) == pytest.approx(((k - 1) * mean_rho + 1) / k)


def test_identical_rankings_give_w_one_and_small_p():
    base = np.linspace(0.5, 0.9, 8)
    a = np.column_stack([base + s for s in (0.0, 0.02, -0.05, 0.1, 0.0, 0.03)])
    res = kendall_w_test(a, 10_000, rng=0)
    assert res.w == pytest.approx(1.0)
    assert res.p_concordance == pytest.approx(1 / 10_001)  # no random table reaches W = 1 (8!^5 of them)
    assert res.p_discordance == 1.0


def test_w_permutation_is_seeded_and_null_mean_is_one_over_k():
    rng = np.random.default_rng(5)
    a = rng.random((8, 6))
    r1, r2 = kendall_w_test(a, 10_000, rng=11), kendall_w_test(a, 10_000, rng=11)
    assert r1 == r2
    ranks = np.column_stack([ss.rankdata(c) for c in a.T])
    assert not np.array_equal(permuted_rank_w(ranks, 100, np.random.default_rng(11)),
                              permuted_rank_w(ranks, 100, np.random.default_rng(12)))
    assert r1.null_mean == pytest.approx(1 / 6, abs=0.005)
    assert 0 < r1.p_concordance <= 1 and 0 < r1.p_discordance <= 1
    assert r1.p_concordance + r1.p_discordance >= 1  # the two tails overlap at the observed value


def test_permuted_w_matches_a_plain_loop_on_the_same_permutations():
    rng = np.random.default_rng(6)
    ranks = np.column_stack([ss.rankdata(c) for c in np.round(rng.random((5, 3)) * 4).T])
    vec = permuted_rank_w(ranks, 50, np.random.default_rng(9))
    gen = np.random.default_rng(9)
    keys = gen.random((50, 3, 5))
    for p in range(50):
        shuffled = np.column_stack([ranks[np.argsort(keys[p, j]), j] for j in range(3)])
        assert vec[p] == pytest.approx(kendall_w(shuffled))


@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
def test_spearman_matches_scipy():
    rng = np.random.default_rng(8)
    for n in (3, 4, 10, 10):
        x, y = rng.random(n), np.round(rng.random(n) * 3)
        ref = ss.spearmanr(x, y)
        rho, p = spearman(x, y)
        assert rho == pytest.approx(ref.statistic, nan_ok=True) and p == pytest.approx(ref.pvalue, nan_ok=True)
    assert all(np.isnan(v) for v in spearman(np.ones(4), np.arange(4.0)))
