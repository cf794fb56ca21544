"""What `audit` prints for a graded human rating: each slice's correlation table with the grouping named, and with
`verbose` the metric-vs-metric tests."""
from __future__ import annotations

from typing import TYPE_CHECKING

from attrib_audit.report.console.grid import grid
from attrib_audit.report.correlations import cut_slices, cut_table, difference_rows, missing_line, table_rows

if TYPE_CHECKING:  # the correlation statistics import scipy; the parser imports these renderers
    from attrib_audit.audit.correlations import CorrelationSection, CutSensitivity


def format_correlations(block: CorrelationSection, verbose: bool = False) -> str:
    """The `correlations` block of results.json as terminal tables."""
    lines = [f"Correlation with the human rating `{block.rating}` (estimate [{block.level:.0%} CI], "
             f"{block.n_boot} clustered resamples of input items):"]
    for e in block.slices:
        lines.append(f"  {e.slice} ({e.n} rows, {e.n_items} items, {e.n_systems} systems):")
        head, rows = table_rows(e)
        lines += grid(head, rows, indent="    ", rule=True)
        gap = missing_line(e)
        if gap:
            lines.append(f"    {gap}")
        for why in e.skipped:
            lines.append(f"    not computed: {why}")
        if verbose and e.differences:
            lines.append("    metric vs metric (paired, on common rows; Williams' test on Pearson r, or on Spearman ρ "
                         "as WMT and FRANK apply it, for all rows and partial only):")
            head, rows = difference_rows(e)
            lines += grid(head, rows, indent="    ", rule=True)
    lines.append("by item / by system: mean of the per-item (across systems) or per-system correlations; partial by "
                 "system: both residualised on the system, so telling systems apart earns nothing")
    return "\n".join(lines)


def format_cut_sensitivity(block: CutSensitivity) -> str:
    """The AUROC at every cut of the rating that leaves both classes (the audit's own cut marked *)."""
    lines = [f"AUROC by the cut that derives the label from the rating (label = rating ≥ cut; the audit used "
             f"{block.cut}, marked *; {block.level:.0%} CIs):"]
    for sl in cut_slices(block):
        head, rows = cut_table(block, sl)
        lines.append(f"  {sl}:")
        lines += grid(head, rows, indent="    ", rule=True)
    return "\n".join(lines)
