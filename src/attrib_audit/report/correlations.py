"""Metric–rating correlations, for the report and the terminal (console.format_correlations): per slice one table
(statistic × grouping by metric, each with its interval, the grouping named) and the metric-vs-metric tests.
Every number is copied from results.json's `correlations` block."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrib_audit.audit.config import STATISTIC_LABELS
from attrib_audit.report import fmt
from attrib_audit.report.blocks import Para, Section, Table

if TYPE_CHECKING:  # the correlation statistics import scipy; the terminal renderers are imported by the parser
    from attrib_audit.audit.correlations import CutSensitivity, SliceCorrelations

GROUPING_LABELS = {"none": "all rows", "item": "by item", "system": "by system", "partial": "partial by system"}


def statistic_label(name: str) -> str:
    """How the transfer statistic a results file names is written for a reader."""
    return STATISTIC_LABELS.get(name, name)


def _metrics(entry: SliceCorrelations) -> list[str]:
    return list(dict.fromkeys(c.metric for c in entry.correlations))


def table_rows(entry: SliceCorrelations) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one slice's correlation table: one row per statistic and grouping, a column per metric."""
    metrics = _metrics(entry)
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for c in entry.correlations:
        cells.setdefault((c.statistic, c.grouping), {})[c.metric] = fmt.ci(c.estimate, c.ci_low, c.ci_high)
    rows = [[statistic, GROUPING_LABELS.get(grouping, grouping), *(by.get(m, fmt.DASH) for m in metrics)]
            for (statistic, grouping), by in cells.items()]
    return ["statistic", "grouping", *metrics], rows


def missing_line(entry: SliceCorrelations) -> str:
    """Which metrics lacked scores on some rows (left out of that metric only)."""
    seen: dict[str, int] = {}
    for c in entry.correlations:
        seen.setdefault(c.metric, int(c.n_missing))
    gaps = [f"{m} {k}" for m, k in seen.items() if k]
    return ("rows without a score, left out of that metric: " + ", ".join(gaps)) if gaps else ""


def difference_rows(entry: SliceCorrelations) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the metric-vs-metric tests."""
    rows = [[f"{d.metric_a} − {d.metric_b}", d.statistic, GROUPING_LABELS.get(d.grouping, d.grouping),
             fmt.ci(d.difference, d.ci_low, d.ci_high, signed=True), fmt.pvalue(d.permutation_p),
             fmt.pvalue(d.williams_p), str(d.n)]
            for d in entry.differences]
    return ["metrics", "statistic", "grouping", "difference [CI]", "permutation p", "Williams p", "n"], rows


def cut_table(block: CutSensitivity, sl: str) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of one slice's AUROC-by-cut table: a row per cut, a column per metric, then the best."""
    rows = [r for r in block.rows if r.slice == sl]
    metrics = [a.metric for a in rows[0].aurocs] if rows else []
    first = next((r.best for r in rows if r.chosen), None)
    out = []
    for r in rows:
        best = r.best + (f" (ties: {', '.join(r.tied)})" if r.tied else "")
        if first is None or r.chosen:
            verdict = fmt.DASH
        elif r.best == first:
            verdict = "same"
        else:
            verdict = f"{first} not separable" if first in r.tied else f"changes: {first} below {r.best}"
        out.append([f"≥ {r.cut:g}" + (" *" if r.chosen else ""), f"{r.n_pos}/{r.n}",
                    *(fmt.ci(a.auroc, a.ci_low, a.ci_high) for a in r.aurocs), best, verdict])
    return ["cut", "positive", *metrics, "best", "vs the audit's cut"], out


def cut_slices(block: CutSensitivity) -> list[str]:
    return list(dict.fromkeys(r.slice for r in block.rows))


def build(inputs: Any, plots: Path) -> Section | None:
    """The report section; None without a graded rating."""
    block = inputs.results.correlations if inputs.results is not None else None
    if block is None:
        return None
    sec = Section("correlations", "Correlation with the graded human rating")
    sec.add(Para(f"How well each metric's score tracks the human rating `{block.rating}`. "
                 + " ".join(n[0].upper() + n[1:] + "." for n in block.notes)))
    for e in block.slices:
        head, rows = table_rows(e)
        gap = missing_line(e)
        sec.add(Table(head, rows, caption=f"{e.slice}: {e.n} rows, {e.n_items} input items, "
                                          f"{e.n_systems} systems" + (f"; {gap}" if gap else "")))
        for why in e.skipped:
            sec.add(Para(f"{e.slice}: not computed: {why}."))
        if e.differences:
            head, rows = difference_rows(e)
            sec.add(Table(head, rows, caption=f"{e.slice}: metric vs metric, paired on the rows both scored"))
    cuts = inputs.results.cut_sensitivity
    if cuts is not None:
        sec.add(Para(f"How the AUROC depends on the cut that made the binary label (the audit used {cuts.cut}, "
                     "marked *). " + " ".join(n[0].upper() + n[1:] + "." for n in cuts.notes)
                     + " Last column: whether that cut recommends the audit's metric (same), "
                     "another one the audit's metric cannot be told apart from (not separable), "
                     "or another one that beats it (changes)."))
        for sl in cut_slices(cuts):
            head, rows = cut_table(cuts, sl)
            sec.add(Table(head, rows, caption=f"{sl}: AUROC [CI] when the label is rating ≥ cut"))
    return sec
