"""Which metric a construct's saved transfer statistics point to: the one rule the report's headline and the
terminal both state (the portable metric with the lowest held-out regret; without one, the lowest-regret metric).

It chooses among recorded numbers only; nothing is recomputed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from attrib_audit.audit.results import AurocRow, PairedRow
from attrib_audit.report import fmt

if TYPE_CHECKING:  # the records' modules import the statistics (scipy): only their types are needed here
    from attrib_audit.audit.transfer import MatrixStatistics
    from attrib_audit.stats.transfer import FixedRegret


@dataclass(frozen=True)
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
    return Pick(m, bool(portable), m in paired, fixed[m], [x for x in portable if x != m])


@dataclass(frozen=True)
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
        return SliceVerdict(construct, sl, "undefined", None, None, [], [], f"{head}: no metric has an AUROC here.")
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
        return SliceVerdict(construct, sl, "at-chance", None, top, [], weak, text + second)
    m = max(good, key=lambda n: rows[n].auroc or 0.0)
    diffs = {n: _paired(pairs, sl, m, n) for n in rows if n != m}
    tied = [n for n in good if n != m and (d := diffs[n]) is not None and not d.excludes_zero]
    r = rows[m]
    text = (f"{head}: use {m} — AUROC {fmt.ci(r.auroc, r.ci_low, r.ci_high)}, better than chance "
            f"({_chance_p(r)})")
    shown = [f"{n} {fmt.ci(d.diff, d.ci_low, d.ci_high, signed=True)}" for n, d in diffs.items() if d]
    if shown:
        text += f"; paired difference {m} − other [95% CI]: " + ", ".join(shown)
    if tied:
        text += f". Tied with {', '.join(tied)} (the paired CI holds 0): any of these will do (choose the cheapest)"
    if weak:
        text += f". Not better than chance: {', '.join(weak)}"
    return SliceVerdict(construct, sl, "tied" if tied else "best", m, top, tied, weak, text + "." + second)


def chance_caveat(metric: str, datasets: list[str], auroc: Sequence[AurocRow]) -> str:
    """A sentence naming the datasets where the recommended metric is not better than chance ('' when none).

    Args:
        metric: the recommended metric.
        datasets: the construct's datasets.
        auroc: results.json `auroc` rows (chance p-values Holm-adjusted over each metric's slices).

    Returns:
        The warning, or an empty string.
    """
    text = chance_warning(metric, datasets, auroc)
    return f" Caution: {text}." if text else ""


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
    rows = [r for r in auroc if r.scorer == metric and r.slice in datasets
            and fmt.finite(r.auroc)]
    weak = [r for r in rows if not beats_chance(r)]
    if not weak:
        return ""
    short = names or {}
    where = "; ".join(f"{short.get(r.slice, r.slice)}: AUROC {fmt.ci(r.auroc, r.ci_low, r.ci_high)}, "
                      f"{_chance_p(r)}" for r in weak)
    every = " on any dataset: do not deploy it" if len(weak) == len(rows) else ""
    return f"{metric} is not better than chance{every} ({where}; Holm-adjusted over the construct's slices)"
