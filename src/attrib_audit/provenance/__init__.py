"""Provenance room (construct i): route each answer unit to the passage it came from.

Eq. 1 unit scores, single-term rankers, top-1 accuracy with clustered CIs, the
confusable-evidence stress test and the α sweep. Never pooled with the support audits.
"""
from attrib_audit.provenance.loaders import load_provenance
from attrib_audit.provenance.records import Passage, ProvenanceExample, ProvenanceSet

__all__ = ["Eq1Weights", "Passage", "ProvenanceConfig", "ProvenanceExample", "ProvenanceResult", "ProvenanceSet",
           "load_provenance", "run_provenance"]


def __getattr__(name: str):
    """The diagnostic and the rankers load scipy on first use, so reading a provenance file does not."""
    if name in ("ProvenanceConfig", "ProvenanceResult", "run_provenance"):
        from attrib_audit.provenance import diagnostic
        return getattr(diagnostic, name)
    if name == "Eq1Weights":
        from attrib_audit.provenance import rankers
        return rankers.Eq1Weights
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
