"""Asymptotic confidence sequences (valid under optional stopping) and the stop rules built on them.

Waudby-Smith, Arbour, Sinha, Kennedy, Ramdas, "Time-uniform central limit theory and asymptotic confidence
sequences" (arXiv 2103.06476), Theorem 2.2: for a running mean μ̂_t of t terms whose variance is estimated by
σ̂²_t, the two-sided Robbins normal-mixture boundary

    μ̂_t ± σ̂_t · sqrt( 2(tρ² + 1) / (t²ρ²) · log( sqrt(tρ² + 1) / α ) )

covers the running mean at every t simultaneously with probability → 1 − α. ρ only moves where the sequence is
tightest; it is chosen to minimise the width at a target time t* (here: when the label budget is expected to run out).

The stop rules only ever need one side of each interval (`decide`), so each side is the one-sided boundary at α:
the half-normal mixture of the same martingale (Howard, Ramdas, McAuliffe, Sekhon, "Time-uniform, nonparametric,
nonasymptotic confidence sequences", arXiv 1810.08240, eq. (14)), whose Ville bound at 1/α reads, with
v = tρ² + 1 and u = ρ·S_t/√v (S_t = t·μ̂_t / σ̂),

    u²/2 + log Φ(u) = log( √v / (2α) ),   half-width σ̂ · u √v / (ρ t)

(`margin(..., one_sided=True)`); it lies between the two-sided boundary at 2α and at α.

Sampling without replacement (every visited pair labelled: a budget at least the pool): the pool is finite and the
walk a uniformly random order of it, so x_i − m_i is a martingale difference, m_i = (N·x̄_pool − S_{i−1})/(N − i + 1)
the mean of the pairs not yet visited (Waudby-Smith and Ramdas, "Confidence sequences for sampling without
replacement", arXiv 2006.04347, section 3). Summing, x̄_pool = (Σ_i x_i + Σ_i S_{i−1}/(N−i+1) − Σ_i D_i) / (N·H_t),
H_t = Σ_{i≤t} 1/(N−i+1), and the boundary on Σ D_i (t times the mean's) gives `wor_interval`: narrower than the
with-replacement one by t/(N·H_t) ≤ 1, and exact once the pool is walked.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BURN_IN_LABELS = 50
BURN_IN_CLASS = 10


def margin(t: np.ndarray | float, rho2: float | np.ndarray, alpha: float,
           one_sided: bool = False) -> np.ndarray | float:
    """The unit-variance normal-mixture half-width at time(s) t: two-sided, or one-sided at α (module docstring)."""
    tt = np.asarray(t, dtype=np.float64)
    r2 = np.asarray(rho2, dtype=np.float64)
    v = tt * r2 + 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        if not one_sided:
            out = np.sqrt(2.0 * v / (tt**2 * r2) * np.log(np.sqrt(v) / alpha))
        else:
            out = _half_normal_root(np.log(np.sqrt(v) / (2.0 * alpha))) * np.sqrt(v) / (np.sqrt(r2) * tt)
    return float(out) if np.ndim(out) == 0 else out


def _half_normal_root(c: np.ndarray) -> np.ndarray:
    """The u ≥ 0 with u²/2 + log Φ(u) = c (c ≥ 0), by bisection between √(2c) and √(2(c + log 2)).

    The left side increases in u and log Φ(u) ∈ [−log 2, 0] for u ≥ 0, so the root lies in that bracket.
    """
    from scipy.special import log_ndtr  # deferred like the rest of scipy

    cc = np.maximum(np.asarray(c, dtype=np.float64), 0.0)
    lo, hi = np.sqrt(2.0 * cc), np.sqrt(2.0 * (cc + np.log(2.0)))
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        above = mid**2 / 2 + log_ndtr(mid) > cc
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    return 0.5 * (lo + hi)


def best_rho2(t_star: float, alpha: float, one_sided: bool = False) -> float:
    """The ρ² minimising `margin` at t* (a log-grid search refined once; the margin is smooth and unimodal in ρ²).

    Raises:
        ValueError: t* < 1 or α outside (0, 1).
    """
    if t_star < 1 or not 0 < alpha < 1:
        raise ValueError(f"need t* ≥ 1 and 0 < α < 1, got t*={t_star}, α={alpha}")
    grid = np.logspace(-4, 3, 1401) / t_star
    r = grid[int(np.argmin(margin(t_star, grid, alpha, one_sided)))]
    fine = np.linspace(r / 1.02, r * 1.02, 401)
    return float(fine[int(np.argmin(margin(t_star, fine, alpha, one_sided)))])


def cs_halfwidth(variance: float, t: int, rho2: float, alpha: float, one_sided: bool = False) -> float:
    """σ̂ · margin(t): the confidence sequence's half-width for a mean of t terms of variance σ̂²."""
    if t < 2 or not np.isfinite(variance):
        return float("inf")
    return float(np.sqrt(variance) * margin(t, rho2, alpha, one_sided))


