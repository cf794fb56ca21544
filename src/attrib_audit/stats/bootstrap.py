"""Clustered and paired bootstrap, vectorised: a whole bootstrap is one (B, n) weight matrix.

Resampling clusters with replacement gives each row a multiplicity (how often its
cluster was drawn); every statistic here is computed from those multiplicities, so
the B resamples are array operations and the same draws can be shared by several
scorers (paired comparisons).
"""
from __future__ import annotations

import copy
import zlib
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from attrib_audit.stats.auroc import auroc, cluster_auroc, ht_auroc
from attrib_audit.stats.rng import as_generator, block_rows
from attrib_audit.stats.types import Estimate, group_codes

DEFAULT_B = 2000  # bootstrap resamples unless a caller asks for another number: the one default
# The fewest resamples a run takes: a percentile CI is read off the resamples' tails, and with fewer than this the
# interval is one or two resamples wide (one resample gave 0.829 [0.863, 0.863], a CI excluding its estimate).
MIN_BOOT = 10


def slice_rng(seed: int, name: str) -> np.random.Generator:
    """A generator that depends on the seed and the slice name only, not on slice order.

    Args:
        seed: The run's seed (non-negative).
        name: The slice's name; its CRC-32 joins the seed.

    Returns:
        A new generator: each slice draws the same resamples whichever other slices run.
    """
    return np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])


def cluster_count_blocks(n_clusters: int, n_boot: int, rng: np.random.Generator,
                         width: int | None = None) -> Iterator[np.ndarray]:
    """Yield (b, K) blocks of cluster multiplicities for n_boot resamples of K clusters with replacement.

    Blocks bound memory (`stats.rng.block_rows`): b × max(K, width) cells at once. The draws are
    taken in order, so the concatenated blocks are the same whatever the block size.

    Args:
        n_clusters: K, the clusters resampled.
        n_boot: Resamples in all.
        rng: The generator to draw from.
        width: Cells per resample a caller will build from each block (e.g. rows), if wider than K.

    Yields:
        (b, K) float arrays; row r holds how often each cluster was drawn in that resample (rows sum to K).

    Examples:
        >>> [b.sum(axis=1).tolist() for b in cluster_count_blocks(3, 2, np.random.default_rng(0))]
        [[3.0, 3.0]]
    """
    k = int(n_clusters)
    step = block_rows(max(k, width or 0))
    for start in range(0, n_boot, step):
        b = min(step, n_boot - start)
        draws = rng.integers(0, k, size=(b, k))
        yield np.bincount((draws + k * np.arange(b)[:, None]).ravel(), minlength=b * k).reshape(b, k).astype(np.float64)


