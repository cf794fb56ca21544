"""The correlation section of an audit: each metric's correlation with a graded human rating, per slice.

Pearson, Spearman and Kendall τ-b under the groupings meta-evaluation reports (none, by input item, by system)
and the partial correlation by system (FRANK), each with a clustered-bootstrap interval (input items resampled
jointly across systems), and every pair of metrics compared on their common rows (paired bootstrap CI, paired
permutation p, Williams' p). The records are frozen dataclasses; results.json holds their plain form.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from attrib_audit.audit.config import TRANSFER_STATISTICS
from attrib_audit.data.labels import RatingCut
from attrib_audit.data.origin import PairsFile
from attrib_audit.data.records import PairTable
from attrib_audit.stats.bootstrap import bootstrap_aurocs, percentile_ci, slice_rng
from attrib_audit.stats.correlation import (
    Correlation,
    CorrelationDifference,
    compare_all,
    correlation_bootstrap,
    correlations,
)

# (statistic, grouping) of the table: three groupings per statistic, then the partial correlation by system
TABLE = tuple((s, g) for s in ("pearson", "spearman", "kendall") for g in ("none", "item", "system")) + (
    ("pearson", "partial"), ("spearman", "partial"))
N_PERM = 1000  # most permutations per paired test (fewer with a smaller --n-perm): p is resolved to about 0.001
GROUPING_NAMES = {"none": "all rows", "item": "per input item, averaged", "system": "per system, averaged",
                  "partial": "partial, controlling for system"}


@dataclass(frozen=True, kw_only=True)
class SliceCorrelations:
    """One slice's correlation table and its metric-vs-metric comparisons."""

    slice: str
    n: int  # rows with a rating
    n_items: int
    n_systems: int  # 0: rows name no system (no system grouping, no partial correlation)
    correlations: tuple[Correlation, ...]
    differences: tuple[CorrelationDifference, ...]
    skipped: tuple[str, ...] = ()  # statistic/grouping cells not computed here, each with why


@dataclass(frozen=True, kw_only=True)
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
        col = o.load.columns.get("rating") if isinstance(o, PairsFile) and o.load is not None else None
        if col:
            return col
    return "rating"


