"""Metric–human correlations as meta-evaluation reports them, with clustered-bootstrap intervals.

Graded human ratings (a Likert mean, a fraction of error-free sentences) are compared with a metric's
scores by Pearson, Spearman or Kendall τ-b, under the grouping conventions of WMT's mt-metrics-eval:

- ``none``: one correlation over every row;
- ``item``: one correlation per input item across its system outputs, averaged over items (SummEval's
  convention too);
- ``system``: one correlation per system across its items, averaged over systems;
- ``partial``: FRANK's partial correlation controlling for the system — score and rating are both
  residualised on one-hot system by least squares (each minus its system's mean), then Pearson or
  Spearman of the residuals, so a metric gets no credit for merely telling systems apart.

Intervals resample input items with replacement, jointly across systems (an item's outputs move
together). Every statistic is computed from per-resample row multiplicities, so all B resamples of
a block are array operations and several metrics share the same draws (paired differences).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace
from typing import Iterator, Mapping, Sequence

import numpy as np
from scipy.special import stdtr

from attrib_audit.stats.bootstrap import DEFAULT_B, cluster_count_blocks, percentile_ci
from attrib_audit.stats.rng import MAX_CELLS, as_generator, block_rows
from attrib_audit.stats.types import group_codes

STATISTICS = ("pearson", "spearman", "kendall")
GROUPINGS = ("none", "item", "system", "partial")
KENDALL_MAX_ROWS = 30_000  # Kendall τ-b's resamples are quadratic forms over row pairs: O(n²) to set up
KENDALL_MAX_CLUSTERS = 3_000  # and (clusters × clusters) matrices per resample block
_BLOCK_CELLS = 1 << 22  # resamples × rows held at once per array
_CACHE_CELLS = 1 << 18  # resamples × rows of the rank arithmetic: small enough to stay in cache


def _check_choice(statistic: str, grouping: str) -> None:
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}; got {statistic!r}")
    if grouping not in GROUPINGS:
        raise ValueError(f"grouping must be one of {', '.join(GROUPINGS)}; got {grouping!r}")
    if grouping == "partial" and statistic == "kendall":
        raise ValueError("the partial correlation by system is defined for pearson and spearman only")


# ---------------------------------------------------------------------------------------------------------------
# Weighted building blocks: w is a (b, n) matrix of row multiplicities (one row per resample).


def _weighted_pearson(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of x and y under each row of weights w: (b, n) weights, x and y (n,) or (b, n)."""
    sw = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = (w * x).sum(axis=1) / sw
        my = (w * y).sum(axis=1) / sw
        dx = x - mx[:, None]
        dy = y - my[:, None]
        sxy = (w * dx * dy).sum(axis=1)
        sxx = (w * dx * dx).sum(axis=1)
        syy = (w * dy * dy).sum(axis=1)
        r = sxy / np.sqrt(sxx * syy)
    r[~((sxx > 0) & (syy > 0))] = np.nan
    return np.clip(r, -1.0, 1.0)


def _midranks_sorted(w: np.ndarray, order: np.ndarray, starts: np.ndarray, tie_of_row: np.ndarray) -> np.ndarray:
    """Average ranks of every row under multiplicities w (b, n), for one fixed order of the values.

    `order` sorts the values; `starts` are the sorted positions where a run of equal values begins and
    `tie_of_row` the run of each row. A row drawn m times sits in a run with every other copy of an equal
    value, so its rank is (weight before the run) + (weight of the run + 1) / 2, as scipy's rankdata gives
    each copy of the resample.
    """
    run = np.add.reduceat(w[:, order], starts, axis=1)
    before = np.cumsum(run, axis=1) - run
    mid = before + (run + 1.0) / 2.0
    return mid[:, tie_of_row]


