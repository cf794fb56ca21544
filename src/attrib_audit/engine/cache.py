"""A SQLite score cache keyed by (scorer signature, sha256 of claim and evidence), and beside the scores each
evidence's counts (words, sentences) keyed by (counter signature, sha256 of the evidence): the audit's own
per-text work, which a cached rerun would otherwise redo in Python for every distinct evidence.

WAL mode and one transaction per batch: a run killed mid-way keeps every batch it
finished, and a rerun scores (or counts) only what is missing. Opening goes through `files.sqlite.open_cache_db`:
a path holding anything but a SQLite database is refused, a corrupt database is moved aside.
"""
from __future__ import annotations

import hashlib
import json
import threading
from itertools import repeat
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from attrib_audit.files.paths import default_cache_path
from attrib_audit.files.sqlite import open_cache_db
from attrib_audit.scorers.base import ScoreBatch

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    signature TEXT NOT NULL,
    key TEXT NOT NULL,
    score REAL,
    truncated INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    failure TEXT,
    extras TEXT,
    PRIMARY KEY (signature, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS signatures (
    identity TEXT PRIMARY KEY,
    signature TEXT NOT NULL,
    window INTEGER
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS text_counts (
    signature TEXT NOT NULL,
    key TEXT NOT NULL,
    words INTEGER NOT NULL,
    sentences INTEGER NOT NULL,
    PRIMARY KEY (signature, key)
) WITHOUT ROWID;
"""


def _framed(text: str) -> bytes:
    """A text as `<byte length>:<utf-8 bytes>`: framed texts concatenate without ambiguity."""
    t = text.encode("utf-8", "surrogatepass")
    return b"%d:%b" % (len(t), t)


def pair_key(claim: str, evidence: str, question: str | None = None) -> str:
    """Content hash of a pair; lengths are prefixed so ("ab","c") and ("a","bc") never collide.

    A question (for scorers that read it) is hashed in too; without one the key is the plain pair's.
    """
    data = _framed(claim) + _framed(evidence)  # one update: same digest as hashing the parts in turn
    if question:
        data += b"q" + _framed(question)
    return hashlib.sha256(data).hexdigest()


def text_key(text: str) -> str:
    """Content hash of one text, framed as in `pair_key`."""
    return hashlib.sha256(_framed(text)).hexdigest()


class ScoreCache:
    """Thread-safe for one process; several processes may share the file (SQLite locking, WAL)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        self.conn, self.moved_aside = open_cache_db(self.path, _SCHEMA, "score cache")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "ScoreCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, signature: str, keys: Sequence[str]) -> dict[str, tuple]:
        """Cached rows for the keys that have one: key -> (score, truncated, input_tokens, chunks, failure, extras)."""
        return {row[0]: row[1:] for row in self._select("scores", "score, truncated, input_tokens, chunks, failure, "
                                                                   "extras", signature, keys)}

    def _select(self, table: str, columns: str, signature: str, keys: Sequence[str]) -> list[tuple]:
        """(key, *columns) of the rows of `table` under `signature` whose key is among `keys`. When the signature holds
        at most twice as many rows as are asked for (a rerun of the same data), all of them are read in one pass and
        filtered here, cheaper than looking each key up; otherwise the keys are looked up 900 at a time."""
        if not keys:
            return []
        with self._lock:
            held = self.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE signature = ?", (signature,)).fetchone()[0]
            if held == 0:
                return []
            if held <= 2 * len(keys):
                wanted = set(keys)
                return [row for row in self.conn.execute(f"SELECT key, {columns} FROM {table} WHERE signature = ?",
                                                         (signature,)) if row[0] in wanted]
            rows: list[tuple] = []
            for start in range(0, len(keys), 900):
                chunk = list(keys[start:start + 900])
                rows += self.conn.execute(f"SELECT key, {columns} FROM {table} WHERE signature = ? AND key IN "
                                          f"({','.join('?' * len(chunk))})", [signature, *chunk]).fetchall()
            return rows

    def put(self, signature: str, keys: Sequence[str], batch: ScoreBatch) -> None:
        """Write one batch in one transaction (the unit that survives a crash)."""
        extra_keys = sorted(batch.extras)
        extras = ([json.dumps({x: batch.extras[x][i] for x in extra_keys}) for i in range(len(keys))]
                  if extra_keys else repeat(None))
        # whole columns to Python at once (per-element numpy indexing costs more than the insert)
        scores = [None if s != s else s for s in np.asarray(batch.scores, dtype=np.float64).tolist()]
        rows = list(zip(repeat(signature), keys, scores, np.asarray(batch.truncated_tokens).tolist(),
                        np.asarray(batch.input_tokens).tolist(), np.asarray(batch.chunks).tolist(),
                        batch.failures, extras))
        self._insert("INSERT OR REPLACE INTO scores VALUES (?,?,?,?,?,?,?,?)", rows)

    def get_counts(self, signature: str, keys: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Cached (words, sentences) for the keys that have them; a row that is not two non-negative integers (a
        file written by something else) counts as absent, so it is counted again and replaced. (Not a CHECK in the
        schema: `PRAGMA quick_check` would then call the whole file corrupt and move the scores aside with it.)"""
        return {key: (w, n) for key, w, n in self._select("text_counts", "words, sentences", signature, keys)
                if type(w) is int and type(n) is int and w >= 0 and n >= 0}

    def put_counts(self, signature: str, keys: Sequence[str], words: Sequence[int], sentences: Sequence[int]) -> None:
        """Write one batch of counts in one transaction, as `put` does scores."""
        rows = list(zip(repeat(signature), keys, words, sentences))
        self._insert("INSERT OR REPLACE INTO text_counts VALUES (?,?,?,?)", rows)

    def _insert(self, sql: str, rows: list[tuple]) -> None:
        """All rows in one transaction: a killed run keeps whole batches, never half of one."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany(sql, rows)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def built_signature(self, identity: str) -> tuple[str, int | None] | None:
        """(signature, token window) a scorer with this identity had when it was last built here, if it was."""
        with self._lock:
            row = self.conn.execute("SELECT signature, window FROM signatures WHERE identity = ?",
                                    (identity,)).fetchone()
        return (row[0], row[1]) if row else None

    def remember_signature(self, identity: str, signature: str, window: int | None) -> None:
        with self._lock:
            self.conn.execute("INSERT OR REPLACE INTO signatures VALUES (?,?,?)", (identity, signature, window))

    def count(self, signature: str | None = None) -> int:
        with self._lock:
            if signature is None:
                return int(self.conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0])
            return int(self.conn.execute("SELECT COUNT(*) FROM scores WHERE signature = ?", (signature,)).fetchone()[0])


def rows_to_batch(rows: Iterable[tuple]) -> ScoreBatch:
    rows = list(rows)
    extras_list = [json.loads(r[5]) if r[5] else {} for r in rows]
    keys = sorted({k for e in extras_list for k in e})
    return ScoreBatch(
        scores=np.array([np.nan if r[0] is None else r[0] for r in rows], dtype=np.float64),
        truncated_tokens=np.array([r[1] for r in rows], dtype=np.int64),
        input_tokens=np.array([r[2] for r in rows], dtype=np.int64),
        chunks=np.array([r[3] for r in rows], dtype=np.int64),
        failures=[r[4] for r in rows],
        extras={k: [e.get(k) for e in extras_list] for k in keys},
    )
