"""Which metric a construct's saved transfer statistics point to: the one rule the report's headline and the
terminal both state (the portable metric with the lowest in-sample regret; without one, the lowest-regret metric).

It chooses among recorded numbers only; nothing is recomputed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from attrib_audit.audit.config import STATISTIC_LABELS
from attrib_audit.audit.results import AurocRow, PairedRow
from attrib_audit.report import fmt

if TYPE_CHECKING:  # the records' modules import the statistics (scipy): only their types are needed here
    from attrib_audit.audit.correlations import CorrelationSection
    from attrib_audit.audit.transfer import MatrixStatistics
    from attrib_audit.stats.transfer import FixedRegret


@dataclass(frozen=True, kw_only=True)
class Pick:
    metric: str
    portable: bool  # within the best metric's 95% CI on every dataset
    paired: bool  # also under the stricter paired test
    regret: FixedRegret  # the metric's `regret.fixed` row: mean, ci_low, ci_high, max, worst_dataset
    others: list[str]  # the other portable metrics


def pick(e: MatrixStatistics) -> Pick:
    """The metric to use for a construct whose transfer statistics (`transfer.constructs[c]`, status ok) are `e`."""
    fixed = {f.metric: f for f in e.regret.fixed}
    portable = [p.metric for p in e.portability if p.portable]
    paired = [p.metric for p in e.portability if p.paired_portable]
    if portable:
        m = min(portable, key=lambda x: fixed[x].mean) if all(x in fixed for x in portable) else portable[0]
    else:
        m = e.regret.lowest_regret_metric
    return Pick(metric=m, portable=bool(portable), paired=m in paired, regret=fixed[m],
                others=[x for x in portable if x != m])


@dataclass(frozen=True, kw_only=True)
class SliceVerdict:
    """The on-target answer for a construct audited on one labelled dataset: which metric, by how much, and
    whether it is better than chance at all (from the recorded AUROC rows, paired rows and chance tests)."""

    construct: str
    slice: str
    verdict: str  # at-chance | best | tied | undefined
    metric: str | None  # the metric to use; None when no candidate beats chance
    best: str | None  # the highest AUROC among all candidates (named when none beats chance)
    tied: list[str]  # candidates beating chance that the paired CI cannot separate from `metric`
    at_chance: list[str]  # candidates that do not beat chance
    text: str


def beats_chance(row: AurocRow) -> bool:
    """A recorded AUROC row's chance flag; rows from before the chance test fall back to the CI's lower end."""
    if row.chance is not None:
        return row.chance.beats_chance
    return fmt.finite(row.ci_low) and row.ci_low is not None and row.ci_low > 0.5


def _chance_p(row: AurocRow) -> str:
    p = row.chance.p_chance_holm if row.chance is not None else None
    return f"one-sided p = {fmt.pvalue(p)}" if fmt.finite(p) else "CI lower end at or below 0.5"


def _paired(paired: Sequence[PairedRow], sl: str, a: str, b: str) -> PairedRow | None:
    """The paired row of a − b on slice `sl` (sign flipped when it was recorded as b − a)."""
    for p in paired:
        if p.slice != sl or p.diff is None:
            continue
        if (p.scorer_a, p.scorer_b) == (a, b):
            return p
        if (p.scorer_a, p.scorer_b) == (b, a):
            return dataclasses.replace(p, scorer_a=a, scorer_b=b, diff=-p.diff,
                                       ci_low=None if p.ci_high is None else -p.ci_high,
                                       ci_high=None if p.ci_low is None else -p.ci_low)
    return None


def on_slice(construct: str, sl: str, auroc: Sequence[AurocRow],
             paired: Sequence[PairedRow]) -> SliceVerdict:
    """The headline for a construct with one labelled dataset `sl`: the best metric that beats chance, its paired
    differences with the others, and what a second dataset would add.

    Args:
        construct: the construct's name.
        sl: its only slice.
        auroc: results.json `auroc` rows.
        paired: results.json `paired` rows.

    Returns:
        The verdict; `metric` is None when no candidate is better than chance (then none is recommended).
    """
    rows = {r.scorer: r for r in auroc if r.slice == sl and fmt.finite(r.auroc)}
    pairs = list(paired)
    head = f"{construct} (one dataset, {sl})"
    if not rows:
        return SliceVerdict(construct=construct, slice=sl, verdict="undefined", metric=None, best=None, tied=[],
                            at_chance=[], text=f"{head}: no metric has an AUROC here.")
    top = max(rows, key=lambda n: rows[n].auroc or 0.0)
    good = [n for n in rows if beats_chance(rows[n])]
    weak = [n for n in rows if n not in good]
    second = (" A second labelled dataset of this construct would say whether the choice transfers to data not "
              "audited (portability, held-out regret).")
    if not good:
        t = rows[top]
        text = (f"{head}: no candidate is better than chance on this data (best: {top}, AUROC "
                f"{fmt.ci(t.auroc, t.ci_low, t.ci_high)}, {_chance_p(t)}). None is recommended: on these "
                "labels each one ranks supported above unsupported answers no better than a coin flip.")
        return SliceVerdict(construct=construct, slice=sl, verdict="at-chance", metric=None, best=top, tied=[],
                            at_chance=weak, text=text + second)
    m = max(good, key=lambda n: rows[n].auroc or 0.0)
    diffs = {n: _paired(pairs, sl, m, n) for n in rows if n != m}
    tied = [n for n in good if n != m and (d := diffs[n]) is not None and not d.excludes_zero]
    r = rows[m]
    text = (f"{head}: use {m} — AUROC {fmt.ci(r.auroc, r.ci_low, r.ci_high)}, better than chance "
            f"({_chance_p(r)})")
    shown = [f"{n} {fmt.ci(d.diff, d.ci_low, d.ci_high, signed=True)}" for n, d in diffs.items() if d]
    return _chosen(construct, sl, text, m, top, shown, tied, weak, "Not better than chance", second)


def _chosen(construct: str, sl: str, text: str, m: str, top: str, shown: list[str], tied: list[str],
            weak: list[str], weak_label: str, second: str) -> SliceVerdict:
    """The one-dataset verdict that names `m`: its sentence (`text`) followed by the paired differences, the ties and
    the candidates that fail the chance test, the same words under AUROC and under a correlation."""
    if shown:
        text += f"; paired difference {m} − other [95% CI]: " + ", ".join(shown)
    if tied:
        text += f". Tied with {', '.join(tied)} (the paired CI holds 0): any of these will do (choose the cheapest)"
    if weak:
        text += f". {weak_label}: {', '.join(weak)}"
    return SliceVerdict(construct=construct, slice=sl, verdict="tied" if tied else "best", metric=m, best=top,
                        tied=tied, at_chance=weak, text=text + "." + second)


def _graded_cell(statistic: str) -> tuple[str, str]:
    """(statistic, grouping) of a graded transfer statistic: partial-spearman is (spearman, partial)."""
    return (statistic[len("partial-"):], "partial") if statistic.startswith("partial-") else (statistic, "none")


def on_slice_graded(construct: str, sl: str, correlations: CorrelationSection, statistic: str) -> SliceVerdict:
    """The one-dataset headline under a graded `--statistic`: the metric with the highest correlation whose CI
    lies above 0, the paired differences with the others (the correlation section's, same draws), and what a
    second dataset would add — the same rule as the AUROC's `on_slice`, on the statistic `select` compares by.

    Args:
        construct: the construct's name.
        sl: its only slice.
        correlations: results.json's `correlations` block.
        statistic: the transfer statistic (pearson, spearman, kendall, partial-pearson, partial-spearman).

    Returns:
        The verdict; `metric` is None when no correlation's CI lies above 0.
    """
    name, grouping = _graded_cell(statistic)
    unit = STATISTIC_LABELS.get(statistic, statistic)
    entry = next((e for e in correlations.slices if e.slice == sl), None)
    rows = {c.metric: c for c in (entry.correlations if entry else ())
            if c.statistic == name and c.grouping == grouping and fmt.finite(c.estimate)}
    head = f"{construct} (one dataset, {sl}; by {unit})"
    if not rows:
        return SliceVerdict(construct=construct, slice=sl, verdict="undefined", metric=None, best=None, tied=[],
                            at_chance=[], text=f"{head}: no metric has a {unit} here.")
    top = max(rows, key=lambda n: rows[n].estimate)
    good = [n for n in rows if fmt.finite(rows[n].ci_low) and rows[n].ci_low > 0]
    weak = [n for n in rows if n not in good]
    second = (" A second dataset of this construct would say whether the choice transfers to data not audited "
              "(portability, held-out regret).")
    if not good:
        t = rows[top]
        return SliceVerdict(construct=construct, slice=sl, verdict="at-chance", metric=None, best=top, tied=[],
                            at_chance=weak,
                            text=f"{head}: no metric's {unit} is above 0 by its 95% CI (best: {top}, "
                            f"{fmt.ci(t.estimate, t.ci_low, t.ci_high)}). None is recommended." + second)
    m = max(good, key=lambda n: rows[n].estimate)
    diffs: dict[str, tuple[float, float, float]] = {}  # other metric → (m − other, CI low, CI high)
    for d in (entry.differences if entry else ()):
        if d.statistic != name or d.grouping != grouping or m not in (d.metric_a, d.metric_b):
            continue
        if d.metric_a == m:
            diffs[d.metric_b] = (d.difference, d.ci_low, d.ci_high)
        else:
            diffs[d.metric_a] = (-d.difference, -d.ci_high, -d.ci_low)
    tied = [n for n in good if n != m and n in diffs and diffs[n][1] <= 0 <= diffs[n][2]]
    r = rows[m]
    text = f"{head}: use {m} — {unit} {fmt.ci(r.estimate, r.ci_low, r.ci_high)}, above 0 by its 95% CI"
    shown = [f"{n} {fmt.ci(*d, signed=True)}" for n, d in diffs.items()]
    return _chosen(construct, sl, text, m, top, shown, tied, weak, "Not above 0", second)


def chance_warning(metric: str, datasets: list[str], auroc: Sequence[AurocRow],
                   names: dict[str, str] | None = None) -> str:
    """Where the recommended metric is not better than chance, in words ('' when it beats chance everywhere).

    Args:
        metric: the recommended metric.
        datasets: the construct's datasets.
        auroc: results.json `auroc` rows.
        names: shorter dataset names to print, if any.

    Returns:
        The warning without a leading label or final full stop.
    """
    rows = [r for r in auroc if r.scorer == metric and r.slice in datasets and fmt.finite(r.auroc)]
    weak = [r for r in rows if not beats_chance(r)]
    if not weak:
        return ""
    short = names or {}
    where = "; ".join(f"{short.get(r.slice, r.slice)}: AUROC {fmt.ci(r.auroc, r.ci_low, r.ci_high)}, "
                      f"{_chance_p(r)}" for r in weak)
    every = " on any dataset: do not deploy it" if len(weak) == len(rows) else ""
    return f"{metric} is not better than chance{every} ({where}; Holm-adjusted over the construct's slices)"


def one_dataset(construct: str, sl: str, *, statistic: str, auroc: Sequence[AurocRow], paired: Sequence[PairedRow],
                correlations: CorrelationSection | None) -> SliceVerdict:
    """The one-dataset headline by the audit's transfer statistic: the AUROC's `on_slice`, or under a graded
    `--statistic` with a correlation block `on_slice_graded`, so the audit says what `select` says."""
    if statistic != "auroc" and correlations is not None:
        return on_slice_graded(construct, sl, correlations, statistic)
    return on_slice(construct, sl, auroc, paired)


def statistic_chance_warning(metric: str, datasets: list[str], *, statistic: str, auroc: Sequence[AurocRow],
                             correlations: CorrelationSection | None, names: dict[str, str] | None = None) -> str:
    """`chance_warning` by the audit's transfer statistic: under a graded `--statistic`, the datasets where the
    metric's correlation is not above 0 by its 95% CI (from the correlation block), not its AUROC's chance test.

    Args:
        metric: the recommended metric.
        datasets: the construct's datasets.
        statistic: the transfer statistic (results.json's `transfer.statistic`).
        auroc: results.json `auroc` rows.
        correlations: its `correlations` block, if any.
        names: shorter dataset names to print, if any.

    Returns:
        The warning without a leading label or final full stop ('' when there is nothing to warn about).
    """
    if statistic == "auroc" or correlations is None:
        return chance_warning(metric, datasets, auroc, names)
    name, grouping = _graded_cell(statistic)
    unit = STATISTIC_LABELS.get(statistic, statistic)
    rows = [(e.slice, c) for e in correlations.slices if e.slice in datasets
            for c in e.correlations if c.metric == metric and c.statistic == name
            and c.grouping == grouping and fmt.finite(c.estimate)]
    weak = [(sl, c) for sl, c in rows if not (fmt.finite(c.ci_low) and c.ci_low > 0)]
    if not weak:
        return ""
    short = names or {}
    where = "; ".join(f"{short.get(sl, sl)}: {unit} {fmt.ci(c.estimate, c.ci_low, c.ci_high)}" for sl, c in weak)
    every = " on any dataset: do not deploy it" if len(weak) == len(rows) else ""
    return f"{metric}'s {unit} is not above 0 by its 95% CI{every} ({where})"