def slice_correlations(name: str, rating: np.ndarray, scores: Mapping[str, np.ndarray], items: Sequence[str],
                       systems: Sequence[str] | None, *, n_boot: int, level: float, seed: int,
                       n_perm: int = N_PERM) -> SliceCorrelations:
    """Every (statistic, grouping) of `TABLE` the slice allows, and every pair of metrics compared under each.

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
    skipped: list[str] = []
    for statistic, grouping in TABLE:
        if grouping in ("system", "partial") and systems is None:
            continue
        try:
            cell = correlations(rating, scores, items=items, systems=systems, statistic=statistic,
                                grouping=grouping, n_boot=n_boot, level=level,
                                rng=slice_rng(seed, f"{name}:correlation"))
            pairs = compare_all(rating, scores, items=items, systems=systems, statistic=statistic, grouping=grouping,
                                n_boot=n_boot, n_perm=n_perm, level=level, rng=slice_rng(seed, f"{name}:compare"))
        except ValueError as exc:  # Kendall τ-b's pair arithmetic on too many rows: said, not computed
            if statistic != "kendall":
                raise
            skipped.append(f"{statistic} {GROUPING_NAMES[grouping]}: {exc}")
            continue
        rows += cell
        diffs += pairs
    return SliceCorrelations(slice=name, n=int(rating.size), n_items=len(set(items)),
                             n_systems=0 if systems is None else len(set(systems)),
                             correlations=tuple(rows), differences=tuple(diffs), skipped=tuple(skipped))


def correlation_section(table: PairTable, keys: Sequence[str], scores: Mapping[str, np.ndarray], *, n_boot: int,
                        level: float, seed: int, n_perm: int = N_PERM) -> CorrelationSection | None:
    """The correlation block of results.json, or None when no row has a rating.

    Args:
        table: the audited rows.
        keys: the slice of each row.
        scores: metric → score per row.
        n_boot: bootstrap resamples.
        level: interval coverage.
        seed: the audit's seed.
        n_perm: permutations per paired test (at most `N_PERM`).

    Returns:
        The block, or None.
    """
    n_perm = max(1, min(int(n_perm), N_PERM))
    if table.ratings is None:
        return None
    key_arr = np.asarray(keys, dtype=object)
    have = np.isfinite(table.ratings)
    out = []
    for sl in sorted(set(keys)):
        rows = np.flatnonzero((key_arr == sl) & have)
        if rows.size < 3:
            continue
        systems = [table.systems[i] for i in rows] if table.systems is not None else [None] * rows.size
        named = all(s is not None for s in systems)
        out.append(slice_correlations(
            sl, table.ratings[rows], {m: np.asarray(v, dtype=np.float64)[rows] for m, v in scores.items()},
            [table.groups[i] for i in rows], [str(s) for s in systems] if named else None,
            n_boot=n_boot, level=level, seed=seed, n_perm=n_perm))
    notes = (f"{level:.0%} percentile intervals from {n_boot} clustered bootstrap resamples: input items (`group`) "
             "are drawn with replacement, each with all its system outputs",
             "item / system: the correlation within each input item (across its systems) or each system (across "
             "its items), averaged over those where it is defined; partial: score and rating residualised on "
             "one-hot system by least squares, then correlated (FRANK), so telling systems apart earns nothing",
             "differences are metric a minus metric b on the rows both scored, for every statistic and grouping: "
             f"paired bootstrap CI (the same draws), two-sided paired permutation p ({n_perm} row-wise swaps of "
             "standardised scores), and Williams' one-sided p that the larger correlation is larger (all rows and "
             "partial; for Spearman applied to the Spearman correlations, as WMT and FRANK do, an approximation; "
             "none for Kendall or the averaged groupings)",
             "n_missing counts rows a metric has no score for; they are left out of that metric only")
    section = CorrelationSection(rating=rating_column(table), level=level, n_boot=n_boot, n_perm=n_perm,
                                 groupings=dict(GROUPING_NAMES), notes=notes, slices=tuple(out))
    return section


# ---- a correlation as the transfer statistic (`--statistic`) ------------------------------------------------------

def statistic_parts(name: str) -> tuple[str, str]:
    """(statistic, grouping) of a graded transfer statistic: `pearson` over all rows, `partial-pearson` by system."""
    if name not in TRANSFER_STATISTICS[1:]:
        raise ValueError(f"statistic must be one of {', '.join(TRANSFER_STATISTICS)}; got {name!r}")
    return (name[len("partial-"):], "partial") if name.startswith("partial-") else (name, "none")


@dataclass(frozen=True)
class AlignedStatistic:
    """Several metrics' correlations on the rows all of them scored, on the slice's draws (as AlignedAUROC)."""

    point: np.ndarray  # (k,)
    replicates: np.ndarray  # (k, B)
    n: int  # rows used
    dropped: np.ndarray  # (k,) rows each metric's missing scores removed


@dataclass(frozen=True, eq=False, kw_only=True)
class StatisticBoot:
    """One slice's correlation of every metric with the rating, with replicates; what the transfer statistics
    (matrix, regret, selector) read in place of the AUROC bootstrap. The draws depend on the seed and the slice
    name only, so `select` recomputes them exactly."""

    statistic: str  # one of TRANSFER_STATISTICS[1:]
    name: str
    seed: int
    scores: np.ndarray  # (m, n)
    rating: np.ndarray  # (n,)
    items: np.ndarray  # (n,)
    systems: np.ndarray | None  # (n,)
    n_boot: int
    point: np.ndarray  # (m,) each metric on its own rows
    replicates: np.ndarray  # (m, B)

    @property
    def n_rows(self) -> int:
        return int(self.rating.size)

    def _run(self, idx: Sequence[int], rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        statistic, grouping = statistic_parts(self.statistic)
        res = correlation_bootstrap(self.rating, {str(j): self.scores[j] for j in idx}, items=self.items,
                                    systems=self.systems, statistic=statistic, grouping=grouping, n_boot=self.n_boot,
                                    rng=slice_rng(self.seed, f"{self.name}:transfer"), rows=rows)
        return res.point, res.replicates

    def aligned(self, idx: Sequence[int] | np.ndarray) -> AlignedStatistic:
        """Metrics `idx` on the rows where all of them have a score, with the same draws."""
        idx = [int(j) for j in idx]
        finite = np.isfinite(self.scores[idx])
        common = finite.all(axis=0)
        point, reps = self._run(idx, np.broadcast_to(common, finite.shape))
        return AlignedStatistic(point, reps, int(common.sum()), (~finite).sum(axis=1))


def statistic_boot(statistic: str, name: str, *, rating: np.ndarray, scores: np.ndarray, items: Sequence[str],
                   systems: Sequence[str] | None, n_boot: int, seed: int) -> StatisticBoot:
    """The slice's StatisticBoot (each metric on its own rows).

    Raises:
        ValueError: a partial correlation asked of rows that name no system.
    """
    _, grouping = statistic_parts(statistic)
    if grouping == "partial" and systems is None:
        raise ValueError("the partial correlation needs the system of every row")
    sm = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    boot = StatisticBoot(statistic=statistic, name=name, seed=seed, scores=sm,
                         rating=np.asarray(rating, dtype=np.float64), items=np.asarray(items, dtype=str),
                         systems=None if systems is None else np.asarray(systems, dtype=str), n_boot=n_boot,
                         point=np.zeros(0), replicates=np.zeros((0, 0)))
    point, reps = boot._run(range(sm.shape[0]), None)
    return dataclasses.replace(boot, point=point, replicates=reps)


def graded_boots(table: PairTable, keys: Sequence[str], scores: Mapping[str, np.ndarray], statistic: str, *,
                 n_boot: int, seed: int) -> tuple[dict[str, StatisticBoot], dict[str, str]]:
    """Every slice's StatisticBoot where the statistic is defined, and why the others have none."""
    key_arr = np.asarray(keys, dtype=object)
    names = list(scores)
    out: dict[str, StatisticBoot] = {}
    why: dict[str, str] = {}
    have = np.isfinite(table.ratings) if table.ratings is not None else np.zeros(len(table), dtype=bool)
    for sl in sorted(set(keys)):
        rows = np.flatnonzero((key_arr == sl) & have)
        if rows.size < 3:
            why[sl] = "no graded rating in slice (--rating-col)"
            continue
        systems = [table.systems[i] for i in rows] if table.systems is not None else [None] * rows.size
        named = all(s is not None for s in systems)
        try:
            out[sl] = statistic_boot(statistic, sl, rating=table.ratings[rows],  # type: ignore[index]
                                     scores=np.vstack([np.asarray(scores[m], dtype=np.float64)[rows] for m in names]),
                                     items=[table.groups[i] for i in rows],
                                     systems=[str(s) for s in systems] if named else None, n_boot=n_boot, seed=seed)
        except ValueError as exc:
            why[sl] = str(exc)
    return out, why


