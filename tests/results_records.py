"""A results.json model built from a few blocks, for renderer tests: the keys a test does not care about get
placeholder values, and the whole goes through the checked reader, so a test row of the wrong shape fails there."""
from __future__ import annotations

from typing import Any

from attrib_audit.audit.results import AuditResults
from attrib_audit.audit.saved import results_record

BASE: dict[str, Any] = {
    "run_id": "test", "tool": {"name": "attrib-audit", "version": "0", "python": "3", "platform": "test"},
    "config": {"scorers": [], "slice_by": "dataset", "n_boot": 100, "seed": 0, "ci": "95% percentile", "level": 0.95,
               "device": "cpu", "n_perm": 100},
    "data": [], "scorers": [], "slices": [], "auroc": []}
ROW = {"n": 50, "n_pos": 25, "n_groups": 50}  # an AUROC row's counts
PAIRED = {"n": 50, "n_dropped": {}, "n_boot_dropped": 0}  # a paired row's counts


def results(**blocks: Any) -> AuditResults:
    """AuditResults of `blocks` (results.json keys → parsed JSON), the rest placeholders."""
    return results_record({**BASE, **blocks}, "test")
