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
from attrib_audit.stats.types import Estimate


@dataclass(frozen=True)
class BootstrapMeans:
    """Means of m variables over the same rows, and their replicates from shared cluster resamples."""

    point: np.ndarray  # (m,); NaN for a variable with no finite value
    replicates: np.ndarray  # (m, B); NaN where a resample drew none of the variable's finite rows
    n: np.ndarray  # (m,) finite rows per variable
    n_groups: int
    n_boot: int


def bootstrap_means(matrix: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                    rng: np.random.Generator | int = 0) -> BootstrapMeans:
    """Clustered bootstrap of the mean of each row of `matrix` (m, n); NaN cells are left out, never imputed."""
    x = np.atleast_2d(np.asarray(matrix, dtype=np.float64))
    codes = group_codes(groups)
    if x.shape[1] != codes.size:
        raise ValueError(f"matrix has {x.shape[1]} columns for {codes.size} group ids")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
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


def mean_estimate(res: BootstrapMeans, j: int, level: float = 0.95, method: str = "clustered-bootstrap-percentile") -> Estimate:
    lo, hi, dropped = percentile_ci(res.replicates[j], level)
    return Estimate(estimate=float(res.point[j]), ci_low=lo, ci_high=hi, n=int(res.n[j]), n_groups=res.n_groups,
                    method=method, n_boot=res.n_boot, n_boot_dropped=dropped)


def paired_mean_difference(a: np.ndarray, b: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                           rng: np.random.Generator | int = 0, level: float = 0.95) -> tuple[Estimate, Estimate, Estimate]:
    """(mean a, mean b, mean of a−b) with CIs from one set of cluster draws.

    The difference is taken per row, so a row where either side is NaN is left out of it.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a {a.shape} and b {b.shape} must be 1-D and the same length")
    res = bootstrap_means(np.vstack([a, b, a - b]), groups, n_boot=n_boot, rng=rng)
    return mean_estimate(res, 0, level), mean_estimate(res, 1, level), \
        mean_estimate(res, 2, level, "paired-clustered-bootstrap-percentile")