def _tie_runs(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = np.argsort(v, kind="mergesort")
    sv = v[order]
    new = np.r_[True, sv[1:] != sv[:-1]] if sv.size else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(new)
    run_sorted = np.cumsum(new) - 1
    tie_of_row = np.empty(v.size, dtype=np.int64)
    tie_of_row[order] = run_sorted
    return order, starts, tie_of_row


def _weighted_spearman(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ under multiplicities w (b, n) for fixed x, y (n,): Pearson of the resample's average ranks."""
    rx = _midranks_sorted(w, *_tie_runs(x))
    ry = _midranks_sorted(w, *_tie_runs(y))
    return _weighted_pearson(w, rx, ry)


def _rowwise_spearman(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman ρ where x and y differ per resample (b, n): each resample's values are ranked on their own."""
    out = np.empty(w.shape[0])
    for i in range(w.shape[0]):
        keep = w[i] > 0
        rx = _midranks_sorted(w[i:i + 1, keep], *_tie_runs(x[i, keep]))
        ry = _midranks_sorted(w[i:i + 1, keep], *_tie_runs(y[i, keep]))
        out[i] = _weighted_pearson(w[i:i + 1, keep], rx, ry)[0]
    return out


def _pair_matrices(x: np.ndarray, y: np.ndarray, codes: np.ndarray, k: int) -> np.ndarray:
    """(3, k, k) sums over ordered row pairs (i in cluster c, j in cluster d) of sign·sign, x-ties and y-ties."""
    n = x.size
    if n > KENDALL_MAX_ROWS or k > KENDALL_MAX_CLUSTERS:
        raise ValueError(f"Kendall τ-b's bootstrap is quadratic: {n} rows in {k} clusters exceed "
                         f"{KENDALL_MAX_ROWS} rows or {KENDALL_MAX_CLUSTERS} clusters; "
                         "use pearson or spearman, or the item or system grouping")
    from scipy.sparse import csr_matrix

    onehot = csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, k))
    out = np.zeros((3, k, k))
    step = max(1, _BLOCK_CELLS // max(n, 1))
    for a in range(0, n, step):
        sl = slice(a, min(n, a + step))
        dx = x[sl, None] - x[None, :]
        dy = y[sl, None] - y[None, :]
        left = onehot[sl].T
        for m, mat in enumerate((np.sign(dx) * np.sign(dy), (dx == 0).astype(float), (dy == 0).astype(float))):
            out[m] += left @ (onehot.T @ mat.T).T
    return out


def _kendall_from_counts(m: np.ndarray, pairs: np.ndarray, n_per_cluster: np.ndarray) -> np.ndarray:
    """τ-b of each resample given cluster multiplicities m (b, k) and the pair sums of `_pair_matrices`.

    Over ordered pairs of distinct copies: S = Σ m_c m_d P_cd, ties in x n1 = Σ m_c m_d Tx_cd − N (a copy with
    itself is no pair), n0 = N(N − 1); τ-b = S / √((n0 − n1)(n0 − n2)), scipy's definition.
    """
    big_n = m @ n_per_cluster
    s = ((m @ pairs[0]) * m).sum(axis=1)
    n1 = ((m @ pairs[1]) * m).sum(axis=1) - big_n
    n2 = ((m @ pairs[2]) * m).sum(axis=1) - big_n
    n0 = big_n * (big_n - 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = s / np.sqrt((n0 - n1) * (n0 - n2))
    tau[~(((n0 - n1) > 0) & ((n0 - n2) > 0))] = np.nan
    return np.clip(tau, -1.0, 1.0)


def _incidence(items: np.ndarray, runs: np.ndarray, n_items: int, n_runs: int) -> np.ndarray:
    """(n_items, n_runs) rows of each item in each tie run of a variable."""
    out = np.zeros((n_items, n_runs))
    np.add.at(out, (items, runs), 1.0)
    return out


def _square_sums(big_n: np.ndarray) -> np.ndarray:
    """Σ k² for k = 1..N: the sum of squared ranks before the tie correction."""
    return big_n * (big_n + 1.0) * (2.0 * big_n + 1.0) / 6.0


@dataclass(frozen=True, eq=False)
class _RatingRanks:
    """The rating's side of Spearman for one block of resamples: run midranks (b, R), Σ w·rank², N."""

    mid: np.ndarray
    syy: np.ndarray
    big_n: np.ndarray


def _rating_ranks(counts: np.ndarray, y_inc: np.ndarray) -> _RatingRanks:
    """Midranks of the rating's tie runs under item multiplicities, from the (items × runs) incidence alone.

    A run of total weight W starting after weight B has midrank B + (W + 1)/2 and takes (W³ − W)/12 off
    Σ rank² (the tie correction), so no row is touched.
    """
    weight = counts @ y_inc
    mid = np.cumsum(weight, axis=1)
    big_n = mid[:, -1].copy() if mid.shape[1] else np.zeros(mid.shape[0])
    mid -= (weight - 1.0) / 2.0
    return _RatingRanks(mid=mid, syy=_square_sums(big_n) - (weight ** 3 - weight).sum(axis=1) / 12.0, big_n=big_n)


@dataclass(frozen=True, eq=False, kw_only=True)
class _SortedPlan:
    """A metric's rows in score order, for Spearman's resamples from item multiplicities.

    Tie runs of the score are None when all its scores differ (then a row's copies tie only with each
    other); `y_inc` counts the metric's rows of each item in each rating run, `rows_per_item` its rows per item.
    """

    items: np.ndarray
    starts: np.ndarray | None
    run_of_sorted: np.ndarray | None
    y_run: np.ndarray
    y_inc: np.ndarray
    rows_per_item: np.ndarray


def _sorted_plan(x: np.ndarray, items: np.ndarray, y_run_of_row: np.ndarray, y_inc: np.ndarray,
                 n_items: int) -> _SortedPlan:
    order, starts, tie_of_row = _tie_runs(x)
    tied = starts.size < x.size
    return _SortedPlan(items=items[order], starts=starts if tied else None,
                       run_of_sorted=tie_of_row[order] if tied else None, y_run=y_run_of_row[order], y_inc=y_inc,
                       rows_per_item=np.bincount(items, minlength=n_items).astype(np.float64))


def _scratch(cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reusable flat buffers for `_spearman_sorted` (two integer, one float): no page faults per call."""
    return np.empty(cells, dtype=np.int64), np.empty(cells, dtype=np.int64), np.empty(cells, dtype=np.float64)


def _spearman_sorted(counts: np.ndarray, plan: _SortedPlan, yr: _RatingRanks,
                     scratch: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """Spearman ρ per resample from integer item multiplicities (b, K), working in the metric's score order.

    Σ rank, Σ rank² and the rating's ranks follow from run weights alone; only the cross term
    Σ w·rank_x·rank_y touches the rows. With untied scores a row of weight w at cumulative weight C has
    midrank C − (w − 1)/2, so the cross term is Σ w·C·rank_y less Σ rank_y·w(w − 1)/2, the latter per item.
    Cumulative weights are summed in integers: exact, and several times faster than a float cumsum.
    """
    b, n = counts.shape[0], plan.items.size
    w = scratch[0][:b * n].reshape(b, n)
    prod = scratch[1][:b * n].reshape(b, n)
    wx = scratch[2][:b * n].reshape(b, n)
    np.take(counts, plan.items, axis=1, out=w)
    big_n = yr.big_n
    m = counts.astype(np.float64)
    if plan.starts is None or plan.run_of_sorted is None:
        sxx = _square_sums(big_n) - ((m ** 3 - m) @ plan.rows_per_item) / 12.0
        np.cumsum(w, axis=1, out=prod)
        halves = 1.0  # prod holds w·C
        correction = ((m * (m - 1.0) / 2.0) @ plan.y_inc * yr.mid).sum(axis=1)
    else:
        t = np.add.reduceat(w, plan.starts, axis=1)
        mid2 = 2 * np.cumsum(t, axis=1) - t + 1  # twice the midrank of each tie run, an integer
        np.take(mid2, plan.run_of_sorted, axis=1, out=prod)
        tf = t.astype(np.float64)
        sxx = _square_sums(big_n) - (tf ** 3 - tf).sum(axis=1) / 12.0
        halves = 2.0  # prod holds w·(2·midrank)
        correction = np.zeros(b)
    np.multiply(prod, w, out=wx)  # exact integers, cast to floats on the way out
    ry = w.view(np.float64)  # w is spent: its buffer takes the rating's midranks
    np.take(yr.mid, plan.y_run, axis=1, out=ry)
    sxy = np.einsum("bn,bn->b", wx, ry) / halves - correction
    sx = big_n * (big_n + 1.0) / 2.0  # Σ rank, the same for both variables
    with np.errstate(invalid="ignore", divide="ignore"):
        cxx = sxx - sx * sx / big_n
        cyy = yr.syy - sx * sx / big_n
        r = (sxy - sx * sx / big_n) / np.sqrt(cxx * cyy)
    ok = (cxx > 1e-9 * sxx) & (cyy > 1e-9 * yr.syy)
    return np.clip(np.where(ok, r, np.nan), -1.0, 1.0)


def _moment_sums(x: np.ndarray, use: np.ndarray, d: _Design) -> np.ndarray:
    """(n_items, 6·k) per-item sums of 1, x, y, x², y², x·y over each metric's usable rows (x, use: (k, n))."""
    u = use.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        n = np.maximum(u.sum(axis=1, keepdims=True), 1.0)
        xc = np.where(use, x - np.where(use, x, 0.0).sum(axis=1, keepdims=True) / n, 0.0)
    yc = np.where(use, d.y - (u * d.y).sum(axis=1, keepdims=True) / n, 0.0)  # centred: no digits lost to a mean
    per_row = np.vstack([u, xc, yc, xc * xc, yc * yc, xc * yc])
    order = np.argsort(d.items, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(d.items[order]) != 0])  # every item code has a row
    return np.add.reduceat(per_row[:, order], starts, axis=1).T


def _pearson_from_moments(m: np.ndarray) -> np.ndarray:
    """(k, b) Pearson r from (b, 6k) resampled moment sums laid out as `_moment_sums` makes them."""
    n, sx, sy, sxx, syy, sxy = np.split(m, 6, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cxx = sxx - sx * sx / n
        cyy = syy - sy * sy / n
        cxy = sxy - sx * sy / n
        r = cxy / np.sqrt(cxx * cyy)
    ok = (cxx > 1e-12 * np.maximum(sxx, 1e-300)) & (cyy > 1e-12 * np.maximum(syy, 1e-300))
    return np.clip(np.where(ok, r, np.nan), -1.0, 1.0).T


# ---------------------------------------------------------------------------------------------------------------
# One metric: point and replicates under one grouping.


@dataclass(frozen=True, eq=False, kw_only=True)
class _Design:
    """Rows of one comparison: rating y, item and system codes, and the item multiplicity blocks."""

    y: np.ndarray
    items: np.ndarray
    systems: np.ndarray
    n_items: int
    n_systems: int


def _count_blocks(n_items: int, n_boot: int, rng: np.random.Generator, width: int) -> Iterator[np.ndarray]:
    return cluster_count_blocks(n_items, n_boot, rng, width=width)


def _group_stat(statistic: str, w: np.ndarray, x: np.ndarray, y: np.ndarray, groups: np.ndarray,
                n_groups: int) -> np.ndarray:
    """(b, n_groups) statistic within each group under multiplicities w (b, n); NaN where undefined."""
    out = np.full((w.shape[0], n_groups), np.nan)
    for g in range(n_groups):
        rows = np.flatnonzero(groups == g)
        if rows.size < 2:
            continue
        out[:, g] = _one(statistic, w[:, rows], x[rows], y[rows])
    return out


def _one(statistic: str, w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Statistic over all rows under multiplicities w (b, n), each row its own cluster for Kendall."""
    if statistic == "pearson":
        return _weighted_pearson(w, x, y)
    if statistic == "spearman":
        return _weighted_spearman(w, x, y)
    if w.shape[0] == 1 and (w == 1).all():  # the point estimate: every row once
        return _kendall_last(x, y)[None]
    codes = np.arange(x.size)
    return _kendall_from_counts(w, _pair_matrices(x, y, codes, x.size), np.ones(x.size))


def _mean_over_groups(per_group: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Average of the defined group statistics, each group weighted by `weight` (b, g); NaN if none is defined."""
    ok = np.isfinite(per_group) & (weight > 0)
    num = np.where(ok, per_group * weight, 0.0).sum(axis=1)
    den = np.where(ok, weight, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def _residuals(w: np.ndarray, v: np.ndarray, systems: np.ndarray, n_systems: int) -> np.ndarray:
    """v minus its (multiplicity-weighted) system mean, per resample: least squares on one-hot system."""
    sums = np.zeros((w.shape[0], n_systems))
    cnts = np.zeros((w.shape[0], n_systems))
    np.add.at(sums.T, systems, (w * v).T)
    np.add.at(cnts.T, systems, w.T)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(cnts > 0, sums / cnts, 0.0)
    return v - means[:, systems]


def _replicates(statistic: str, grouping: str, x: np.ndarray, d: _Design, counts: np.ndarray) -> np.ndarray:
    """Statistic for each row of item multiplicities `counts` (b, n_items)."""
    w = counts[:, d.items]
    y = d.y
    if grouping == "none":
        if statistic == "kendall":
            return _kendall_from_counts(counts, _pair_matrices(x, y, d.items, d.n_items),
                                        np.bincount(d.items, minlength=d.n_items).astype(float))
        return _one(statistic, w, x, y)
    if grouping == "item":
        per_item = _group_stat(statistic, np.ones((1, x.size)), x, y, d.items, d.n_items)  # fixed per item
        return _mean_over_groups(np.broadcast_to(per_item, counts.shape), counts)
    if grouping == "system":
        per_system = _group_stat(statistic, w, x, y, d.systems, d.n_systems)
        return _mean_over_groups(per_system, np.ones_like(per_system))
    rx = _residuals(w, x, d.systems, d.n_systems)
    ry = _residuals(w, y, d.systems, d.n_systems)
    if statistic == "pearson":
        return _weighted_pearson(w, rx, ry)
    return _rowwise_spearman(w, rx, ry)


# ---------------------------------------------------------------------------------------------------------------
# Public API.


@dataclass(frozen=True, kw_only=True)
class Correlation:
    """One metric's correlation with the human rating, with its percentile bootstrap interval."""

    metric: str
    statistic: str
    grouping: str
    estimate: float
    ci_low: float
    ci_high: float
    n: int  # rows used (finite score and rating)
    n_missing: int  # rows left out: no finite score
    n_items: int
    n_systems: int
    n_groups_used: int  # items or systems whose correlation is defined (averaged); rows' count otherwise
    n_boot: int
    n_boot_dropped: int  # resamples where the statistic was undefined


@dataclass(frozen=True, kw_only=True)
class CorrelationDifference:
    """metric_a − metric_b on their common rows, with a paired-bootstrap CI and a paired permutation p."""

    metric_a: str
    metric_b: str
    statistic: str
    grouping: str
    difference: float
    ci_low: float
    ci_high: float
    permutation_p: float  # two-sided, paired permutation of standardised scores (Deutsch et al., 2021)
    williams_t: float  # Williams' test of dependent correlations (no grouping or partial; NaN otherwise)
    williams_p: float  # one-sided: the larger correlation is larger
    n: int
    n_boot: int
    n_perm: int


@dataclass(frozen=True, eq=False, kw_only=True)
class CorrelationBootstrap:
    """Point estimates and shared-draw replicates of several metrics under one statistic and grouping."""

    metrics: tuple[str, ...]
    statistic: str
    grouping: str
    point: np.ndarray  # (k,)
    replicates: np.ndarray  # (k, B)
    rows: np.ndarray  # (k, n) bool: rows each metric used
    n_items: int
    n_systems: int
    level: float

    def estimate(self, j: int) -> Correlation:
        """The j-th metric's correlation with its interval."""
        lo, hi, dropped = percentile_ci(self.replicates[j], self.level)
        rows = self.rows[j]
        return Correlation(metric=self.metrics[j], statistic=self.statistic, grouping=self.grouping,
                           estimate=float(self.point[j]), ci_low=lo, ci_high=hi, n=int(rows.sum()),
                           n_missing=int(rows.size - rows.sum()), n_items=self.n_items, n_systems=self.n_systems,
                           n_groups_used=-1, n_boot=int(self.replicates.shape[1]), n_boot_dropped=dropped)


def _design(rating: Sequence[float] | np.ndarray, items: Sequence | np.ndarray,
            systems: Sequence | np.ndarray | None) -> _Design:
    y = np.asarray(rating, dtype=np.float64)
    if y.ndim != 1 or not np.isfinite(y).all():
        raise ValueError("ratings must be a 1-D array of finite numbers")
    it = group_codes(items)
    if it.size != y.size:
        raise ValueError(f"items ({it.size}) must give one input item per rating ({y.size})")
    sy = group_codes(systems) if systems is not None else np.zeros(y.size, dtype=np.int64)
    if sy.size != y.size:
        raise ValueError(f"systems ({sy.size}) must give one system per rating ({y.size})")
    return _Design(y=y, items=it, systems=sy, n_items=int(it.max()) + 1 if it.size else 0,
                   n_systems=int(sy.max()) + 1 if sy.size else 0)


def _subset(d: _Design, rows: np.ndarray) -> _Design:
    it = d.items[rows]
    return _Design(y=d.y[rows], items=it, systems=d.systems[rows], n_items=d.n_items, n_systems=d.n_systems)


def _n_groups_used(statistic: str, grouping: str, x: np.ndarray, d: _Design) -> int:
    if grouping == "item":
        per = _group_stat(statistic, np.ones((1, x.size)), x, d.y, d.items, d.n_items)
    elif grouping == "system":
        per = _group_stat(statistic, np.ones((1, x.size)), x, d.y, d.systems, d.n_systems)
    else:
        return int(x.size)
    return int(np.isfinite(per).sum())


def correlation_bootstrap(rating: Sequence[float] | np.ndarray, scores: Mapping[str, Sequence[float] | np.ndarray], *,
                          items: Sequence | np.ndarray, systems: Sequence | np.ndarray | None = None,
                          statistic: str = "pearson", grouping: str = "none",
                          n_boot: int = DEFAULT_B, level: float = 0.95,
                          rng: np.random.Generator | int = 0, rows: np.ndarray | None = None) -> CorrelationBootstrap:
    """Correlations of several metrics with a graded human rating, on the same clustered resamples.

    Args:
        rating: the human rating per row (finite; higher = better supported).
        scores: metric name → score per row; NaN marks a missing score, left out of that metric only.
        items: the input item of each row; resampled with replacement, jointly across systems.
        systems: the system of each row; needed for the ``system`` and ``partial`` groupings.
        statistic: ``pearson``, ``spearman`` or ``kendall`` (τ-b).
        grouping: ``none``, ``item``, ``system`` or ``partial`` (residualised on one-hot system).
        n_boot: bootstrap resamples.
        level: the two-sided interval's coverage.
        rng: a seed or generator; the same seed gives the same draws for every metric.
        rows: optional (k, n) mask of the rows each metric may use (e.g. rows common to a pair).

    Returns:
        Points, replicates and the rows each metric used.

    Raises:
        ValueError: an unknown statistic or grouping, mismatched lengths, a non-finite rating, or a grouping
            that needs systems without them.

    Example:
        >>> import numpy as np
        >>> y = np.array([1., 2., 3., 4., 5., 6.])
        >>> res = correlation_bootstrap(y, {"m": [1., 3., 2., 5., 4., 6.]}, items=[0, 0, 1, 1, 2, 2], n_boot=200)
        >>> round(float(res.point[0]), 4)
        0.8857
    """
    _check_choice(statistic, grouping)
    if grouping in ("system", "partial") and systems is None:
        raise ValueError(f"the {grouping!r} grouping needs the system of each row")
    d = _design(rating, items, systems)
    names = tuple(scores)
    x_all = np.vstack([np.asarray(scores[m], dtype=np.float64) for m in names]) if names else np.zeros((0, d.y.size))
    if x_all.shape[1] != d.y.size:
        raise ValueError(f"every score column must have one value per rating ({d.y.size})")
    use = np.isfinite(x_all) if rows is None else (np.asarray(rows, dtype=bool) & np.isfinite(x_all))
    gen = as_generator(rng)
    point = np.full(len(names), np.nan)
    per_metric: list[_Design] = []
    for j in range(len(names)):
        dj = _subset(d, use[j])
        per_metric.append(dj)
        point[j] = _replicates(statistic, grouping, x_all[j, use[j]], dj, np.ones((1, d.n_items)))[0]
    reps = np.full((len(names), n_boot), np.nan)
    fast = grouping == "none" and statistic != "kendall"  # from item multiplicities, no (B, rows) weights
    sums = _moment_sums(x_all, use, d) if fast and statistic == "pearson" and names else None
    plans: dict[int, _SortedPlan] = {}
    incidence: dict[bytes, np.ndarray] = {}  # rating runs × items, shared by the metrics with the same rows
    keys = [np.packbits(use[j]).tobytes() for j in range(len(names))]
    if fast and statistic == "spearman":
        _, _, y_run = _tie_runs(d.y)
        n_runs = int(y_run.max()) + 1 if y_run.size else 0
        for j in range(len(names)):
            if keys[j] not in incidence:
                incidence[keys[j]] = _incidence(d.items[use[j]], y_run[use[j]], d.n_items, n_runs)
            plans[j] = _sorted_plan(x_all[j, use[j]], d.items[use[j]], y_run[use[j]], incidence[keys[j]], d.n_items)
    sub = max(1, _CACHE_CELLS // max(d.y.size, 1))  # Spearman: a few resamples at a time, the arrays stay in cache
    scratch = _scratch(sub * d.y.size) if plans else None
    start = 0
    for counts in _count_blocks(d.n_items, n_boot, gen, width=d.y.size):
        b = counts.shape[0]
        if sums is not None:  # Pearson over all rows: five moment sums per item, one product per block
            reps[:, start:start + b] = _pearson_from_moments(counts @ sums)
        elif scratch is not None:  # Spearman over all rows: the rating's ranks once per block and row set
            for a in range(0, b, sub):
                c = counts[a:a + sub]
                ranks = {key: _rating_ranks(c, inc) for key, inc in incidence.items()}
                ci = c.astype(np.int64)
                for j, plan in plans.items():
                    reps[j, start + a:start + a + c.shape[0]] = _spearman_sorted(ci, plan, ranks[keys[j]], scratch)
        else:
            for j in range(len(names)):
                reps[j, start:start + b] = _replicates(statistic, grouping, x_all[j, use[j]], per_metric[j], counts)
        start += b
    return CorrelationBootstrap(metrics=names, statistic=statistic, grouping=grouping, point=point, replicates=reps,
                                rows=use, n_items=d.n_items, n_systems=d.n_systems, level=level)


def correlations(rating: Sequence[float] | np.ndarray, scores: Mapping[str, Sequence[float] | np.ndarray], *,
                 items: Sequence | np.ndarray, systems: Sequence | np.ndarray | None = None,
                 statistic: str = "pearson", grouping: str = "none",
                 n_boot: int = DEFAULT_B, level: float = 0.95, rng: np.random.Generator | int = 0) -> list[Correlation]:
    """Each metric's correlation with the rating and its clustered-bootstrap CI (see `correlation_bootstrap`).

    Example:
        >>> out = correlations([1., 2., 3., 4.], {"m": [1., 2., 4., 3.]}, items=[0, 1, 2, 3], n_boot=100)
        >>> (out[0].metric, round(out[0].estimate, 3), out[0].n)
        ('m', 0.8, 4)
    """
    d = _design(rating, items, systems)
    res = correlation_bootstrap(rating, scores, items=items, systems=systems, statistic=statistic, grouping=grouping,
                                n_boot=n_boot, level=level, rng=rng)
    out = []
    for j, name in enumerate(res.metrics):
        c = res.estimate(j)
        used = _n_groups_used(statistic, grouping, np.asarray(scores[name], dtype=np.float64)[res.rows[j]],
                              _subset(d, res.rows[j]))
        out.append(replace(c, n_groups_used=used))
    return out


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """Williams' test that corr(1, 2) exceeds corr(1, 3), both sharing variable 1 (the human rating).

    The form Steiger (1980, eq. 7) gives and WMT and FRANK report: with |R| = 1 − r12² − r13² − r23² +
    2·r12·r13·r23 and r̄ = (r12 + r13)/2, t = (r12 − r13)·√((n − 1)(1 + r23)) /
    √(2·|R|·(n − 1)/(n − 3) + r̄²·(1 − r23)³) on n − 3 degrees of freedom.

    Args:
        r12: correlation of the rating with metric a.
        r13: correlation of the rating with metric b.
        r23: correlation of metric a with metric b.
        n: rows the three correlations were computed on (more than 3).

    Returns:
        (t, one-sided p that r12 > r13).

    Raises:
        ValueError: n ≤ 3.

    Example:
        >>> t, p = williams_test(0.6, 0.4, 0.5, 100)
        >>> round(t, 3), round(p, 4)
        (2.449, 0.0081)
    """
    if n <= 3:
        raise ValueError(f"Williams' test needs more than 3 rows; got {n}")
    det = max(0.0, 1.0 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2.0 * r12 * r13 * r23)  # |R| ≥ 0 up to rounding
    rbar = (r12 + r13) / 2.0
    den = np.sqrt(2.0 * det * (n - 1) / (n - 3) + rbar ** 2 * (1.0 - r23) ** 3)
    t = float((r12 - r13) * np.sqrt((n - 1) * (1.0 + r23)) / den) if den > 0 else float("nan")
    return t, float(1.0 - stdtr(n - 3, t)) if np.isfinite(t) else float("nan")


def _standardise(v: np.ndarray) -> np.ndarray:
    sd = v.std()
    return (v - v.mean()) / sd if sd > 0 else v - v.mean()


# ---------------------------------------------------------------------------------------------------------------
# Many score vectors on the same rows at once (the permutation test): statistics along the last axis.


def _rank_last(x: np.ndarray) -> np.ndarray:
    """Average ranks (from 1) along the last axis, ties sharing their mean rank, as scipy's rankdata."""
    m = x.shape[-1]
    order = np.argsort(x, axis=-1, kind="stable")
    xs = np.take_along_axis(x, order, axis=-1)
    pos = np.broadcast_to(np.arange(m), xs.shape)
    new = np.ones(xs.shape, dtype=bool)
    new[..., 1:] = xs[..., 1:] != xs[..., :-1]
    last = np.ones(xs.shape, dtype=bool)
    last[..., :-1] = new[..., 1:]
    first_pos = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    last_pos = np.flip(np.minimum.accumulate(np.flip(np.where(last, pos, m - 1), axis=-1), axis=-1), axis=-1)
    out = np.empty(xs.shape)
    np.put_along_axis(out, order, (first_pos + last_pos) / 2.0 + 1.0, axis=-1)
    return out


def _pearson_last(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis (x and y broadcast); NaN where either side is constant."""
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=-1) / np.sqrt((xc * xc).sum(axis=-1) * (yc * yc).sum(axis=-1))
    defined = (np.ptp(x, axis=-1) > 0) & (np.ptp(y, axis=-1) > 0)
    return np.clip(np.where(defined, r, np.nan), -1.0, 1.0)


def _kendall_last(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall τ-b along the last axis from all pairs (short groups: an item's systems, a system's items).

    x is (..., m) and y (m,) or the trailing shape of x without its leading axes (the rating is the same for
    every score vector). Over ordered pairs, Σ sign(x_i − x_j)·sign(y_i − y_j) = 2·Σ [x_i > x_j]·sign(y_i − y_j):
    one comparison per pair, summed against the rating's signs by a matrix product.
    """
    m = x.shape[-1]
    sy = np.sign(y[..., :, None] - y[..., None, :]).reshape(*y.shape[:-1], m * m, 1)
    gt = (x[..., :, None] > x[..., None, :]).reshape(*x.shape[:-1], 1, m * m)
    s = 2.0 * (gt.astype(np.float64) @ sy)[..., 0, 0]
    n0 = m * (m - 1.0)  # ordered pairs: the factor 2 cancels
    n1 = n0 - 2.0 * gt.sum(axis=(-1, -2))  # pairs neither greater nor smaller are ties
    n2 = (sy == 0).sum(axis=(-1, -2)) - m
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = s / np.sqrt((n0 - n1) * (n0 - n2))
    return np.clip(np.where((n0 - n1 > 0) & (n0 - n2 > 0), tau, np.nan), -1.0, 1.0)


def _stat_last(statistic: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if statistic == "pearson":
        return _pearson_last(x, y)
    if statistic == "spearman":
        return _pearson_last(_rank_last(x), _rank_last(y))
    return _kendall_last(x, y)


def _group_tables(groups: np.ndarray) -> list[np.ndarray]:
    """Row indices of the groups, stacked by group size: one (groups, size) array per size."""
    order = np.argsort(groups, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(groups[order]) != 0]) if groups.size else np.zeros(0, dtype=int)
    sizes = np.diff(np.r_[starts, groups.size])
    return [np.vstack([order[st:st + size] for st in starts[sizes == size]]) for size in np.unique(sizes) if size >= 2]


def _system_residuals(x: np.ndarray, d: _Design) -> np.ndarray:
    """Each row of x (P, n) minus its system means: least squares on one-hot system."""
    sums = np.zeros((x.shape[0], d.n_systems))
    np.add.at(sums.T, d.systems, x.T)
    counts = np.bincount(d.systems, minlength=d.n_systems).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / counts, 0.0)
    return x - means[:, d.systems]


def _batch_statistic(statistic: str, grouping: str, x: np.ndarray, d: _Design) -> np.ndarray:
    """The statistic of each row of scores x (P, n) with the rating, every row of the design counted once."""
    if grouping == "none":
        return _stat_last(statistic, x, d.y)
    if grouping == "partial":
        return _stat_last(statistic, _system_residuals(x, d), _system_residuals(d.y[None, :], d)[0])
    num = np.zeros(x.shape[0])
    den = np.zeros(x.shape[0])
    for idx in _group_tables(d.items if grouping == "item" else d.systems):
        per = _stat_last(statistic, x[:, idx], d.y[idx])  # (P, groups of this size)
        ok = np.isfinite(per)
        num += np.where(ok, per, 0.0).sum(axis=1)
        den += ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def _pair_sign_form(za: np.ndarray, zb: np.ndarray, y: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, float]:
    """The ordered-pair sum of h over rows, as a quadratic form in the flips f (1: the row's scores swapped).

    h(u_i, v_j) is sign(u_i − v_j)·sign(y_i − y_j) (concordance; y given) or [u_i = v_j] (score ties). With
    G_ab = h(z_a, z_b) over ordered pairs of distinct rows, the sum for the swapped vector is
    Σ G00 + 2 f·(G10·1 − G00·1) + f·H·f with H = G00 + G11 − G10 − G10ᵀ, so every permutation is one
    matrix product. Returns (H, the linear coefficients 2·(G10·1 − G00·1), Σ G00).
    """
    sy = np.sign(y[:, None] - y[None, :]) if y is not None else None

    def h(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        out = np.sign(u[:, None] - v[None, :]) if sy is not None else (u[:, None] == v[None, :]).astype(np.float64)
        if sy is not None:
            out *= sy
        np.fill_diagonal(out, 0.0)
        return out

    g00 = h(za, za)
    g10 = h(zb, za)
    lin = 2.0 * (g10.sum(axis=1) - g00.sum(axis=1))
    total = float(g00.sum())
    big_h = g00
    big_h += h(zb, zb)
    big_h -= g10
    big_h -= g10.T
    return big_h, lin, total


def _kendall_flipped(za: np.ndarray, zb: np.ndarray, y: np.ndarray, flips: np.ndarray,
                     forms: tuple[tuple[np.ndarray, np.ndarray, float], ...]) -> tuple[np.ndarray, np.ndarray]:
    """τ-b of the swapped a-scores and of the swapped b-scores, for each row of flips (P, n)."""
    n = za.size
    n0 = n * (n - 1.0)
    n2 = float((y[:, None] == y[None, :]).sum() - n)
    f = flips.astype(np.float64)
    out = []
    for side in (f, 1.0 - f):  # b's vector is a's with every flip reversed
        (hs, ls, ts), (ht, lt, tt) = forms
        s = ts + side @ ls + np.einsum("pn,pn->p", side @ hs, side)
        n1 = tt + side @ lt + np.einsum("pn,pn->p", side @ ht, side)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = s / np.sqrt((n0 - n1) * (n0 - n2))
        out.append(np.clip(np.where((n0 - n1 > 0) & (n0 - n2 > 0), tau, np.nan), -1.0, 1.0))
    return out[0], out[1]


def _permutation_p(statistic: str, grouping: str, za: np.ndarray, zb: np.ndarray, d: _Design, n_perm: int,
                   gen: np.random.Generator) -> float:
    """Two-sided paired permutation p of the difference a − b: each row's two (standardised) scores swapped
    with probability 1/2, all permutations of a block computed at once; (1 + hits) / (1 + n_perm)."""
    n = za.size
    forms = None
    if statistic == "kendall" and grouping == "none":
        if 4 * n * n > MAX_CELLS:  # four (rows × rows) matrices at once
            raise ValueError(f"the paired permutation test of Kendall τ-b over all rows is quadratic: {n} rows "
                             f"exceed {math.isqrt(MAX_CELLS // 4)}; use the item or system grouping")
        forms = (_pair_sign_form(za, zb, d.y), _pair_sign_form(za, zb, None))
        observed = _kendall_flipped(za, zb, d.y, np.zeros((1, n), dtype=bool), forms)
    else:
        observed = (_batch_statistic(statistic, grouping, za[None, :], d),
                    _batch_statistic(statistic, grouping, zb[None, :], d))
    delta = abs(float(observed[0][0] - observed[1][0]))
    if not np.isfinite(delta):
        return float("nan")
    if statistic == "kendall" and grouping in ("item", "system"):  # all pairs within each group, a few arrays of them
        wide = 10 * int((np.bincount(d.items if grouping == "item" else d.systems) ** 2).sum())
    else:
        wide = 8 * n
    step = max(1, min(n_perm, block_rows(wide)))
    hits = 0
    for start in range(0, n_perm, step):
        flips = gen.random((min(step, n_perm - start), n)) < 0.5
        if forms is not None:
            sa, sb = _kendall_flipped(za, zb, d.y, flips, forms)
        else:
            both = _batch_statistic(statistic, grouping, np.vstack([np.where(flips, zb, za), np.where(flips, za, zb)]),
                                    d)
            sa, sb = both[:flips.shape[0]], both[flips.shape[0]:]
        hits += int((np.abs(sa - sb) >= delta - 1e-12).sum())  # an undefined permutation (NaN) counts as no hit
    return (1 + hits) / (1 + n_perm)


def _williams(statistic: str, grouping: str, ya: np.ndarray, yb: np.ndarray, d: _Design) -> tuple[float, float]:
    """Williams' test on the common rows for Pearson or Spearman correlations, over all rows or partial."""
    if statistic == "kendall" or grouping not in ("none", "partial") or ya.size <= 3:
        return float("nan"), float("nan")
    vals = np.vstack([d.y, ya, yb])
    if grouping == "partial":
        vals = _system_residuals(vals, d)
    if statistic == "spearman":
        vals = _rank_last(vals)
    r = np.corrcoef(vals)
    if not np.isfinite(r).all():
        return float("nan"), float("nan")
    hi_r, lo_r = (r[0, 1], r[0, 2]) if r[0, 1] >= r[0, 2] else (r[0, 2], r[0, 1])
    return williams_test(float(hi_r), float(lo_r), float(r[1, 2]), int(ya.size))


def compare_all(rating: Sequence[float] | np.ndarray, scores: Mapping[str, Sequence[float] | np.ndarray], *,
                items: Sequence | np.ndarray, systems: Sequence | np.ndarray | None = None,
                pairs: Sequence[tuple[str, str]] | None = None, statistic: str = "pearson", grouping: str = "none",
                n_boot: int = DEFAULT_B, n_perm: int = 1000, level: float = 0.95,
                rng: np.random.Generator | int = 0) -> list[CorrelationDifference]:
    """Every pair of metrics compared on the rows both scored, under one statistic and grouping.

    Three views of a − b: the paired clustered-bootstrap CI of the difference (every pair on the same item
    draws); a paired permutation test that swaps the two metrics' standardised scores row by row (Deutsch,
    Dror and Roth, TACL 2021; standardising puts metrics on one scale), all permutations of a block computed
    as arrays; and Williams' test for dependent correlations sharing the rating (Steiger 1980, eq. 7), for all
    rows and the partial correlation, applied to Pearson's r or, as WMT and FRANK do, to Spearman's ρ in
    place of r (then an approximation: the formula assumes Pearson correlations of normal variables); not
    for Kendall τ-b nor for averaged groupings, where it is NaN.

    Each pair draws what `compare_correlations` draws for it alone, from a copy of `rng`.

    Args:
        rating: the human rating per row.
        scores: metric → score per row (NaN: missing).
        items: the input item of each row (the bootstrap's cluster).
        systems: the system of each row (``system`` and ``partial`` groupings).
        pairs: the (a, b) pairs to compare; every pair in order of `scores` by default.
        statistic: ``pearson``, ``spearman`` or ``kendall``.
        grouping: ``none``, ``item``, ``system`` or ``partial``.
        n_boot: bootstrap resamples.
        n_perm: permutations per pair.
        level: the interval's coverage.
        rng: a seed or generator (copied, not advanced).

    Returns:
        One CorrelationDifference per pair.

    Raises:
        ValueError: as `correlation_bootstrap`; Kendall τ-b over all rows beyond its size limits.
    """
    _check_choice(statistic, grouping)
    gen0 = as_generator(rng)
    names = list(scores)
    if pairs is None:
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    x = {m: np.asarray(scores[m], dtype=np.float64) for m in names}
    d_all = _design(rating, items, systems)
    by_rows: dict[bytes, list[tuple[str, str]]] = {}
    common: dict[bytes, np.ndarray] = {}
    for a, b in pairs:
        both = np.isfinite(x[a]) & np.isfinite(x[b])
        key = np.packbits(both).tobytes()
        common.setdefault(key, both)
        by_rows.setdefault(key, []).append((a, b))
    found: dict[tuple[str, str], CorrelationDifference] = {}
    for key, group in by_rows.items():
        rows = common[key]
        used = list(dict.fromkeys(m for pair in group for m in pair))
        gen = copy.deepcopy(gen0)
        res = correlation_bootstrap(rating, {m: x[m] for m in used}, items=items, systems=systems,
                                    statistic=statistic, grouping=grouping, n_boot=n_boot, level=level, rng=gen,
                                    rows=np.broadcast_to(rows, (len(used), rows.size)))
        d = _subset(d_all, rows)
        for a, b in group:
            ia, ib = used.index(a), used.index(b)
            lo, hi, _ = percentile_ci(res.replicates[ia] - res.replicates[ib], level)
            za, zb = _standardise(x[a][rows]), _standardise(x[b][rows])
            perm_p = _permutation_p(statistic, grouping, za, zb, d, n_perm, copy.deepcopy(gen))
            wt, wp = _williams(statistic, grouping, x[a][rows], x[b][rows], d)
            found[(a, b)] = CorrelationDifference(
                metric_a=a, metric_b=b, statistic=statistic, grouping=grouping,
                difference=float(res.point[ia] - res.point[ib]), ci_low=lo, ci_high=hi, permutation_p=float(perm_p),
                williams_t=wt, williams_p=wp, n=int(rows.sum()), n_boot=n_boot, n_perm=n_perm)
    return [found[(a, b)] for a, b in pairs]


def compare_correlations(rating: Sequence[float] | np.ndarray, score_a: Sequence[float] | np.ndarray,
                         score_b: Sequence[float] | np.ndarray, *,
                         items: Sequence | np.ndarray, systems: Sequence | np.ndarray | None = None,
                         names: tuple[str, str] = ("a", "b"),
                         statistic: str = "pearson", grouping: str = "none", n_boot: int = DEFAULT_B,
                         n_perm: int = 1000, level: float = 0.95,
                         rng: np.random.Generator | int = 0) -> CorrelationDifference:
    """Is metric a's correlation with the rating different from metric b's? On the rows both scored.

    The paired bootstrap CI, the paired permutation p and Williams' test of `compare_all`, for one pair.

    Example:
        >>> import numpy as np
        >>> g = np.random.default_rng(0); y = g.normal(size=60)
        >>> a = y + g.normal(scale=0.5, size=60); b = g.normal(size=60)
        >>> d = compare_correlations(y, a, b, items=np.arange(60), n_boot=200, n_perm=200)
        >>> d.difference > 0 and d.ci_low > 0 and d.permutation_p < 0.05
        True
    """
    return compare_all(rating, {names[0]: score_a, names[1]: score_b}, items=items, systems=systems,
                       pairs=[names], statistic=statistic, grouping=grouping, n_boot=n_boot, n_perm=n_perm,
                       level=level, rng=rng)[0]
