"""sha256 of files: inputs are recorded by their hash, weights enter scorer signatures by theirs.

Hashing a 400 MB model on every run would cost seconds, so `cached_sha256` keeps each file's sha256 in
$ATTRIB_AUDIT_HOME/fingerprints.json keyed by (absolute path, mtime, size): a file that is rewritten gets a
new mtime or size and is hashed again.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from attrib_audit.files.paths import fingerprints_path
from attrib_audit.files.regular import read_regular

MAX_FINGERPRINTS_BYTES = 16 << 20  # ~100,000 weight files: beyond it the cache is ignored and rebuilt

_LOCK = threading.Lock()


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_cache(path: Path) -> dict[str, str]:
    try:
        data = json.loads(read_regular(path, MAX_FINGERPRINTS_BYTES))
    except (OSError, ValueError):
        return {}  # absent, unreadable or not a regular file: it only saves time, so start over
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str) and len(v) == 64}  # a bad entry: hashed again


def cached_sha256(path: str | Path) -> str:
    """sha256 of a file, recomputed only when its path, mtime or size changed since the last time."""
    p = Path(path).resolve()
    st = p.stat()
    key = f"{p}:{st.st_mtime_ns}:{st.st_size}"
    store = fingerprints_path()
    with _LOCK:
        known = _read_cache(store)
        if key in known:
            return known[key]
    digest = file_sha256(p)
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
