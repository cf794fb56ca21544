"""Reports people look at: self-contained HTML, Markdown and plot files drawn from saved results only."""
from attrib_audit.report.build import ReportPaths, build_report
from attrib_audit.report.inputs import ReportError, load_inputs

__all__ = ["ReportError", "ReportPaths", "build_report", "load_inputs"]
