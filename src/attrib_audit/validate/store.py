"""The label store: one SQLite file (WAL) next to the pairs being labelled, one row per annotator × pair.

Every decision is committed before the page moves on, so closing the browser or killing the
server loses nothing; each request opens its own connection, so concurrent tabs serialise on
SQLite's lock instead of overwriting each other in memory.
"""
from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from attrib_audit.errors import InputError

# "partial" (partly supported) has no label of its own: `--export` maps it through --label-map, never by a guess
DECISIONS = {"supported": 1, "not_supported": 0, "partial": None, "skip": None}
MAX_NOTE = 2000
SCHEMA = """CREATE TABLE IF NOT EXISTS labels (
  annotator TEXT NOT NULL, pair_id TEXT NOT NULL, decision TEXT NOT NULL, label INTEGER, ts REAL NOT NULL,
  PRIMARY KEY (annotator, pair_id))"""


def store_path(pairs_file: str | Path) -> Path:
    """Where the labels of `pairs_file` live: beside it, so they travel with it."""
    p = Path(pairs_file)
    return p.with_name(p.name + ".labels.sqlite")


@dataclass(frozen=True)
class Clash:
    """A decision `put` did not store because the stored one was not what the tab saw (None: no label stored)."""

    stored: str | None


class LabelStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            with self._connect() as con:
                con.execute("PRAGMA journal_mode=WAL")
                con.execute(SCHEMA)
                if "note" not in {r[1] for r in con.execute("PRAGMA table_info(labels)")}:  # a store from before notes
                    con.execute("ALTER TABLE labels ADD COLUMN note TEXT")
        except sqlite3.DatabaseError as exc:  # a file of another kind where the store should be
            raise InputError(f"{self.path} is not an attrib-audit label store (SQLite: {exc})") from None

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        con.execute("PRAGMA synchronous=FULL")
        con.execute("PRAGMA busy_timeout=30000")
        return con

    def put(self, annotator: str, pair_id: str, decision: str, expect: str | None | object = ...,
            note: str | None = None) -> Clash | None:
        """Store a decision; with `expect`, only if the stored one still is `expect` (None: none yet).

        Returns None when written, else a Clash holding what is stored (nothing is overwritten); a bare stored
        value could not tell "written" from "not written, nothing stored".
        Check and write are one IMMEDIATE transaction, so two tabs cannot both pass the check.
        """
        if decision not in DECISIONS:
            raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            row = con.execute("SELECT decision FROM labels WHERE annotator = ? AND pair_id = ?",
                              (annotator, pair_id)).fetchone()
            stored = row[0] if row else None
            if expect is not ... and stored != expect:
                con.execute("ROLLBACK")
                return Clash(stored)
            con.execute("INSERT INTO labels (annotator, pair_id, decision, label, ts, note) VALUES (?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (annotator, pair_id) DO UPDATE SET decision = excluded.decision, "
                        "label = excluded.label, ts = excluded.ts, note = excluded.note",
                        (annotator, pair_id, decision, DECISIONS[decision], time.time(), note or None))
            con.execute("COMMIT")
            return None
        finally:
            con.close()

    def decisions(self, annotator: str) -> dict[str, str]:
        """pair id -> decision of one annotator."""
        con = self._connect()
        try:
            return dict(con.execute("SELECT pair_id, decision FROM labels WHERE annotator = ?", (annotator,)))
        finally:
            con.close()

    def rows(self, annotator: str) -> dict[str, tuple[int | None, float]]:
        """pair id -> (label or None for skip, timestamp)."""
        con = self._connect()
        try:
            return {pid: (lab, ts) for pid, lab, ts in
                    con.execute("SELECT pair_id, label, ts FROM labels WHERE annotator = ?", (annotator,))}
        finally:
            con.close()

    def annotators(self) -> list[str]:
        con = self._connect()
        try:
            return [a for (a,) in con.execute("SELECT DISTINCT annotator FROM labels ORDER BY annotator")]
        finally:
            con.close()

    def entries(self, annotator: str) -> dict[str, tuple[str, float, str | None]]:
        """pair id -> (decision, timestamp, note) of one annotator."""
        con = self._connect()
        try:
            return {pid: (d, ts, note) for pid, d, ts, note in
                    con.execute("SELECT pair_id, decision, ts, note FROM labels WHERE annotator = ?", (annotator,))}
        finally:
            con.close()
