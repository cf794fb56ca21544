"""The correlation section of an audit: each metric's correlation with a graded human rating, per slice.

Pearson, Spearman and Kendall τ-b under the groupings meta-evaluation reports (none, by input item, by system)
and the partial correlation by system (FRANK), each with a clustered-bootstrap interval (input items resampled
jointly across systems), and every pair of metrics compared on their common rows (paired bootstrap CI, paired
permutation p, Williams' p). The records are frozen dataclasses; results.json holds their plain form.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Mapping, Sequence

import numpy as np

from attrib_audit.data.records import PairTable
from attrib_audit.files.jsonfile import plain
from attrib_audit.stats.bootstrap import slice_rng
from attrib_audit.stats.correlation import Correlation, CorrelationDifference, compare_correlations, correlations

# (statistic, grouping) of the table: three groupings per statistic, then the partial correlation by system
TABLE = tuple((s, g) for s in ("pearson", "spearman", "kendall") for g in ("none", "item", "system")) + (
    ("pearson", "partial"), ("spearman", "partial"))
# metric-vs-metric tests: each redoes its statistic once per permutation, so the costly ones (Kendall's O(n²) pairs,
# Spearman's per-system re-ranking for the partial correlation) are left to `stats.correlation.compare_correlations`
COMPARED = (("pearson", "none"), ("spearman", "none"), ("pearson", "partial"))
N_PERM = 1000  # permutations per paired test: p is resolved to about 0.001
GROUPING_NAMES = {"none": "all rows", "item": "per input item, averaged", "system": "per system, averaged",
                  "partial": "partial, controlling for system"}


@dataclass(frozen=True)
class SliceCorrelations:
    """One slice's correlation table and its metric-vs-metric comparisons."""

    slice: str
    n: int  # rows with a rating
    n_items: int
    n_systems: int  # 0: rows name no system (no system grouping, no partial correlation)
    correlations: tuple[Correlation, ...]
    differences: tuple[CorrelationDifference, ...]


@dataclass(frozen=True)
class CorrelationSection:
    """The `correlations` block of results.json."""

    rating: str  # the rating's column
    level: float
    n_boot: int
    n_perm: int
    groupings: dict[str, str]
    notes: tuple[str, ...]
    slices: tuple[SliceCorrelations, ...]


def rating_column(table: PairTable) -> str:
    """The column the ratings were read from (as the loader recorded it)."""
    for o in table.origin:
        col = o.get("load", {}).get("columns", {}).get("rating")
        if col:
            return str(col)
    return "rating"


def slice_correlations(name: str, rating: np.ndarray, scores: Mapping[str, np.ndarray], items: Sequence[str],
                       systems: Sequence[str] | None, *, n_boot: int, level: float, seed: int,
                       n_perm: int = N_PERM) -> SliceCorrelations:
    """Every (statistic, grouping) of `TABLE` the slice allows, and the `COMPARED` metric pairs.

    Args:
        name: the slice (seeds its draws, so a slice's answer does not depend on the others).
        rating: the human rating per row.
        scores: metric → score per row (NaN: missing, left out of that metric and counted).
        items: input item per row (the bootstrap's cluster).
        systems: system per row, or None when the rows name none.
        n_boot: bootstrap resamples.
        level: interval coverage.
        seed: the audit's seed.
        n_perm: permutations per paired test.

    Returns:
        The slice's record.
    """
    rows: list[Correlation] = []
    diffs: list[CorrelationDifference] = []
    for statistic, grouping in TABLE:
        if grouping in ("system", "partial") and systems is None:
            continue
        rows += correlations(rating, scores, items=items, systems=systems, statistic=statistic, grouping=grouping,
                             n_boot=n_boot, level=level, rng=slice_rng(seed, f"{name}:correlation"))
    for statistic, grouping in COMPARED:
        if grouping == "partial" and systems is None:
            continue
        for a, b in combinations(list(scores), 2):
            diffs.append(compare_correlations(rating, scores[a], scores[b], items=items, systems=systems,
                                              names=(a, b), statistic=statistic, grouping=grouping, n_boot=n_boot,
                                              n_perm=n_perm, level=level, rng=slice_rng(seed, f"{name}:compare")))
    return SliceCorrelations(slice=name, n=int(rating.size), n_items=len(set(items)),
                             n_systems=0 if systems is None else len(set(systems)),
                             correlations=tuple(rows), differences=tuple(diffs))


def correlation_section(table: PairTable, keys: Sequence[str], scores: Mapping[str, np.ndarray], *, n_boot: int,
                        level: float, seed: int) -> dict[str, Any] | None:
    """The correlation block of results.json (plain data), or None when no row has a rating."""
    if table.ratings is None:
        return None
    key_arr = np.asarray(keys, dtype=object)
    have = np.isfinite(table.ratings)
    out = []
    for sl in sorted(set(keys)):
        rows = np.flatnonzero((key_arr == sl) & have)
        if rows.size < 3:
            continue
        systems = [table.systems[i] for i in rows]
        named = all(s is not None for s in systems)
        out.append(slice_correlations(
            sl, table.ratings[rows], {m: np.asarray(v, dtype=np.float64)[rows] for m, v in scores.items()},
            [table.groups[i] for i in rows], [str(s) for s in systems] if named else None,
            n_boot=n_boot, level=level, seed=seed))
    notes = (f"{level:.0%} percentile intervals from {n_boot} clustered bootstrap resamples: input items (`group`) "
             "are drawn with replacement, each with all its system outputs",
             "item / system: the correlation within each input item (across its systems) or each system (across "
             "its items), averaged over those where it is defined; partial: score and rating residualised on "
             "one-hot system by least squares, then correlated (FRANK), so telling systems apart earns nothing",
             "differences are metric a minus metric b on the rows both scored: paired bootstrap CI, two-sided "
             f"paired permutation p ({N_PERM} permutations of standardised scores), and Williams' one-sided p "
             "(Pearson only) that the larger correlation is larger",
             "n_missing counts rows a metric has no score for; they are left out of that metric only")
    section = CorrelationSection(rating=rating_column(table), level=level, n_boot=n_boot, n_perm=N_PERM,
                                 groupings=dict(GROUPING_NAMES), notes=notes, slices=tuple(out))
    return plain(dataclasses.asdict(section))
