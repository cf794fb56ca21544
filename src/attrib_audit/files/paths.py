"""Where attrib-audit keeps files of its own on this machine, read from the environment at each call.

$ATTRIB_AUDIT_HOME (default ~/.cache/attrib_audit) holds the score cache, the judge's request cache beside it,
the weight-hash cache, assembled weights and the report's figure cache; $ATTRIB_AUDIT_CACHE moves the score cache
alone.
"""
from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    return Path(os.environ.get("ATTRIB_AUDIT_HOME") or os.path.join(Path.home(), ".cache", "attrib_audit"))


def default_cache_path() -> Path:
    env = os.environ.get("ATTRIB_AUDIT_CACHE")
    return Path(env) if env else home() / "scores.sqlite"


def default_requests_path(score_cache: str | Path | None = None) -> Path:
    """The judge's request cache, beside the score cache: scores.sqlite -> scores.judge-requests.sqlite."""
    base = Path(score_cache) if score_cache else default_cache_path()
    return base.with_name(f"{base.stem}.judge-requests.sqlite")


def fingerprints_path() -> Path:
    """The per-file sha256 cache of weight files (see hashing.cached_sha256)."""
    return home() / "fingerprints.json"


def figures_path() -> Path:
    """The report's figure cache (see report.figcache)."""
    return home() / "figures"
