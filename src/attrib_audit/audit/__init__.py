"""The audit pipeline: a run spec in, the typed results out.

`spec` (what an audit runs) → `run` (score, then per-slice AUROC with CIs, `transfer` across the datasets of a
construct, `sensitivity`) → `results` (results.json's model, its one writer and reader). Then, reading saved
results: `select` (which metric for a new dataset), `check` (`audit --check`: rerun and compare) and
`agreement` (Cohen's κ between raters). Nothing here prints or parses arguments.
"""
from typing import Any

from attrib_audit.audit.config import DEFAULT_SCORERS, AuditConfig
from attrib_audit.audit.results import AuditResult, AuditResults
from attrib_audit.audit.saved import read_results
from attrib_audit.audit.spec import Local, RunSpec, load_spec_file

__all__ = ["DEFAULT_SCORERS", "AuditConfig", "AuditResult", "AuditResults", "Local", "RunSpec", "load_spec_file",
           "read_results", "run_audit", "run_spec"]


def __getattr__(name: str) -> Any:
    """`run_audit` and `run_spec` load the statistics (scipy) on first use, so reading a spec or results does not."""
    if name in ("run_audit", "run_spec"):
        from attrib_audit.audit import run
        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
