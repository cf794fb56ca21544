"""Simulated label-until-sure sessions with known AUROCs: the one copy the tests (small) and the bench (1,000
sessions per scenario) both run.

Pools are binormal: K metrics sharing a common factor, prevalence 0.4, metric k's AUROC set by its shift
d_k = √2·Φ⁻¹(AUROC_k); the proxy is good (a noisy logistic of the label), inverted, or pure noise. A session
walks the pool and stops by the rules; its decision is wrong when its claim is false on the pool ("X best within
δ" with X more than δ behind the pool's best; "all within δ" when some metric trails the best by more than δ).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attrib_audit.stats.auroc import auroc
from attrib_audit.stats.ppauroc import RankIndex, bootstrap_fit, fit, fixed_intervals, make_draws
from attrib_audit.stats.until_sure import Session, Settings, run_oracle


@dataclass(frozen=True)
class Scenario:
    """Known AUROCs, the proxy's kind, and the pool and budget a session gets (budget ≥ pool: every pair labelled,
    the without-replacement sequence)."""

    aucs: tuple[float, ...]
    proxy: str
    pool: int = 400
    budget: int = 250


SCENARIOS: dict[str, Scenario] = {
    "separated": Scenario((0.85, 0.78, 0.70), "good"),
    "tie": Scenario((0.80, 0.80, 0.80), "good"),
    "near-tie": Scenario((0.80, 0.77, 0.70), "good"),
    "inverted proxy": Scenario((0.80, 0.77, 0.70), "inverted"),
    "noise proxy": Scenario((0.80, 0.77, 0.70), "noise"),
    "near-tie whole-pool": Scenario((0.80, 0.77, 0.70), "good", pool=250, budget=250),
}


def binormal_pool(n: int, aucs: tuple[float, ...], rng: np.random.Generator,
                  proxy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(K, n) scores, n labels and n proxy probabilities (module docstring).

    Raises:
        ValueError: an unknown proxy kind.
    """
    from scipy.special import ndtri  # deferred like the rest of scipy

    if proxy not in ("good", "inverted", "noise"):
        raise ValueError(f"proxy must be good, inverted or noise, got {proxy!r}")
    y = (rng.random(n) < 0.4).astype(np.int64)
    d = np.sqrt(2) * ndtri(np.asarray(aucs))
    common = rng.normal(size=n)
    scores = d[:, None] * y + np.sqrt(0.5) * common + np.sqrt(0.5) * rng.normal(size=(len(aucs), n))
    z = 2.0 * y - 1 + rng.normal(size=n)
    z = {"good": z, "inverted": -z, "noise": rng.normal(size=n)}[proxy]
    return scores, y, 1 / (1 + np.exp(-z))


def wrong_decision(kind: str, best: int | None, true: np.ndarray, delta: float) -> bool:
    """Whether a stopped session's claim is false on the pool whose AUROCs are `true`."""
    if kind == "best" and best is not None:
        return bool(true[best] < true.max() - delta)
    if kind == "tie":
        return bool(true.max() - true.min() > delta)
    return False


@dataclass(frozen=True)
class Outcome:
    """How one simulated session ended: the decision's kind, labels used, and whether its claim is false."""

    kind: str
    labels: int
    wrong: bool


def simulate_session(sc: Scenario, seed: int, active: bool, delta: float = 0.02, alpha: float = 0.05) -> Outcome:
    """One session on a fresh pool of the scenario (pool and walk seeded by `seed`)."""
    rng = np.random.default_rng([seed, len(sc.aucs), int(1000 * sum(sc.aucs)), sc.pool])
    scores, y, p_hat = binormal_pool(sc.pool, sc.aucs, rng, sc.proxy)
    true = np.array([auroc(s, y) for s in scores])
    names = tuple(f"m{i}" for i in range(len(sc.aucs)))
    st = run_oracle(Session(names, scores, p_hat, Settings(delta=delta, alpha=alpha, budget=sc.budget, active=active,
                                                           seed=seed)), y)
    if st is None:
        return Outcome("budget", 0, False)
    return Outcome(st.decision.kind, st.n_labels, wrong_decision(st.decision.kind, st.decision.best, true, delta))


def fixed_n_coverage(n_labels: int, reps: int, seed: int, n_pool: int = 2000, n_boot: int = 300) -> float:
    """Share of `reps` uniform samples of about `n_labels` labels whose fixed-sample 95% interval (prediction-powered,
    λ tuned, bootstrap) holds the pool's AUROC; one binormal metric (AUROC ≈ 0.76) with a good proxy."""
    rng = np.random.default_rng([seed, n_labels])
    y = (rng.random(n_pool) < 0.4).astype(np.int64)
    s = y * 1.0 + rng.normal(size=n_pool)
    p_hat = 1 / (1 + np.exp(-(2.0 * y - 1 + rng.normal(size=n_pool))))
    index = (RankIndex.of(s),)
    truth = auroc(s, y)
    hits = 0
    for _ in range(reps):
        take = np.flatnonzero(rng.random(n_pool) < n_labels / n_pool)
        d = make_draws(take, y[take], np.full(take.size, n_labels / n_pool), n_pool)
        f = fit(index, p_hat, d)
        iv = fixed_intervals(f.aurocs, bootstrap_fit(index, p_hat, d, f.lams, np.arange(n_pool), n_boot, rng),
                             0.95)[0]
        hits += iv.low <= truth <= iv.high
    return hits / reps
