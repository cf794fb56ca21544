"""Sampling designs with exact inclusion probabilities, so a labelled sample can be weighted back to its pool.

Pure numpy: every function takes unit-level arrays and a Generator and returns indices or
probabilities. A unit is a pair, or a cluster of pairs when sampling by cluster.
"""
from __future__ import annotations

import numpy as np

from attrib_audit.stats.auroc import average_ranks


def pps_probabilities(size: np.ndarray, n: int) -> np.ndarray:
    """π_i ∝ size_i with Σπ = n; units whose share would exceed 1 are taken with certainty (π = 1)."""
    size = np.asarray(size, dtype=np.float64)
    if n > size.size:
        raise ValueError(f"cannot sample {n} of {size.size} units")
    if not (np.isfinite(size).all() and (size > 0).all()):
        raise ValueError("size measures must be positive and finite")
    pi = np.zeros(size.size)
    certain = np.zeros(size.size, dtype=bool)
    while True:
        rest = ~certain
        pi[rest] = (n - certain.sum()) * size[rest] / size[rest].sum()
        new = rest & (pi >= 1.0)
        if not new.any():
            break
        certain |= new
    pi[certain] = 1.0
    return pi


def systematic_sample(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Systematic πps sampling over a random order: exactly Σπ units, unit i drawn with probability π_i."""
    order = rng.permutation(pi.size)
    edges = np.concatenate([[0.0], np.cumsum(pi[order])])
    hits = np.floor(edges - rng.uniform() + 1e-9)
    return np.sort(order[np.flatnonzero(np.diff(hits) > 0)])


def disagreement(score_matrix: np.ndarray) -> np.ndarray:
    """Per unit: the spread (max − min) of the metrics' normalised ranks; 0 when all metrics agree."""
    sm = np.atleast_2d(np.asarray(score_matrix, dtype=np.float64))
    if sm.shape[0] < 2:
        raise ValueError("disagreement sampling needs at least two metrics")
    r = np.vstack([average_ranks(row) / row.size for row in sm])
    return r.max(axis=0) - r.min(axis=0)


def quantile_strata(score_matrix: np.ndarray, k: int) -> np.ndarray:
    """Stratum code per unit: the joint cell of each metric's k score quantiles."""
    sm = np.atleast_2d(np.asarray(score_matrix, dtype=np.float64))
    cells = [np.minimum((average_ranks(row) - 1) * k // row.size, k - 1).astype(np.int64) for row in sm]
    _, codes = np.unique(np.vstack(cells), axis=1, return_inverse=True)
    return codes.reshape(-1)


def equal_allocation(stratum_sizes: np.ndarray, n: int) -> np.ndarray:
    """n split as evenly as possible over strata, none given more than it holds (water-filling)."""
    sizes = np.asarray(stratum_sizes, dtype=np.int64)
    if n > sizes.sum():
        raise ValueError(f"cannot sample {n} of {sizes.sum()} units")
    order = np.sort(sizes)
    alloc_level, left = 0, n
    for i, s in enumerate(order):  # raise the common level until a stratum is exhausted
        open_ = order.size - i
        if (s - alloc_level) * open_ >= left:
            break
        left -= (s - alloc_level) * open_
        alloc_level = s
    base = np.minimum(sizes, alloc_level + left // max(open_, 1))
    extra = n - base.sum()
    room = np.flatnonzero(base < sizes)
    base[room[:extra]] += 1  # largest-remainder: the first strata with room take one more
    return base


def stratified_sample(strata: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Equal allocation over strata, simple random sampling within each: (chosen units, π of every unit)."""
    codes = np.asarray(strata, dtype=np.int64)
    sizes = np.bincount(codes)
    alloc = equal_allocation(sizes, n)
    pi = (alloc / np.maximum(sizes, 1))[codes]
    chosen = [rng.choice(np.flatnonzero(codes == h), size=a, replace=False) for h, a in enumerate(alloc) if a]
    return np.sort(np.concatenate(chosen)) if chosen else np.zeros(0, dtype=np.int64), pi


def draw(strategy: str, n: int, rng: np.random.Generator, score_matrix: np.ndarray,
         strata_per_metric: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """(chosen unit indices, inclusion probability of every unit) for random | stratified | disagreement.

    `score_matrix` is (metrics, units); random sampling only reads its width.
    """
    size = int(np.shape(score_matrix)[-1])
    if strategy == "random":
        return np.sort(rng.choice(size, size=n, replace=False)), np.full(size, n / size)
    if strategy == "stratified":
        return stratified_sample(quantile_strata(score_matrix, strata_per_metric), n, rng)
    if strategy == "disagreement":
        d = disagreement(score_matrix)
        pi = pps_probabilities(d + max(d.mean(), 1e-9), n)  # floor: pairs where metrics agree stay drawable
        return systematic_sample(pi, rng), pi
    raise ValueError(f"unknown strategy {strategy!r}: use random, stratified or disagreement")
