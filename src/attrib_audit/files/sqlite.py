"""Opening the SQLite caches safely: a cache path may only hold a SQLite database (or nothing).

A cache path comes from a flag or an environment variable and can be mistyped
(`--cache input.jsonl`); opening whatever is there would turn the user's file into a
database, and the corruption recovery would rename it. So the 16-byte SQLite header is
checked first and anything else is refused with one line. A real SQLite file that fails to
open or `PRAGMA quick_check` is moved aside (`<name>.corrupt-<time>`) with a warning and
rebuilt empty: a cache only saves work, so losing it costs time, never correctness.
"""
from __future__ import annotations

import os
import sqlite3
import time
import warnings
from pathlib import Path

from attrib_audit.errors import InputError

SQLITE_HEADER = b"SQLite format 3\x00"


class CacheFileError(InputError):
    """The cache path holds something that is not a SQLite database; it is left untouched."""

    kind = "cache error"


def check_cache_path(path: Path, what: str) -> None:
    """Refuse a path that holds anything but a SQLite database; absent and 0-byte files (a new database) pass."""
    if str(path) == ":memory:":
        return
    if path.is_dir():
        raise CacheFileError(f"{what} {path} is a directory; give a file path (or --no-cache)")
    for parent in path.parents:  # a file where a folder is needed
        if parent.exists():
            if not parent.is_dir():
                raise CacheFileError(f"{what} {path}: {parent} is a file, not a folder")
            break
    if not path.exists():
        return
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise CacheFileError(f"{what} {path} cannot be read ({exc.strerror})") from None
    if head and head != SQLITE_HEADER:
        raise CacheFileError(f"{what} {path} is not a SQLite database (it starts with {head[:8]!r}); it was left "
                             "untouched: point the cache at another file, or pass --no-cache")


def _move_aside(path: Path, exc: Exception, what: str) -> Path:
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{time.time_ns() % 10**9:09d}")
    for suffix in ("", "-wal", "-shm"):
        try:
            os.replace(f"{path}{suffix}", f"{aside}{suffix}")
        except FileNotFoundError:  # no such side file, or another process moved it first
            pass
    reason = " ".join(str(exc).split())[:160]
    warnings.warn(f"{what} {path} is corrupt ({reason}); moved it to {aside} and started an empty cache",
                  RuntimeWarning, stacklevel=4)
    return aside


def _connect(path: Path, schema: str, check: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=60.0, check_same_thread=False, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.executescript(schema)
        if check:
            verdict = [r[0] for r in conn.execute("PRAGMA quick_check")]
            if verdict != ["ok"]:
                raise sqlite3.DatabaseError("; ".join(map(str, verdict[:3])))
    except BaseException:
        conn.close()
        raise
    return conn


def open_cache_db(path: Path, schema: str, what: str) -> tuple[sqlite3.Connection, Path | None]:
    """(connection, where a corrupt database was moved, or None); refuses a path that is not a SQLite file."""
    check_cache_path(path, what)
    if str(path) != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _connect(path, schema, check=True), None
    except sqlite3.DatabaseError as exc:
        if str(path) == ":memory:":
            raise
        moved = _move_aside(path, exc, what)
        return _connect(path, schema, check=False), moved
    except OSError as exc:
        raise CacheFileError(f"{what} {path} cannot be opened ({exc.strerror})") from None
