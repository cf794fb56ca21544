"""Asymptotic confidence sequences (valid under optional stopping) and the stop rules built on them.

Waudby-Smith, Arbour, Sinha, Kennedy, Ramdas, "Time-uniform central limit theory and asymptotic confidence
sequences" (arXiv 2103.06476), Theorem 2.2: for a running mean μ̂_t of t terms whose variance is estimated by
σ̂²_t, the two-sided Robbins normal-mixture boundary

    μ̂_t ± σ̂_t · sqrt( 2(tρ² + 1) / (t²ρ²) · log( sqrt(tρ² + 1) / α ) )

covers the running mean at every t simultaneously with probability → 1 − α. ρ only moves where the sequence is
tightest; it is chosen to minimise the width at a target time t* (here: when the label budget is expected to run out).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BURN_IN_LABELS = 50
BURN_IN_CLASS = 10


def margin(t: np.ndarray | float, rho2: float, alpha: float) -> np.ndarray | float:
    """The unit-variance normal-mixture half-width at time(s) t (the formula in the module docstring)."""
    tt = np.asarray(t, dtype=np.float64)
    v = tt * rho2 + 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.sqrt(2.0 * v / (tt**2 * rho2) * np.log(np.sqrt(v) / alpha))
    return float(out) if np.ndim(out) == 0 else out


def best_rho2(t_star: float, alpha: float) -> float:
    """The ρ² minimising `margin` at t* (a log-grid search refined once; the margin is smooth and unimodal in ρ²).

    Raises:
        ValueError: t* < 1 or α outside (0, 1).
    """
    if t_star < 1 or not 0 < alpha < 1:
        raise ValueError(f"need t* ≥ 1 and 0 < α < 1, got t*={t_star}, α={alpha}")
    grid = np.logspace(-4, 3, 1401) / t_star
    r = grid[int(np.argmin(margin(t_star, grid, alpha)))]  # type: ignore[arg-type]
    fine = np.linspace(r / 1.02, r * 1.02, 401)
    return float(fine[int(np.argmin(margin(t_star, fine, alpha)))])  # type: ignore[arg-type]


def cs_halfwidth(variance: float, t: int, rho2: float, alpha: float) -> float:
    """σ̂ · margin(t): the confidence sequence's half-width for a mean of t terms of variance σ̂²."""
    if t < 2 or not np.isfinite(variance):
        return float("inf")
    return float(np.sqrt(variance) * margin(t, rho2, alpha))


@dataclass(frozen=True)
class PairInterval:
    """AUROC_a − AUROC_b with its anytime-valid interval (level α/(K−1))."""

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
    intervals matter, each missing with probability α/(K−1).
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
