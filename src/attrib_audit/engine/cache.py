"""A SQLite score cache keyed by (scorer signature, sha256 of claim and evidence), and beside the scores each
evidence's counts (words, sentences) keyed by (counter signature, sha256 of the evidence): the audit's own
per-text work, which a cached rerun would otherwise redo in Python for every distinct evidence.

Beside the score file, in its own SQLite file (`<name>.embeddings.sqlite`, opened only when an encoder runs, so
the score file's open-time integrity check stays quick), the embedding cache (`EmbeddingCache`): per (encoder
signature, text content hash) one pooled vector, stored as float32 (the encoders' own output type, so the
float64 restored is exactly what a fresh encode gives) with the text's token count and cut, bounded in bytes with
least-recently-used eviction.

WAL mode and one transaction per batch: a run killed mid-way keeps every batch it
finished, and a rerun scores (or counts, or encodes) only what is missing. Opening goes through
`files.sqlite.open_cache_db`: a path holding anything but a SQLite database is refused, a corrupt database is
moved aside.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
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


def _transaction(conn: sqlite3.Connection, lock: threading.Lock, work: Callable[[sqlite3.Connection], object]) -> None:
    """`work` in one transaction: a killed run keeps whole batches, never half of one."""
    with lock:
        conn.execute("BEGIN IMMEDIATE")
        try:
            work(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


class ScoreCache:
    """Thread-safe for one process; several processes may share the file (SQLite locking, WAL)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        self.conn, self.moved_aside = open_cache_db(self.path, _SCHEMA, "score cache")
        self._vectors: EmbeddingCache | None = None

    @property
    def vectors(self) -> EmbeddingCache:
        """The embedding cache beside this score cache, opened on first use and closed with it."""
        with self._lock:
            if self._vectors is None:
                self._vectors = EmbeddingCache(embeddings_path(self.path))
            return self._vectors

    def close(self) -> None:
        if self._vectors is not None:
            self._vectors.close()
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
        _transaction(self.conn, self._lock, lambda conn: conn.executemany(sql, rows))

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


