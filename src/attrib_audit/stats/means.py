"""Clustered bootstrap of means, vectorised: every resample's mean is one matrix product.

A resample is a row of cluster multiplicities c_bg (`cluster_count_blocks`), so the mean of
metric j in resample b is Σ_g c_bg S_jg / Σ_g c_bg N_jg, with S_jg the sum and N_jg the count
of cluster g's finite values of x_j: two (B × K) · (K × m) products, whatever the rows per cluster.
Sharing the draws across metrics and systems keeps differences paired.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attrib_audit.stats.bootstrap import DEFAULT_B, cluster_count_blocks, group_codes, percentile_ci
from attrib_audit.stats.rng import as_generator
from attrib_audit.stats.types import Estimate


@dataclass(frozen=True, kw_only=True)
class BootstrapMeans:
    """Means of m variables over the same rows, and their replicates from shared cluster resamples."""

    point: np.ndarray  # (m,); NaN for a variable with no finite value
    replicates: np.ndarray  # (m, B); NaN where a resample drew none of the variable's finite rows
    n: np.ndarray  # (m,) finite rows per variable
    n_groups: int
    n_boot: int


def bootstrap_means(matrix: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                    rng: np.random.Generator | int = 0) -> BootstrapMeans:
    """Clustered bootstrap of the mean of each row of `matrix` (m, n); NaN cells are left out, never imputed.

    Args:
        matrix: (m, n) values of m variables on n rows (one variable: 1-D).
        groups: (n,) cluster id of each row.
        n_boot: Resamples.
        rng: A seed or a generator.

    Returns:
        Points, (m, B) replicates, finite rows per variable and the number of clusters.

    Raises:
        ValueError: `matrix` columns and `groups` differ in length.

    Examples:
        >>> res = bootstrap_means(np.array([[1.0, 2.0, np.nan, 4.0]]), [0, 0, 1, 1], n_boot=3, rng=0)
        >>> res.point.tolist(), res.n.tolist(), res.replicates.shape
        ([2.3333333333333335], [3], (1, 3))
    """
    x = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    codes = group_codes(groups)
    if x.shape[1] != codes.size:
        raise ValueError(f"matrix has {x.shape[1]} columns for {codes.size} group ids")
    gen = as_generator(rng)
    finite = np.isfinite(x)
    k = int(codes.max()) + 1 if codes.size else 0
    sums = np.zeros((x.shape[0], k))
    counts = np.zeros((x.shape[0], k))
    np.add.at(sums.T, codes, np.where(finite, x, 0.0).T)
    np.add.at(counts.T, codes, finite.T.astype(np.float64))
    n = finite.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = np.where(n > 0, sums.sum(axis=1) / np.maximum(n, 1), np.nan)
        reps = []
        for c in cluster_count_blocks(k, n_boot, gen):
            num, den = sums @ c.T, counts @ c.T
            reps.append(np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan))
    replicates = np.concatenate(reps, axis=1) if reps else np.zeros((x.shape[0], 0))
    return BootstrapMeans(point=point, replicates=replicates, n=n, n_groups=k, n_boot=n_boot)


def mean_estimate(res: BootstrapMeans, j: int, level: float = 0.95,
                  method: str = "clustered-bootstrap-percentile") -> Estimate:
    """Variable j's mean with its percentile interval.

    Args:
        res: The bootstrap (`bootstrap_means`).
        j: Row of the variable.
        level: Coverage of the interval.
        method: The method name the estimate carries.

    Returns:
        The estimate, n its finite rows.
    """
    lo, hi, dropped = percentile_ci(res.replicates[j], level)
    return Estimate(estimate=float(res.point[j]), ci_low=lo, ci_high=hi, n=int(res.n[j]), n_groups=res.n_groups,
                    method=method, n_boot=res.n_boot, n_boot_dropped=dropped)


def paired_mean_difference(a: np.ndarray, b: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                           rng: np.random.Generator | int = 0,
                           level: float = 0.95) -> tuple[Estimate, Estimate, Estimate]:
    """(mean a, mean b, mean of a−b) with CIs from one set of cluster draws.

    The difference is taken per row, so a row where either side is NaN is left out of it.

    Args:
        a: (n,) first variable.
        b: (n,) second variable on the same rows.
        groups: (n,) cluster id of each row.
        n_boot: Resamples.
        rng: A seed or a generator.
        level: Coverage of the intervals.

    Returns:
        The three estimates.

    Raises:
        ValueError: `a` and `b` are not 1-D of one length.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a {a.shape} and b {b.shape} must be 1-D and the same length")
    res = bootstrap_means(np.vstack([a, b, a - b]), groups, n_boot=n_boot, rng=rng)
    return mean_estimate(res, 0, level), mean_estimate(res, 1, level), \
        mean_estimate(res, 2, level, "paired-clustered-bootstrap-percentile")
