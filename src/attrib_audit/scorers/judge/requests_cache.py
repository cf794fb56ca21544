"""A SQLite cache of judge requests and replies, written one reply at a time.

The engine's ScoreCache commits per batch; a judge batch can take minutes, so each
reply is committed as it arrives and a killed or failed run resumes request by request. It opens
like the score cache: a non-SQLite file is refused, a corrupt database is moved aside.
"""
from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

from attrib_audit.files.sqlite import open_cache_db
from attrib_audit.scorers.judge.backends import Reply

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    malformed TEXT
) WITHOUT ROWID;
"""


def request_key(backend_signature: str, request: str) -> str:
    return hashlib.sha256(f"{backend_signature}\x00{request}".encode("utf-8", "surrogatepass")).hexdigest()


class RequestCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.conn, self.moved_aside = open_cache_db(self.path, _SCHEMA, "judge request cache")

    def get(self, key: str) -> Reply | None:
        with self._lock:
            row = self.conn.execute("SELECT text, malformed FROM replies WHERE key = ?", (key,)).fetchone()
        return None if row is None else Reply(row[0], row[1])

    def put(self, key: str, backend: str, request: dict, reply: Reply) -> None:
        with self._lock:
            self.conn.execute("INSERT OR REPLACE INTO replies VALUES (?,?,?,?,?)",
                              (key, backend, json.dumps(request, sort_keys=True), reply.text, reply.malformed))

    def count(self) -> int:
        with self._lock:
            return int(self.conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        self.conn.close()
