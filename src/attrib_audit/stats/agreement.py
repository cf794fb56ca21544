"""Cohen's κ and confusion matrices, with a clustered bootstrap that is one matrix product.

κ depends on the rows only through per-category totals and the count of agreements,
so each cluster is reduced to those sums once; a resample is then a vector of
cluster multiplicities and all B resamples are a (B, K) @ (K, L) product.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from attrib_audit.stats.bootstrap import DEFAULT_B, cluster_count_blocks, group_codes, percentile_ci
from attrib_audit.stats.rng import as_generator
from attrib_audit.stats.types import Estimate


def _codes(a: Sequence, b: Sequence, labels: Sequence | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"ratings {a.shape} and {b.shape} must be 1-D and the same length")
    cats = np.asarray(labels) if labels is not None else np.union1d(a, b)
    ia = np.searchsorted(cats, a) if labels is None else _index(cats, a)
    ib = np.searchsorted(cats, b) if labels is None else _index(cats, b)
    return cats, ia, ib


def _index(cats: np.ndarray, x: np.ndarray) -> np.ndarray:
    lookup = {c: i for i, c in enumerate(cats.tolist())}
    try:
        return np.array([lookup[v] for v in x.tolist()], dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"rating {exc.args[0]!r} is not one of the labels {cats.tolist()}") from None


def _kappa_from_sums(agree: np.ndarray, ma: np.ndarray, mb: np.ndarray, total: np.ndarray) -> np.ndarray:
    """κ = (p_o − p_e) / (1 − p_e) from agreement counts and marginal totals; NaN where p_e = 1 or no rows."""
    with np.errstate(invalid="ignore", divide="ignore"):
        po = agree / total
        pe = (ma * mb).sum(axis=-1) / total**2
        return np.where((total > 0) & (pe < 1.0), (po - pe) / (1.0 - pe), np.nan)


def cohen_kappa(a: Sequence, b: Sequence, labels: Sequence | None = None) -> float:
    """Unweighted Cohen's κ, as sklearn.metrics.cohen_kappa_score (NaN where undefined).

    Args:
        a: First rater's ratings (any comparable values).
        b: Second rater's ratings of the same items.
        labels: The categories in order (None: the union of both raters' values).

    Returns:
        κ, NaN with no rows or when chance agreement is 1.

    Raises:
        ValueError: The ratings differ in length, or one is not among `labels`.

    Examples:
        >>> round(cohen_kappa([1, 1, 0, 0, 1], [1, 0, 0, 0, 1]), 4)
        0.6154
    """
    cats, ia, ib = _codes(a, b, labels)
    ma = np.bincount(ia, minlength=cats.size).astype(np.float64)
    mb = np.bincount(ib, minlength=cats.size).astype(np.float64)
    return float(_kappa_from_sums(np.float64((ia == ib).sum()), ma, mb, np.float64(ia.size)))


def confusion_matrix(a: Sequence, b: Sequence, labels: Sequence | None = None) -> tuple[list, np.ndarray]:
    """(labels, counts) with counts[i, j] = rows rated labels[i] by a and labels[j] by b.

    Args:
        a: First rater's ratings.
        b: Second rater's ratings of the same items.
        labels: The categories in order (None: the sorted union of both).

    Returns:
        The categories and the (L, L) count matrix.

    Raises:
        ValueError: The ratings differ in length, or one is not among `labels`.

    Examples:
        >>> cats, m = confusion_matrix([1, 1, 0, 0, 1], [1, 0, 0, 0, 1])
        >>> cats, m.tolist()
        ([0, 1], [[2, 0], [1, 2]])
    """
    cats, ia, ib = _codes(a, b, labels)
    m = np.bincount(ia * cats.size + ib, minlength=cats.size**2).reshape(cats.size, cats.size)
    return cats.tolist(), m


def clustered_kappa_ci(a: Sequence, b: Sequence, groups: Sequence, *, labels: Sequence | None = None,
                       n_boot: int = DEFAULT_B, seed: int | np.random.Generator = 0, level: float = 0.95) -> Estimate:
    """κ with a percentile CI from resampling clusters (`groups`) with replacement.

    Args:
        a: First rater's ratings.
        b: Second rater's ratings of the same items.
        groups: Cluster id of each item.
        labels: The categories (None: the union of both raters' values).
        n_boot: Resamples.
        seed: A seed or a generator.
        level: Coverage of the interval.

    Returns:
        κ with its interval (NaN bounds without rows).

    Raises:
        ValueError: `groups` has another length than the ratings, or a rating is not among `labels`.
    """
    cats, ia, ib = _codes(a, b, labels)
    if len(groups) != ia.size:
        raise ValueError(f"{len(groups)} groups for {ia.size} rating pairs")
    gen = as_generator(seed)
    point = cohen_kappa(a, b, labels)
    if ia.size == 0:
        return Estimate(estimate=point, ci_low=float("nan"), ci_high=float("nan"), n=0, n_groups=0,
                        method="clustered-bootstrap-percentile", n_boot=n_boot, n_boot_dropped=n_boot)
    codes = group_codes(groups)
    k, L = int(codes.max()) + 1, cats.size
    # per-cluster sufficient statistics: [agreements, rows, a's category counts, b's category counts]
    stats = np.zeros((k, 2 + 2 * L))
    np.add.at(stats[:, 0], codes, (ia == ib).astype(np.float64))
    np.add.at(stats[:, 1], codes, 1.0)
    np.add.at(stats, (codes, 2 + ia), 1.0)
    np.add.at(stats, (codes, 2 + L + ib), 1.0)
    reps = []
    for counts in cluster_count_blocks(k, n_boot, gen, width=2 + 2 * L):
        s = counts @ stats
        reps.append(_kappa_from_sums(s[:, 0], s[:, 2:2 + L], s[:, 2 + L:], s[:, 1]))
    lo, hi, dropped = percentile_ci(np.concatenate(reps), level)
    return Estimate(estimate=point, ci_low=lo, ci_high=hi, n=int(ia.size), n_groups=k,
                    method="clustered-bootstrap-percentile", n_boot=n_boot, n_boot_dropped=dropped)