# ---- how the AUROC depends on the cut that derived the label ------------------------------------------------------

@dataclass(frozen=True)
class CutAuroc:
    """One metric's AUROC at one cut."""

    metric: str
    auroc: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, kw_only=True)
class CutRow:
    """Every metric's AUROC when the label is `rating >= cut`, and the metric that cut would recommend."""

    slice: str
    cut: float
    n: int
    n_pos: int
    chosen: bool  # the cut the audit's label came from
    aurocs: tuple[CutAuroc, ...]
    best: str  # highest AUROC on the rows every metric scored
    tied: tuple[str, ...]  # metrics whose paired CI against the best includes zero


@dataclass(frozen=True, kw_only=True)
class CutSensitivity:
    """The `cut_sensitivity` block of results.json."""

    cut: str  # the --label-from-rating the audit used
    level: float
    n_boot: int
    notes: tuple[str, ...]
    rows: tuple[CutRow, ...]


def cut_rows(name: str, rating: np.ndarray, scores: Mapping[str, np.ndarray], groups: Sequence[str], chosen: float,
             *, n_boot: int, level: float, seed: int) -> list[CutRow]:
    """One row per distinct rating value v that, as `rating >= v`, leaves both classes in the slice."""
    names = list(scores)
    matrix = np.vstack([np.asarray(scores[m], dtype=np.float64) for m in names])
    out = []
    for v in np.unique(rating)[1:]:
        y = (rating >= v).astype(np.int64)
        boot = bootstrap_aurocs(matrix, y, list(groups), n_boot=n_boot, rng=slice_rng(seed, name))  # the audit's draws
        cells = []
        for j, m in enumerate(names):
            lo, hi, _ = percentile_ci(boot.replicates[j], level)
            cells.append(CutAuroc(metric=m, auroc=float(boot.point[j]), ci_low=lo, ci_high=hi))
        ok = [j for j in range(len(names)) if np.isfinite(boot.point[j])]
        best = ""
        tied: tuple[str, ...] = ()
        if ok:
            al = boot.aligned(ok)
            b = int(np.nanargmax(al.point))
            best = names[ok[b]]
            tied = tuple(names[k] for i, k in enumerate(ok)
                         if i != b and percentile_ci(al.replicates[b] - al.replicates[i], level)[0] <= 0)
        out.append(CutRow(slice=name, cut=float(v), n=int(y.size), n_pos=int(y.sum()),
                          chosen=bool(np.isclose(v, chosen)), aurocs=tuple(cells), best=best, tied=tied))
    return out


