"""Named adapters for the public benchmark formats, selected with `--format NAME` or detected from fields.

Each adapter maps labels explicitly, assigns its construct, and counts what it skips.
"""
from __future__ import annotations

from typing import Iterable

from attrib_audit.data.adapters import aggrefact, attributionbench, begin, hagrid, summac, true, vitaminc, wice
from attrib_audit.data.adapters.base import Adapter, AdapterOptions, Context, Skip
from attrib_audit.data.adapters.wice import load_wice_provenance, wice_provenance_rows
from attrib_audit.data.constructs import CONSTRUCTS
from attrib_audit.data.errors import DataError

PAIRS = "pairs"  # our own schema (id, dataset, claim, evidence, label, ...)
ADAPTERS: dict[str, Adapter] = {m.ADAPTER.name: m.ADAPTER for m in
                                (attributionbench, hagrid, vitaminc, begin, aggrefact, summac, wice, true)}
FORMATS = ("auto", PAIRS, *ADAPTERS)


def get_adapter(name: str) -> Adapter:
    try:
        return ADAPTERS[name]
    except KeyError:
        raise DataError(f"unknown format {name!r}: use one of {', '.join(FORMATS)}") from None


def detect_format(columns: Iterable[str], *, path: str | None = None) -> str:
    """The adapter whose native fields the columns carry, else our schema; an ambiguous match is an error."""
    cols = set(columns)
    hits = [a for a in ADAPTERS.values() if a.matches(cols)]
    if len(hits) > 1:
        raise DataError(f"fields match several formats ({', '.join(a.name for a in hits)}): pass --format", path=path)
    if hits and "evidence" in cols and "evidence" not in hits[0].fields:
        raise DataError(f"fields match both our pair schema and {hits[0].name}: pass --format pairs or "
                        f"--format {hits[0].name}", path=path)
    return hits[0].name if hits else PAIRS


def describe() -> dict:
    """The format and construct registries as plain data (what `attrib-audit datasets` prints)."""
    formats = [{"format": PAIRS, "construct": "from a `construct` column or --construct",
                "fields": ["id", "dataset", "claim", "evidence", "label"],
                "labels": ["0/1 or true/false; strings need --label-map"], "skips": ["nothing: bad rows are errors"],
                "native": "our schema: id, dataset, source, question, claim, evidence, label, group, construct"}]
    for a in ADAPTERS.values():
        formats.append({"format": a.name, "construct": a.construct, "fields": list(a.fields), "labels": list(a.labels),
                        "skips": list(a.skips), "native": a.native})
    return {"formats": formats, "constructs": dict(CONSTRUCTS)}


__all__ = ["ADAPTERS", "FORMATS", "PAIRS", "Adapter", "AdapterOptions", "Context", "Skip", "describe", "detect_format",
           "get_adapter", "load_wice_provenance", "wice_provenance_rows"]
