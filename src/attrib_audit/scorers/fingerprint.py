"""What a scorer's signature must carry so a cached score is only replayed for the very same computation:
a sha256 of the weight files and the versions of the libraries that run them.

Hashing a 400 MB model on every run would cost seconds, so each file's sha256 is cached in
$ATTRIB_AUDIT_HOME/fingerprints.json keyed by (absolute path, mtime, size): a file that is
rewritten gets a new mtime or size and is hashed again.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from importlib import metadata
from pathlib import Path

from attrib_audit.data.loaders import file_sha256 as sha256_file
from attrib_audit.scorers.resolve import Resolved

_LOCK = threading.Lock()
_SKIP_SUFFIXES = (".md", ".lock", ".pyc")  # docs, download locks, bytecode: not what computes a score


def _cache_file() -> Path:
    home = os.environ.get("ATTRIB_AUDIT_HOME") or os.path.join(Path.home(), ".cache", "attrib_audit")
    return Path(home) / "fingerprints.json"


def _read_cache(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}  # absent or unreadable: it only saves time, so start over
    return data if isinstance(data, dict) else {}


def cached_sha256(path: str | Path) -> str:
    """sha256 of a file, recomputed only when its path, mtime or size changed since the last time."""
    p = Path(path).resolve()
    st = p.stat()
    key = f"{p}:{st.st_mtime_ns}:{st.st_size}"
    store = _cache_file()
    with _LOCK:
        known = _read_cache(store)
        if key in known:
            return known[key]
    digest = sha256_file(p)
    with _LOCK:
        known = _read_cache(store)
        known[key] = digest
        try:
            store.parent.mkdir(parents=True, exist_ok=True)
            tmp = store.with_name(f"{store.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(known, indent=0, sort_keys=True))
            os.replace(tmp, store)
        except OSError:
            pass  # a read-only home: hash again next time
    return digest


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
