"""Crash safety of the score cache: SIGKILL mid-run and resume, corrupt files, concurrent writers."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.files.sqlite import CacheFileError
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.scorers.lexical import LexicalScorer

SCRIPT = Path(__file__).with_name("slow_score_script.py")
sys.path.insert(0, str(SCRIPT.parent))
from slow_score_script import pairs  # noqa: E402


def _run(cache: Path, log: Path, out: Path, start: int, stop: int, delay: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(SCRIPT), str(cache), str(log), str(out), str(start), str(stop),
                             str(delay)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _committed(cache: Path) -> int:
    try:
        with sqlite3.connect(cache, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _scored_claims(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_sigkill_mid_run_then_resume_scores_only_uncommitted_batches(tmp_path):
    cache, n = tmp_path / "c.sqlite", 300  # 30 batches of 10 at 0.1 s each
    proc = _run(cache, tmp_path / "run1.log", tmp_path / "run1.json", 0, n, 0.1)
    deadline = time.time() + 60
    while _committed(cache) < 50 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    committed = _committed(cache)
    assert 50 <= committed < n, "the kill must land mid-way"
    assert committed % 10 == 0, "a batch is committed whole or not at all"
    with sqlite3.connect(cache) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    claims, evidences = pairs(0, n)
    key_of = {c: i for i, c in enumerate(claims)}
    with ScoreCache(cache) as c:
        from attrib_audit.engine.cache import pair_key

        have = c.get("slow-lexical:test:v1", [pair_key(a, b) for a, b in zip(claims, evidences)])
    committed_rows = {i for i, (a, b) in enumerate(zip(claims, evidences)) if pair_key(a, b) in have}

    resume = _run(cache, tmp_path / "run2.log", tmp_path / "run2.json", 0, n, 0.0)
    assert resume.wait(timeout=120) == 0, resume.stderr.read().decode()
    rescored = {key_of[c] for c in _scored_claims(tmp_path / "run2.log")}
    assert not rescored & committed_rows, "a committed batch was scored again"
    assert rescored | committed_rows == set(range(n))
    out = json.loads((tmp_path / "run2.json").read_text())
    assert out["n_scored"] == n - committed and out["n_cached"] == committed
    reference = LexicalScorer().score(claims, evidences).scores
    assert np.array_equal(np.asarray(out["scores"]), reference)


def test_two_concurrent_processes_share_one_cache(tmp_path):
    cache = tmp_path / "c.sqlite"
    a = _run(cache, tmp_path / "a.log", tmp_path / "a.json", 0, 300, 0.01)
    b = _run(cache, tmp_path / "b.log", tmp_path / "b.json", 150, 450, 0.01)
    assert a.wait(timeout=120) == 0, a.stderr.read().decode()
    assert b.wait(timeout=120) == 0, b.stderr.read().decode()
    with sqlite3.connect(cache) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0] == 450
    for name, (lo, hi) in (("a", (0, 300)), ("b", (150, 450))):
        claims, evidences = pairs(lo, hi)
        got = np.asarray(json.loads((tmp_path / f"{name}.json").read_text())["scores"])
        assert np.array_equal(got, LexicalScorer().score(claims, evidences).scores)
    # the later rerun finds everything cached
    c = _run(cache, tmp_path / "c.log", tmp_path / "c.json", 0, 450, 0.0)
    assert c.wait(timeout=60) == 0
    assert json.loads((tmp_path / "c.json").read_text())["n_scored"] == 0


def _filled_cache(path: Path, batches: int = 20) -> None:
    rng = np.random.default_rng(0)
    with ScoreCache(path) as c:
        for b in range(batches):
            c.put("sig", [f"{b}-{i:060d}" for i in range(500)], ScoreBatch.plain(rng.random(500)))


def test_a_file_without_the_sqlite_header_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "c.sqlite"
    _filled_cache(path)
    with open(path, "r+b") as fh:
        fh.write(b"this is not an sqlite file" * 10)
    before = path.read_bytes()
    with pytest.raises(CacheFileError, match="not a SQLite database"):
        ScoreCache(path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["c.sqlite"]


def test_corrupt_cache_is_moved_aside_with_warning_and_rebuilt(tmp_path):
    path = tmp_path / "c.sqlite"
    _filled_cache(path)
    with open(path, "r+b") as fh:  # a real SQLite file (its header intact) with damaged pages
        fh.seek(os.path.getsize(path) // 2)
        fh.write(np.random.default_rng(1).bytes(16384))
    with pytest.warns(RuntimeWarning, match="corrupt"):
        cache = ScoreCache(path)
    try:
        assert cache.moved_aside is not None and cache.moved_aside.exists()
        assert cache.count() == 0
        scorer = LexicalScorer()
        _, st = score_pairs(scorer, ["a b"], ["b c"], cache=cache)
        assert st.n_scored == 1 and cache.count() == 1
    finally:
        cache.close()
    with ScoreCache(path) as again:  # the rebuilt file is healthy: no second warning, the score is kept
        assert again.moved_aside is None and again.count() == 1


def test_healthy_cache_is_not_touched(tmp_path):
    path = tmp_path / "c.sqlite"
    _filled_cache(path, batches=2)
    with ScoreCache(path) as c:
        assert c.moved_aside is None and c.count() == 1000