def cut_sensitivity(table: PairTable, keys: Sequence[str], scores: Mapping[str, np.ndarray], *, n_boot: int,
                    level: float, seed: int) -> CutSensitivity | None:
    """With a label derived from the rating (`--label-from-rating >=c` or `>c`): the AUROC and the recommended
    metric at every cut `rating >= v` that leaves both classes, per slice; None without a derived label."""
    text = next((o.load.label_from_rating for o in table.origin
                 if isinstance(o, PairsFile) and o.load is not None and o.load.label_from_rating), None)
    if text is None or table.ratings is None:
        return None
    cut = RatingCut.parse(str(text))
    chosen = float("nan")  # a cut of another form (==, <, <=) is not among the rows; none is marked then
    if cut.op in (">=", ">"):  # the same labels as rating >= the smallest rating value the cut keeps
        kept = table.ratings[table.ratings >= cut.value] if cut.op == ">=" else table.ratings[table.ratings > cut.value]
        chosen = float(kept.min()) if kept.size else float("nan")
    key_arr = np.asarray(keys, dtype=object)
    have = np.isfinite(table.ratings)
    rows: list[CutRow] = []
    for sl in sorted(set(keys)):
        r = np.flatnonzero((key_arr == sl) & have)
        rows += cut_rows(sl, table.ratings[r], {m: np.asarray(v, dtype=np.float64)[r] for m, v in scores.items()},
                         [table.groups[i] for i in r], chosen, n_boot=n_boot, level=level, seed=seed)
    notes = (f"label 1 = rating >= cut, for every distinct rating value that leaves both classes; the audit's own "
             f"cut ({cut}) is marked",
             f"AUROC with {level:.0%} clustered-bootstrap CIs ({n_boot} resamples of `group`); best = highest AUROC "
             "on the rows every metric scored, tied = metrics whose paired CI against it includes zero")
    return CutSensitivity(cut=str(cut), level=level, n_boot=n_boot, notes=notes, rows=tuple(rows))
