"""What a scorer's signature must carry so a cached score is only replayed for the very same computation:
a sha256 of the weight files (each file's hash cached by path, mtime and size: files.hashing.cached_sha256)
and the versions of the libraries that run them.
"""
from __future__ import annotations

import hashlib
from importlib import metadata
from pathlib import Path

from attrib_audit.files.hashing import cached_sha256
from attrib_audit.scorers.resolve import Resolved

_SKIP_SUFFIXES = (".md", ".lock", ".pyc")  # docs, download locks, bytecode: not what computes a score


def _weight_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(f for f in root.rglob("*") if f.is_file() and not f.name.endswith(_SKIP_SUFFIXES)
                  and not any(part.startswith(".") or part == "__pycache__" for part in f.relative_to(root).parts))


def weights_fingerprint(resolved: Resolved) -> str:
    """sha256 (16 hex) over every file of a local model folder (or one weight file); `hub:ID` when not local."""
    location = Path(resolved.location)
    if not location.exists():
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(resolved.location, "config.json")
        except ImportError:  # pragma: no cover - ships with transformers
            cached = None
        if not isinstance(cached, str):
            return "hub:" + resolved.location
        location = Path(cached).parent
    h = hashlib.sha256()
    for f in _weight_files(location):
        name = f.name if location.is_file() else f.relative_to(location).as_posix()
        h.update(f"{name}\0{cached_sha256(f)}\n".encode())
    return h.hexdigest()[:16]


def library_versions(*dists: str) -> str:
    """`torch=2.3.1,transformers=4.44.0`: the code that turns weights into scores, part of each signature."""
    out = []
    for d in dists:
        try:
            out.append(f"{d}={metadata.version(d)}")
        except metadata.PackageNotFoundError:
            out.append(f"{d}=none")
    return ",".join(out)
