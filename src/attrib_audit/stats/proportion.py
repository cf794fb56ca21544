"""Means of per-unit values (accuracies, rates) with a clustered bootstrap CI, vectorised.

A resample is a vector of row multiplicities (clusters drawn with replacement), so the
replicate means of m value rows are one matrix product per block of resamples; several
rankers scored on the same units share the draws, which makes their differences paired.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from attrib_audit.stats.bootstrap import DEFAULT_B, cluster_weight_blocks, group_codes, percentile_ci
from attrib_audit.stats.rng import as_generator
from attrib_audit.stats.types import Estimate


def clustered_mean_replicates(values: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                              rng: np.random.Generator | int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """(point (m,), replicates (m, B), n_groups) of the mean of each row of `values` (m, n).

    Args:
        values: (m, n) values (one variable: 1-D); no NaN.
        groups: (n,) cluster id of each unit.
        n_boot: Resamples.
        rng: A seed or a generator.

    Returns:
        Points, replicates and the number of clusters.

    Raises:
        ValueError: No units, a NaN value, or `groups` of another length.
    """
    v = np.atleast_2d(np.asarray(values, dtype=np.float64))
    if v.shape[1] != len(groups):
        raise ValueError(f"values have {v.shape[1]} columns for {len(groups)} groups")
    if v.shape[1] == 0:
        raise ValueError("no units: a mean needs at least one value")
    if np.isnan(v).any():
        raise ValueError("values contain NaN: drop (and count) undefined units first")
    gen = as_generator(rng)
    codes = group_codes(groups)
    blocks = [(w @ v.T) / w.sum(axis=1)[:, None] for w in cluster_weight_blocks(codes, n_boot, gen)]
    reps = np.concatenate(blocks, axis=0).T if blocks else np.zeros((v.shape[0], 0))
    return v.mean(axis=1), reps, int(codes.max()) + 1


def clustered_means(values: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                    rng: np.random.Generator | int = 0, level: float = 0.95) -> list[Estimate]:
    """One Estimate per row of `values`: the mean with a percentile CI over cluster resamples.

    Args:
        values: (m, n) values (one variable: 1-D); no NaN.
        groups: (n,) cluster id of each unit.
        n_boot: Resamples.
        rng: A seed or a generator.
        level: Coverage of the intervals.

    Returns:
        m estimates, in row order.

    Raises:
        ValueError: As `clustered_mean_replicates`.

    Examples:
        >>> [e.estimate for e in clustered_means(np.array([[0.0, 1.0, 1.0, 1.0]]), [0, 0, 1, 1], n_boot=50)]
        [0.75]
    """
    point, reps, n_groups = clustered_mean_replicates(values, groups, n_boot=n_boot, rng=rng)
    out = []
    for j in range(point.size):
        lo, hi, dropped = percentile_ci(reps[j], level)
        out.append(Estimate(estimate=float(point[j]), ci_low=lo, ci_high=hi, n=len(groups), n_groups=n_groups,
                            method="clustered-bootstrap-percentile", n_boot=n_boot, n_boot_dropped=dropped))
    return out


def clustered_mean_ci(values: np.ndarray, groups: Sequence, *, n_boot: int = DEFAULT_B,
                      seed: int | np.random.Generator = 0, level: float = 0.95) -> Estimate:
    return clustered_means(np.asarray(values)[None, :], groups, n_boot=n_boot, rng=seed, level=level)[0]
