"""Prediction-powered AUROC: the O(N log N) sums against loops, λ = 0 against the Horvitz–Thompson AUROC,
unbiasedness of N̂ and D̂ under Poisson sampling, the PPI mean against ppi-python, and fixed-n CI coverage."""
from __future__ import annotations

import numpy as np
import ppi_py
import pytest

from attrib_audit.stats.auroc import auroc, ht_auroc
from attrib_audit.stats.ppauroc import (
    RankIndex,
    fit,
    kernel_sum,
    kernel_sums,
    kernel_sums_linear,
    make_draws,
    pp_auroc,
    pp_mean,
)
from attrib_audit.stats.until_sure_sim import fixed_n_coverage


def loop_sum(s: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    total = 0.0
    for i in range(s.size):
        for j in range(s.size):
            if i != j:
                total += a[i] * b[j] * (1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0)
    return total


def test_kernel_sum_matches_the_quadratic_loop_with_ties() -> None:
    rng = np.random.default_rng(0)
    s = np.round(rng.normal(size=60), 1)  # many ties
    a, b = rng.random(60), rng.random(60)
    assert kernel_sum(RankIndex.of(s), a, b) == pytest.approx(loop_sum(s, a, b), rel=1e-12)


def test_kernel_sums_count_resampled_copies_like_the_expanded_rows() -> None:
    rng = np.random.default_rng(1)
    s = np.round(rng.normal(size=25), 1)
    a, b = rng.random(25), rng.random(25)
    m = rng.integers(0, 3, size=(4, 25)).astype(float)
    got = kernel_sums(RankIndex.of(s), m, a, b)
    for row, mult in zip(got, m):
        rep = np.repeat(np.arange(25), mult.astype(int))
        assert row == pytest.approx(loop_sum(s[rep], a[rep], b[rep]), rel=1e-12)


def test_linear_kernel_sums_match_the_exact_ones_on_a_pool() -> None:
    rng = np.random.default_rng(7)
    n = 3000
    s = np.round(rng.normal(size=n), 2)
    p = rng.random(n)
    m = rng.multinomial(n, np.full(n, 1 / n), size=20).astype(float)
    index = RankIndex.of(s)
    exact = kernel_sums(index, m, p, 1 - p)
    approx = kernel_sums_linear(index, m, p, 1 - p)
    assert np.allclose(approx, exact, rtol=2e-3)
    spread = exact - kernel_sum(index, p, 1 - p)  # the part the bootstrap reads: the error is small beside it
    assert np.abs(approx - exact).max() < 0.05 * np.abs(spread).max()


def poisson_draws(y: np.ndarray, pi: np.ndarray, rng: np.random.Generator, visited: int | None = None):
    n = y.size
    walk = rng.permutation(n)[: visited or n]
    take = walk[rng.random(walk.size) < pi[walk]]
    return make_draws(take, y[take], pi[take], n, visited)


def test_lambda_zero_is_the_horvitz_thompson_auroc() -> None:
    rng = np.random.default_rng(2)
    n = 400
    y = (rng.random(n) < 0.35).astype(int)
    s = np.round(y + rng.normal(size=n), 1)
    pi = rng.uniform(0.05, 0.9, size=n)
    d = poisson_draws(y, pi, rng)
    est = pp_auroc(RankIndex.of(s), rng.random(n), d, 0.0)
    assert est.auroc == pytest.approx(ht_auroc(s[d.labelled], d.labels, 1.0 / d.pi), rel=1e-12, abs=1e-14)
    full = make_draws(np.arange(n), y, np.ones(n), n)  # every pair labelled: the plain AUROC
    assert pp_auroc(RankIndex.of(s), rng.random(n), full, 0.0).auroc == pytest.approx(auroc(s, y), rel=1e-12)


@pytest.mark.parametrize("visited", [None, 150])
def test_augmented_numerator_and_denominator_are_unbiased(visited: int | None) -> None:
    """Mean of N̂ and D̂ over Poisson draws (and random walk prefixes) within 3 Monte-Carlo s.e. of the truth."""
    rng = np.random.default_rng(3)
    n = 200
    y = (rng.random(n) < 0.4).astype(int)
    s = np.round(y * 0.8 + rng.normal(size=n), 1)
    p_hat = np.clip(0.4 + 0.3 * (y - 0.4) + 0.2 * rng.normal(size=n), 0.02, 0.98)  # fixed before any label
    pi = np.clip(0.1 + 0.5 * rng.random(n), 0, 1)
    index = RankIndex.of(s)
    truth = pp_auroc(index, p_hat, make_draws(np.arange(n), y, np.ones(n), n), 0.0)
    reps = np.array([[e.numerator, e.denominator] for e in
                     (pp_auroc(index, p_hat, poisson_draws(y, pi, rng, visited), 0.6) for _ in range(600))])
    se = reps.std(axis=0, ddof=1) / np.sqrt(len(reps))
    assert abs(reps[:, 0].mean() - truth.numerator) < 3 * se[0]
    assert abs(reps[:, 1].mean() - truth.denominator) < 3 * se[1]


def test_augmented_mean_is_ppi_pythons_mean() -> None:
    rng = np.random.default_rng(4)
    n, k = 500, 80
    y = (rng.random(n) < 0.3).astype(float)
    p_hat = np.clip(y * 0.5 + 0.3 * rng.random(n), 0, 1)
    take = rng.choice(n, k, replace=False)
    d = make_draws(take, y[take], np.full(k, k / n), n)
    for lam in (1.0, 0.3):
        ref = ppi_py.ppi_mean_pointestimate(y[take], p_hat[take], p_hat, lam=lam)
        assert pp_mean(p_hat, d, lam) == pytest.approx(float(np.ravel(ref)[0]), rel=1e-12)


def test_tuned_lambda_uses_a_good_proxy_and_drops_a_noise_one() -> None:
    rng = np.random.default_rng(5)
    n = 3000
    y = (rng.random(n) < 0.4).astype(int)
    s = np.vstack([y + rng.normal(size=n)])
    pi = np.full(n, 0.1)
    d = poisson_draws(y, pi, rng)
    good = fit((RankIndex.of(s[0]),), np.clip(0.1 + 0.8 * y, 0, 1), d)
    noise = fit((RankIndex.of(s[0]),), rng.random(n), d)
    assert good.lams[0] > 0.7 and noise.lams[0] < 0.3


def test_fixed_sample_interval_covers_at_nominal_rate() -> None:
    """Coverage of the pool AUROC by the 95% bootstrap interval at 50, 100, 250, 500 labels ≥ nominal − 2 MC s.e.
    (the bench's function, fewer samples)."""
    reps = 60
    for n_lab in (50, 100, 250, 500):
        cover = fixed_n_coverage(n_lab, reps, seed=6, n_pool=1000, n_boot=150)
        assert cover >= 0.95 - 2 * np.sqrt(0.95 * 0.05 / reps), (n_lab, cover)
