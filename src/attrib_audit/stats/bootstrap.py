"""Clustered and paired bootstrap, vectorised: a whole bootstrap is one (B, n) weight matrix.

Resampling clusters with replacement gives each row a multiplicity (how often its
cluster was drawn); every statistic here is computed from those multiplicities, so
the B resamples are array operations and the same draws can be shared by several
scorers (paired comparisons).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from attrib_audit.stats.auroc import auroc, cluster_auroc, ht_auroc
from attrib_audit.stats.types import Estimate

DEFAULT_B = 2000
_MAX_CELLS = 1 << 25  # cap on B×n floats held at once (~256 MB)


def slice_rng(seed: int, name: str) -> np.random.Generator:
    """A generator that depends on the seed and the slice name only, not on slice order."""
    return np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])


def group_codes(groups: Sequence) -> np.ndarray:
    _, codes = np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)
    return codes.astype(np.int64)


def cluster_count_blocks(n_clusters: int, n_boot: int, rng: np.random.Generator, width: int | None = None) -> Iterator[np.ndarray]:
    """Yield (b, K) blocks of cluster multiplicities for n_boot resamples of K clusters with replacement.

    Blocks bound memory: at most _MAX_CELLS of b × max(K, width) at once.
    """
    k = int(n_clusters)
    step = max(1, _MAX_CELLS // max(k, width or 0, 1))
    for start in range(0, n_boot, step):
        b = min(step, n_boot - start)
        draws = rng.integers(0, k, size=(b, k))
        yield np.bincount((draws + k * np.arange(b)[:, None]).ravel(), minlength=b * k).reshape(b, k).astype(np.float64)


def cluster_weight_blocks(codes: np.ndarray, n_boot: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield (b, n) blocks of row multiplicities (a row weighs what its cluster was drawn)."""
    k = int(codes.max()) + 1 if codes.size else 0
    for counts in cluster_count_blocks(k, n_boot, rng, width=codes.size):
        yield counts[:, codes]


@dataclass(frozen=True)
class BootstrapAUROC:
    """AUROC point estimates and replicates of m scorers on one slice, from the same resamples."""

    point: np.ndarray  # (m,)
    replicates: np.ndarray  # (m, B); NaN where the resample lost a class or the scorer has no rows
    n: np.ndarray  # (m,) rows with a finite score
    n_groups: int
    n_boot: int


def bootstrap_aurocs(score_matrix: np.ndarray, labels: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                     rng: np.random.Generator | int = 0, weights: np.ndarray | None = None) -> BootstrapAUROC:
    """Clustered bootstrap of AUROC for each row of `score_matrix` (m, n), sharing the draws.

    NaN scores (e.g. a judge's failures) are left out of that scorer only: its rows get
    zero weight, so comparisons stay paired on the draws. `weights` (1/inclusion probability per
    row) make both the point estimate and every resample Horvitz–Thompson weighted.
    """
    sm = np.atleast_2d(np.asarray(score_matrix, dtype=np.float64))
    y = np.asarray(labels).astype(np.int64)
    if sm.shape[1] != y.size:
        raise ValueError("score_matrix columns must match labels")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    codes = group_codes(groups)
    finite = np.isfinite(sm)
    w = np.ones(y.size) if weights is None else np.asarray(weights, dtype=np.float64)
    point = np.array([(auroc(sm[j, finite[j]], y[finite[j]]) if weights is None else
                       ht_auroc(sm[j, finite[j]], y[finite[j]], w[finite[j]])) if finite[j].any() else np.nan
                      for j in range(sm.shape[0])])
    reps = []
    k = int(codes.max()) + 1 if codes.size else 0
    for counts in cluster_count_blocks(k, n_boot, gen, width=sm.shape[1]):
        block = np.full((sm.shape[0], counts.shape[0]), np.nan)
        for j in range(sm.shape[0]):  # a handful of scorers; the B resamples are one array operation
            if finite[j].any():
                block[j] = cluster_auroc(sm[j, finite[j]], y[finite[j]], codes[finite[j]], counts, w[finite[j]])
        reps.append(block)
    replicates = np.concatenate(reps, axis=1) if reps else np.zeros((sm.shape[0], 0))
    return BootstrapAUROC(point, replicates, finite.sum(axis=1), int(codes.max()) + 1 if codes.size else 0, n_boot)


def percentile_ci(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float, int]:
    """(low, high, dropped) percentile interval over the finite replicates."""
    r = np.asarray(replicates, dtype=np.float64)
    ok = r[np.isfinite(r)]
    dropped = int(r.size - ok.size)
    if ok.size == 0:
        return float("nan"), float("nan"), dropped
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(ok, [alpha, 1.0 - alpha])
    return float(lo), float(hi), dropped


def clustered_auroc_ci(scores: np.ndarray, labels: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                       seed: int | np.random.Generator = 0, level: float = 0.95) -> Estimate:
    """AUROC with a percentile CI from resampling clusters with replacement."""
    res = bootstrap_aurocs(np.asarray(scores)[None, :], labels, groups, n_boot=n_boot, rng=seed)
    lo, hi, dropped = percentile_ci(res.replicates[0], level)
    return Estimate(float(res.point[0]), lo, hi, int(res.n[0]), res.n_groups, "clustered-bootstrap-percentile",
                    n_boot, dropped)


def paired_difference(res: BootstrapAUROC, a: int, b: int, level: float = 0.95) -> Estimate:
    """AUROC_a − AUROC_b with a CI from the shared resamples (the paired bootstrap)."""
    diff = res.replicates[a] - res.replicates[b]
    lo, hi, dropped = percentile_ci(diff, level)
    return Estimate(float(res.point[a] - res.point[b]), lo, hi, int(min(res.n[a], res.n[b])), res.n_groups,
                    "paired-clustered-bootstrap-percentile", res.n_boot, dropped)


def paired_auroc_difference(scores_a: np.ndarray, scores_b: np.ndarray, labels: np.ndarray, groups: Sequence, *,
                            n_boot: int = DEFAULT_B, seed: int | np.random.Generator = 0, level: float = 0.95) -> Estimate:
    res = bootstrap_aurocs(np.vstack([scores_a, scores_b]), labels, groups, n_boot=n_boot, rng=seed)
    return paired_difference(res, 0, 1, level)