def wor_interval(terms: np.ndarray, pool_size: int, unit_margin: float) -> tuple[float, float]:
    """(shift, half-width) of the without-replacement sequence for the pool mean of `terms` (module docstring).

    `terms` are the first t values of a uniformly random walk of a pool of N, in walk order; `unit_margin` is
    `margin` at t. The pool mean lies in x̄_t + shift ± half-width, shift = ĉ_t − x̄_t with
    ĉ_t = (Σ x_i + Σ S_{i−1}/(N−i+1)) / (N·H_t); the half-width is the with-replacement one times t/(N·H_t). The
    martingale differences' variance is estimated by the terms' own.

    Raises:
        ValueError: more terms than the pool holds.
    """
    x = np.asarray(terms, dtype=np.float64)
    t, n = x.size, int(pool_size)
    if t > n:
        raise ValueError(f"{t} terms from a pool of {n}")
    if t < 2 or not np.isfinite(unit_margin):
        return 0.0, float("inf")
    w = 1.0 / (n - np.arange(t))  # 1/(N − i + 1), i = 1..t
    before = np.r_[0.0, np.cumsum(x)[:-1]]
    nh = n * float(w.sum())
    centre = (float(x.sum()) + float(before @ w)) / nh
    half = float(np.sqrt(x.var())) * unit_margin * t / nh
    return centre - float(x.mean()), half


@dataclass(frozen=True, kw_only=True)
class PairInterval:
    """AUROC_a − AUROC_b with its anytime-valid bounds, each one-sided at level α/(K−1) (`decide` reads one side
    of each pair only)."""

    a: int
    b: int
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class Decision:
    """What the stop rules say now.

    kind: "burn-in" (too few labels to look), "continue", "best" (`best` is within δ of every metric),
    "tie" (every metric within δ of the best), "budget" (labels spent without either).
    """

    kind: str
    best: int | None
    message: str

    @property
    def stopped(self) -> bool:
        return self.kind in ("best", "tie", "budget")


def decide(names: tuple[str, ...], aurocs: np.ndarray, pairs: tuple[PairInterval, ...], delta: float, alpha: float,
           n_labels: int, class_counts: tuple[int, int], budget_spent: bool) -> Decision:
    """The stop rules, in order: burn-in, tie, best within δ, budget.

    Why these are valid at level α with intervals at α/(K−1): "X is best within δ" is false only if the true best
    metric k* beats X by more than δ, which needs the interval of the pair (X, k*) to miss; "all within δ" is false
    only if some metric trails k* by more than δ, again a miss on a pair holding k*. k* is fixed, so at most K−1
    intervals matter, each missing with probability α/(K−1). Both failures are the same one-sided miss: the upper
    bound of AUROC_k* − AUROC_X (the lower of X − k*) falling below the truth. So each bound of a pair is a
    one-sided sequence at α/(K−1), and of the pair holding k* only the side facing k* can cause an error.
    """
    level = f"{1 - alpha:.0%}"
    if n_labels < BURN_IN_LABELS or min(class_counts) < BURN_IN_CLASS:
        return Decision("burn-in", None, f"burn-in: {n_labels} labels ({class_counts[1]} supported, "
                                         f"{class_counts[0]} not); need ≥ {BURN_IN_LABELS} and ≥ {BURN_IN_CLASS} "
                                         "of each class before any stop")
    leader = int(np.nanargmax(aurocs)) if np.isfinite(aurocs).any() else 0
    if pairs and all(-delta < p.low and p.high < delta for p in pairs):
        return Decision("tie", leader, f"tied: every metric is within {delta:g} AUROC of the best, at confidence "
                                       f"{level}; pick the cheapest")
    against = [p for p in pairs if leader in (p.a, p.b)]
    lows = [p.low if p.a == leader else -p.high for p in against]
    if against and all(lo > -delta for lo in lows):
        return Decision("best", leader, f"{names[leader]} is the best for this data within {delta:g} AUROC, at "
                                        f"confidence {level}")
    if budget_spent:
        return Decision("budget", None, "budget spent (or the pool walked) before a stop rule held: the standings "
                                        "use fixed-sample intervals and decide nothing")
    return Decision("continue", None, "keep labelling: no stop rule holds yet")