def cluster_weight_blocks(codes: np.ndarray, n_boot: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield (b, n) blocks of row multiplicities (a row weighs what its cluster was drawn).

    Args:
        codes: (n,) cluster index (0..K−1) of each row.
        n_boot: Resamples in all.
        rng: The generator to draw from.

    Yields:
        (b, n) float arrays, the rows of one cluster sharing its multiplicity.
    """
    k = int(codes.max()) + 1 if codes.size else 0
    for counts in cluster_count_blocks(k, n_boot, rng, width=codes.size):
        yield counts[:, codes]


def replay_rng(state: dict) -> np.random.Generator:
    """A generator that repeats the draws of the one whose bit-generator state was `state`.

    Args:
        state: A `bit_generator.state` dict saved before the draws (as `BootstrapAUROC.rng_state`).

    Returns:
        A new generator in that state.
    """
    bits = getattr(np.random, state["bit_generator"])()
    bits.state = state
    return np.random.Generator(bits)


def _points(sm: np.ndarray, y: np.ndarray, rows: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """AUROC of each scorer j on its `rows[j]` (Horvitz–Thompson weighted when `w` is given); NaN without rows."""
    return np.array([(auroc(sm[j, r], y[r]) if w is None else ht_auroc(sm[j, r], y[r], w[r])) if r.any() else np.nan
                     for j, r in enumerate(rows)])


def _auroc_jobs(sm: np.ndarray, y: np.ndarray, codes: np.ndarray, w: np.ndarray, jobs: Sequence[tuple[int, np.ndarray]],
                n_boot: int, gen: np.random.Generator) -> np.ndarray:
    """(len(jobs), B) replicates: job (j, rows) is scorer j's AUROC on `rows`, every job on the same cluster draws."""
    k = int(codes.max()) + 1 if codes.size else 0
    blocks = []
    for counts in cluster_count_blocks(k, n_boot, gen, width=sm.shape[1]):
        counts = np.asfortranarray(counts)  # cluster_auroc multiplies its (K, B) transpose: made once, not per job
        block = np.full((len(jobs), counts.shape[0]), np.nan)
        for i, (j, rows) in enumerate(jobs):  # a handful of jobs; the B resamples are one array operation
            if rows.any():
                block[i] = cluster_auroc(sm[j, rows], y[rows], codes[rows], counts, w[rows])
        blocks.append(block)
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((len(jobs), 0))


@dataclass(frozen=True, kw_only=True)
class AlignedAUROC:
    """AUROCs of several scorers on their common rows (every one of them finite), on the slice's shared draws.

    Comparisons use these, never each scorer's own rows: a scorer that fails on the hard
    rows would otherwise be compared on an easier sample than its rival.
    """

    scorers: tuple[int, ...]
    point: np.ndarray  # (k,)
    replicates: np.ndarray  # (k, B)
    rows: np.ndarray  # (n,) bool: the rows used
    dropped: np.ndarray  # (k,) rows of the slice where that scorer has no finite score
    n_groups: int

    @property
    def n(self) -> int:
        return int(self.rows.sum())


@dataclass(frozen=True, kw_only=True)
class BootstrapAUROC:
    """AUROC point estimates and replicates of m scorers on one slice, from the same resamples.

    `point`/`replicates` use each scorer's own finite rows (single-scorer AUROCs); `aligned`
    replays the same cluster draws (from `rng_state`) on the rows common to several scorers.
    """

    point: np.ndarray  # (m,)
    replicates: np.ndarray  # (m, B); NaN where the resample lost a class or the scorer has no rows
    n: np.ndarray  # (m,) rows with a finite score
    n_groups: int
    n_boot: int
    scores: np.ndarray  # (m, n)
    labels: np.ndarray  # (n,)
    codes: np.ndarray  # (n,) cluster of each row
    rng_state: dict  # bit-generator state before the draws
    weights: np.ndarray | None = None  # (n,) Horvitz–Thompson row weights (1/inclusion probability), if any

    @property
    def n_rows(self) -> int:
        """Rows of the slice (the transfer statistics read it of any per-slice bootstrap)."""
        return int(self.labels.size)

    def aligned(self, scorers: Sequence[int] | np.ndarray) -> AlignedAUROC:
        """Scorers `scorers` on the rows where all of them are finite, with the cluster draws of `replicates`."""
        idx = tuple(int(j) for j in scorers)
        finite = np.isfinite(self.scores[list(idx)])
        rows = finite.all(axis=0)
        point = _points(self.scores[list(idx)], self.labels, np.broadcast_to(rows, finite.shape), self.weights)
        if all(np.array_equal(f, rows) for f in finite):  # no scorer lost a row the others kept: nothing to redo
            reps = self.replicates[list(idx)]
        else:
            w = np.ones(rows.size) if self.weights is None else self.weights
            reps = _auroc_jobs(self.scores, self.labels, self.codes, w, [(j, rows) for j in idx], self.n_boot,
                               replay_rng(self.rng_state))
        return AlignedAUROC(scorers=idx, point=point, replicates=reps, rows=rows, dropped=(~finite).sum(axis=1),
                            n_groups=int(np.unique(self.codes[rows]).size))


def bootstrap_aurocs(score_matrix: np.ndarray, labels: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                     rng: np.random.Generator | int = 0, weights: np.ndarray | None = None) -> BootstrapAUROC:
    """Clustered bootstrap of AUROC for each row of `score_matrix` (m, n), sharing the draws.

    NaN scores (e.g. a judge's failures) are left out of that scorer only: its rows get
    zero weight. Comparisons between scorers go through `aligned` (common rows, same draws).
    `weights` make both the point estimate and every resample Horvitz–Thompson weighted.

    Args:
        score_matrix: (m, n) scores of m scorers on n rows (one scorer: a 1-D array); NaN = failed.
        labels: (n,) 0/1 labels.
        groups: (n,) cluster id of each row (any hashable); clusters are resampled whole.
        n_boot: Resamples.
        rng: A seed or a generator to draw from.
        weights: Optional (n,) 1/inclusion probability per row.

    Returns:
        Points, (m, B) replicates and what `aligned` needs to replay the same draws.

    Raises:
        ValueError: `score_matrix` columns and `labels` differ in length.

    Examples:
        >>> s = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.3, 0.7])
        >>> y, g = np.array([0, 0, 1, 1, 0, 1, 0, 1]), [0, 0, 1, 1, 2, 2, 3, 3]
        >>> res = bootstrap_aurocs(np.vstack([s, 1 - s]), y, g, n_boot=200, rng=0)
        >>> res.point.tolist(), res.replicates.shape, res.n_groups
        ([0.9375, 0.0625], (2, 200), 4)
    """
    sm = np.atleast_2d(np.asarray(score_matrix, dtype=np.float64))
    y = np.asarray(labels).astype(np.int64)
    if sm.shape[1] != y.size:
        raise ValueError("score_matrix columns must match labels")
    gen = as_generator(rng)
    state = dict(copy.deepcopy(gen.bit_generator.state))
    codes = group_codes(groups)
    finite = np.isfinite(sm)
    w = np.ones(y.size) if weights is None else np.asarray(weights, dtype=np.float64)
    point = _points(sm, y, finite, None if weights is None else w)
    replicates = _auroc_jobs(sm, y, codes, w, list(enumerate(finite)), n_boot, gen)
    return BootstrapAUROC(point=point, replicates=replicates, n=finite.sum(axis=1),
                          n_groups=int(codes.max()) + 1 if codes.size else 0, n_boot=n_boot, scores=sm, labels=y,
                          codes=codes, rng_state=state, weights=None if weights is None else w)


def percentile_ci(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float, int]:
    """Percentile interval over the finite replicates.

    Args:
        replicates: Bootstrap replicates; NaN ones (a resample where the statistic is undefined) are dropped.
        level: Coverage, in (0, 1).

    Returns:
        (low, high, dropped): the interval (NaN, NaN when no replicate is finite) and the count dropped.

    Examples:
        >>> percentile_ci(np.array([0.2, np.nan, 0.4, 0.6]), 0.5)
        (0.30000000000000004, 0.5, 1)
    """
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
    """AUROC with a percentile CI from resampling clusters with replacement.

    Args:
        scores: (n,) scores; NaN rows are left out.
        labels: (n,) 0/1 labels.
        groups: (n,) cluster id of each row.
        n_boot: Resamples.
        seed: A seed or a generator.
        level: Coverage of the interval.

    Returns:
        The AUROC with its clustered-bootstrap percentile interval, n, clusters and dropped resamples.

    Examples:
        >>> s, y = [0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.3, 0.7], [0, 0, 1, 1, 0, 1, 0, 1]
        >>> e = clustered_auroc_ci(s, y, [0, 0, 1, 1, 2, 2, 3, 3], n_boot=200, seed=0)
        >>> e.estimate, e.ci_low, e.ci_high, e.n_groups, e.n_boot_dropped
        (0.9375, 0.75, 1.0, 4, 2)
    """
    res = bootstrap_aurocs(np.asarray(scores)[None, :], labels, groups, n_boot=n_boot, rng=seed)
    lo, hi, dropped = percentile_ci(res.replicates[0], level)
    return Estimate(estimate=float(res.point[0]), ci_low=lo, ci_high=hi, n=int(res.n[0]), n_groups=res.n_groups,
                    method="clustered-bootstrap-percentile", n_boot=n_boot, n_boot_dropped=dropped)


def paired_difference(res: BootstrapAUROC, a: int, b: int, level: float = 0.95) -> Estimate:
    """AUROC_a − AUROC_b on the rows both scored, with a CI from the shared resamples (the paired bootstrap).

    Args:
        res: The slice's bootstrap (`bootstrap_aurocs`).
        a: Index of the first scorer in `res`.
        b: Index of the second.
        level: Coverage of the interval.

    Returns:
        The difference with its paired percentile interval, on the rows where both scores are finite.

    Examples:
        >>> s = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.3, 0.7])
        >>> y, g = np.array([0, 0, 1, 1, 0, 1, 0, 1]), [0, 0, 1, 1, 2, 2, 3, 3]
        >>> d = paired_difference(bootstrap_aurocs(np.vstack([s, 1 - s]), y, g, n_boot=200, rng=0), 0, 1)
        >>> d.estimate, d.ci_low, d.ci_high
        (0.875, 0.5, 1.0)
    """
    al = res.aligned((a, b))
    lo, hi, dropped = percentile_ci(al.replicates[0] - al.replicates[1], level)
    return Estimate(estimate=float(al.point[0] - al.point[1]), ci_low=lo, ci_high=hi, n=al.n, n_groups=al.n_groups,
                    method="paired-clustered-bootstrap-percentile", n_boot=res.n_boot, n_boot_dropped=dropped)


def paired_auroc_difference(scores_a: np.ndarray, scores_b: np.ndarray, labels: np.ndarray, groups: Sequence, *,
                            n_boot: int = DEFAULT_B, seed: int | np.random.Generator = 0, level: float = 0.95,
                            weights: np.ndarray | None = None) -> Estimate:
    """AUROC of `scores_a` minus that of `scores_b` with a paired clustered-bootstrap CI.

    Args:
        scores_a: (n,) first scorer's scores.
        scores_b: (n,) second scorer's scores on the same rows.
        labels: (n,) 0/1 labels.
        groups: (n,) cluster id of each row.
        n_boot: Resamples.
        seed: A seed or a generator.
        level: Coverage of the interval.
        weights: Optional (n,) 1/inclusion probability per row.

    Returns:
        As `paired_difference` on a bootstrap of the two.
    """
    res = bootstrap_aurocs(np.vstack([scores_a, scores_b]), labels, groups, n_boot=n_boot, rng=seed, weights=weights)
    return paired_difference(res, 0, 1, level)


def group_folds(codes: np.ndarray, folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold (0..folds−1) of each row, whole clusters to one fold: a random order of the clusters dealt round-robin.

    Cross-fitting on these folds never lets a cluster inform its own held-out estimate.

    Args:
        codes: (n,) cluster index (0..K−1) of each row.
        folds: Number of folds, 2 ≤ folds ≤ K.
        rng: The generator that orders the clusters.

    Returns:
        (n,) fold of each row.

    Raises:
        ValueError: `folds` is below 2 or above the number of clusters.
    """
    k = int(codes.max()) + 1 if codes.size else 0
    if not 2 <= folds <= k:
        raise ValueError(f"cross-fitting needs 2 ≤ folds ≤ clusters; got {folds} folds for {k} clusters")
    fold_of_cluster = np.empty(k, dtype=np.int64)
    fold_of_cluster[rng.permutation(k)] = np.arange(k) % folds
    return fold_of_cluster[codes]


def cluster_sum_replicates(values: np.ndarray, codes: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(B, m) column sums of `values` (n, m) over B clustered resamples: per-cluster sums, then one product per block.

    Ratios of such sums (a weighted rate = Σ w·hit / Σ w) give every resample of a rate at once.

    Args:
        values: (n, m) values per row (or (n,)).
        codes: (n,) cluster index of each row.
        n_boot: Resamples.
        rng: The generator to draw clusters from.

    Returns:
        (B, m) sums, row b over resample b's drawn clusters.
    """
    v = np.asarray(values, dtype=np.float64).reshape(codes.size, -1)
    k = int(codes.max()) + 1 if codes.size else 0
    per_cluster = np.zeros((k, v.shape[1]))
    np.add.at(per_cluster, codes, v)
    blocks = [counts @ per_cluster for counts in cluster_count_blocks(k, n_boot, rng)]
    return np.concatenate(blocks, axis=0) if blocks else np.zeros((0, v.shape[1]))