_EMBEDDINGS_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    encoder TEXT NOT NULL,
    key TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL,
    cut INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (encoder, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vectors_used ON vectors (used);
CREATE TABLE IF NOT EXISTS settings (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
"""
DEFAULT_EMBEDDINGS_BYTES = 256 * 2**20  # about 170,000 MiniLM (384-d) or 85,000 mpnet (768-d) vectors
_VECTOR_DTYPE = np.dtype("<f4")  # float32, little-endian on every machine


def embeddings_path(score_cache: str | Path) -> Path:
    """The embedding cache beside a score cache: scores.sqlite -> scores.embeddings.sqlite (":memory:" stays)."""
    base = Path(score_cache)
    return base if str(base) == ":memory:" else base.with_name(f"{base.stem}.embeddings.sqlite")


@dataclass(frozen=True)
class EncoderUsage:
    """What the embedding cache holds for one encoder signature."""

    encoder: str
    vectors: int
    bytes: int


@dataclass(frozen=True)
class CachedVectors:
    """Vectors read back for some of the texts asked for: `index[i]` is the position of row i among them."""

    index: np.ndarray  # (k,) int64
    vectors: np.ndarray  # (k, dim) float64
    cut: np.ndarray  # (k,) int64 tokens lost to the encoder's window
    tokens: np.ndarray  # (k,) int64 tokens of the whole text


class EmbeddingCache:
    """Pooled text vectors per (encoder signature, text content hash), bounded in bytes, least recently used first out.

    Everything read back is untrusted: a row whose vector is not `dim` finite float32 values of unit length, or whose
    counts are not non-negative integers, counts as absent, so the text is encoded again and the row replaced.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.conn, self.moved_aside = open_cache_db(self.path, _EMBEDDINGS_SCHEMA, "embedding cache")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def max_bytes(self) -> int:
        """The size bound (vector bytes) writes keep the cache under; set with `set_max_bytes`."""
        with self._lock:
            row = self.conn.execute("SELECT value FROM settings WHERE name = 'max_bytes'").fetchone()
        return int(row[0]) if row and type(row[0]) is int and row[0] >= 0 else DEFAULT_EMBEDDINGS_BYTES

    def set_max_bytes(self, limit: int) -> None:
        """Bound the cache at `limit` bytes of vectors (evicting the least recently used now if it holds more)."""
        if limit < 0:
            raise ValueError(f"embedding cache limit must be >= 0 bytes, got {limit}")

        def work(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT OR REPLACE INTO settings VALUES ('max_bytes', ?)", (int(limit),))
            self._evict(conn, int(limit))
        _transaction(self.conn, self._lock, work)

    def get_vectors(self, encoder: str, texts: Sequence[str], dim: int) -> CachedVectors:
        """The valid vectors held for `texts` under `encoder` (marked as used now, for the eviction order)."""
        keys = [text_key(t) for t in texts]
        where: dict[str, list[int]] = {}
        for i, k in enumerate(keys):
            where.setdefault(k, []).append(i)
        found: dict[str, tuple[np.ndarray, int, int]] = {}
        uniq = list(where)
        with self._lock:
            for start in range(0, len(uniq), 900):
                chunk = uniq[start:start + 900]
                for key, d, blob, cut, tok in self.conn.execute(
                        f"SELECT key, dim, vec, cut, tokens FROM vectors WHERE encoder = ? AND key IN "
                        f"({','.join('?' * len(chunk))})", [encoder, *chunk]):
                    vec = _valid_vector(d, blob, cut, tok, dim)
                    if vec is not None:
                        found[key] = (vec, cut, tok)
        if found:
            now = time.time_ns()
            _transaction(self.conn, self._lock, lambda conn: conn.executemany(
                "UPDATE vectors SET used = ? WHERE encoder = ? AND key = ?",
                [(now, encoder, k) for k in found]))
        rows = [(i, found[k]) for k in found for i in where[k]]
        rows.sort(key=lambda r: r[0])
        return CachedVectors(index=np.array([i for i, _ in rows], dtype=np.int64),
                             vectors=(np.stack([v for _, (v, _, _) in rows]) if rows else np.zeros((0, dim))),
                             cut=np.array([c for _, (_, c, _) in rows], dtype=np.int64),
                             tokens=np.array([t for _, (_, _, t) in rows], dtype=np.int64))

    def put_vectors(self, encoder: str, texts: Sequence[str], vectors: np.ndarray, cut: np.ndarray | Sequence[int],
                    tokens: np.ndarray | Sequence[int]) -> None:
        """Store one batch of vectors (as float32) in one transaction, then evict down to the bound if it is passed."""
        vecs = np.asarray(vectors)
        if vecs.ndim != 2 or vecs.shape[0] != len(texts):
            raise ValueError(f"{len(texts)} texts but vectors of shape {vecs.shape}")
        now = time.time_ns()
        stored = np.ascontiguousarray(vecs, dtype=_VECTOR_DTYPE)
        rows = [(encoder, text_key(t), int(stored.shape[1]), stored[i].tobytes(), int(c), int(n), now)
                for i, (t, c, n) in enumerate(zip(texts, cut, tokens))]
        limit = self.max_bytes

        def work(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?,?,?,?,?,?,?)", rows)
            self._evict(conn, limit)
        _transaction(self.conn, self._lock, work)

    @staticmethod
    def _evict(conn: sqlite3.Connection, limit: int) -> None:
        """Drop the least recently used vectors until the rest fit in `limit` bytes (in the caller's transaction)."""
        held = int(conn.execute("SELECT COALESCE(SUM(dim), 0) FROM vectors").fetchone()[0]) * _VECTOR_DTYPE.itemsize
        if held <= limit:
            return
        doomed: list[tuple[str, str]] = []
        for encoder, key, dim in conn.execute("SELECT encoder, key, dim FROM vectors ORDER BY used, encoder, key"):
            if held <= limit:
                break
            doomed.append((encoder, key))
            held -= int(dim) * _VECTOR_DTYPE.itemsize
        conn.executemany("DELETE FROM vectors WHERE encoder = ? AND key = ?", doomed)

    def usage(self) -> list[EncoderUsage]:
        """Vectors and bytes held per encoder signature."""
        with self._lock:
            rows = self.conn.execute("SELECT encoder, COUNT(*), SUM(dim) FROM vectors GROUP BY encoder "
                                     "ORDER BY encoder").fetchall()
        return [EncoderUsage(encoder=e, vectors=int(n), bytes=int(d) * _VECTOR_DTYPE.itemsize) for e, n, d in rows]

    def clear(self) -> int:
        """Drop every vector (the size bound stays) and give the space back; returns how many were dropped."""
        n = sum(u.vectors for u in self.usage())
        _transaction(self.conn, self._lock, lambda conn: conn.execute("DELETE FROM vectors"))
        with self._lock:
            self.conn.execute("VACUUM")
        return n


def _valid_vector(dim: object, blob: object, cut: object, tokens: object, want: int) -> np.ndarray | None:
    """A stored row's vector as float64 if every field is what `put_vectors` writes; None otherwise."""
    if (type(dim) is not int or dim != want or not isinstance(blob, bytes)
            or len(blob) != want * _VECTOR_DTYPE.itemsize or type(cut) is not int or type(tokens) is not int
            or not 0 <= cut <= tokens):
        return None
    vec = np.frombuffer(blob, dtype=_VECTOR_DTYPE).astype(np.float64)
    if not np.isfinite(vec).all() or abs(float(vec @ vec) - 1.0) > 1e-3:
        return None
    return vec


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
