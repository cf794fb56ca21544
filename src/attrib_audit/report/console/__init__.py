"""The one console renderer: every table and summary a command prints, one module per concept.

One grid (`grid.grid`) and one number format (report.fmt, where a missing value is `—`), so the terminal prints
numbers as the Markdown and HTML report do. `format_answer` is what `audit` and `demo` print first: per
construct the metric to use, whether it is portable and its leave-one-dataset-out regret, then the AUROC
table with its caveat marks. Everything here reads results as saved; nothing computes a statistic.
"""
from __future__ import annotations

from attrib_audit.report.console.audit import format_answer, format_table, format_verdicts, weighted_note
from attrib_audit.report.console.correlations import format_correlations, format_cut_sensitivity
from attrib_audit.report.console.grid import MISSING, grid, short_names
from attrib_audit.report.console.models import format_models, format_reproduce
from attrib_audit.report.console.plan import format_gate_plan, format_plan
from attrib_audit.report.console.probe import format_probe_table, format_provenance
from attrib_audit.report.console.select import format_agreement, format_recommendation
from attrib_audit.report.console.sensitivity import format_sensitivity
from attrib_audit.report.console.systems import format_ranker, format_systems, format_systems_brief
from attrib_audit.report.console.thresholds import (
    RATE_NAMES,
    format_gate_usefulness,
    format_threshold_matrix,
    format_thresholds,
)
from attrib_audit.report.console.transfer import format_construct, format_transfer

__all__ = ["MISSING", "RATE_NAMES", "format_agreement", "format_answer", "format_construct", "format_correlations",
           "format_cut_sensitivity", "format_gate_plan", "format_gate_usefulness", "format_models", "format_plan",
           "format_probe_table", "format_provenance", "format_ranker", "format_recommendation", "format_reproduce",
           "format_sensitivity", "format_systems",
           "format_systems_brief", "format_table", "format_threshold_matrix", "format_thresholds", "format_transfer",
           "format_verdicts", "grid", "short_names", "weighted_note"]
