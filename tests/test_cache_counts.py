"""Each evidence's (words, sentences) lives in the score cache beside the scores: a cached rerun reads them instead
of recounting, a killed run keeps every batch it wrote, a row that is not two counts is counted again, and the
counts read back are those counted (the ASCII word count equals the regex's)."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attrib_audit.audit.transfer as transfer
from attrib_audit.audit import AuditConfig, run_audit
from attrib_audit.audit.transfer import counts_signature, evidence_counts
from attrib_audit.data import load_pairs
from attrib_audit.data.demo import demo_paths
from attrib_audit.engine.cache import ScoreCache, text_key
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.text.sentences import split_sentences
from attrib_audit.text.tokenize import count_tokens, tokens

EVIDENCES = ["Dr. Smith came. He left.", "one two", "Dr. Smith came. He left.", "A. B. See\n\nnew", "Köln. İstanbul x",
             "", "one two"]


def _counted(monkeypatch) -> list[str]:
    """The texts split into sentences from now on (the costly count a cached rerun must skip)."""
    seen: list[str] = []

    def split(text: str) -> list[str]:
        seen.append(text)
        return split_sentences(text)

    monkeypatch.setattr(transfer, "split_sentences", split)
    return seen


def _rows(path) -> dict[str, tuple]:
    with sqlite3.connect(path) as conn:
        return {k: (w, s) for k, w, s in conn.execute("SELECT key, words, sentences FROM text_counts")}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("aZ9_ -.,'\n\tİßé×\u0307\x7f") + ["x y", "İx", "Dr."]), max_size=40).map("".join)
       | st.text(max_size=40))
def test_count_tokens_is_the_regex_count_on_any_text(text):
    assert count_tokens(text) == len(tokens(text))


def test_counts_are_cached_by_content_and_reused(tmp_path, monkeypatch):
    plain = evidence_counts(EVIDENCES)
    seen = _counted(monkeypatch)
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        first = evidence_counts(EVIDENCES, cache)
    assert sorted(seen) == sorted(set(EVIDENCES))  # each distinct evidence counted once
    rows = _rows(tmp_path / "c.sqlite")
    assert rows == {text_key(e): (len(tokens(e)), len(split_sentences(e))) for e in EVIDENCES}
    seen.clear()
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        again = evidence_counts(list(reversed(EVIDENCES)), cache)
        more = evidence_counts(["one two", "Brand new. Text."], cache)
    assert seen == ["Brand new. Text."], "a cached evidence was counted again"
    for a, b in zip(plain, first):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
    assert [a[::-1].tolist() for a in again] == [a.tolist() for a in plain]
    assert [a.tolist() for a in more] == [[2.0, 3.0], [1.0, 2.0]]


def test_counts_of_another_counter_are_not_read(tmp_path, monkeypatch):
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        cache.put_counts("evidence-counts:an-older-splitter", [text_key("one two")], [7], [7])
        words, sents = evidence_counts(["one two"], cache)
        assert (words.tolist(), sents.tolist()) == ([2.0], [1.0])
        assert cache.get_counts(counts_signature(), [text_key("one two")]) == {text_key("one two"): (2, 1)}


def test_an_interrupted_count_keeps_every_batch_it_wrote(tmp_path, monkeypatch):
    evidences = [f"Sentence {i}. And one more." for i in range(10)]
    monkeypatch.setattr(transfer, "COUNT_BATCH", 3)
    seen: list[str] = []

    def split(text: str) -> list[str]:
        if len(seen) == 7:  # Ctrl-C in the third batch
            raise KeyboardInterrupt
        seen.append(text)
        return split_sentences(text)

    monkeypatch.setattr(transfer, "split_sentences", split)
    with ScoreCache(tmp_path / "c.sqlite") as cache, pytest.raises(KeyboardInterrupt):
        evidence_counts(evidences, cache)
    assert set(_rows(tmp_path / "c.sqlite")) == {text_key(e) for e in evidences[:6]}, "two whole batches kept"
    seen = _counted(monkeypatch)
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        words, sents = evidence_counts(evidences, cache)
    assert seen == evidences[6:] and sents.tolist() == [2.0] * 10 and words.tolist() == [5.0] * 10


def test_a_killed_process_keeps_the_batches_it_committed(tmp_path):
    """SIGKILL while counting the third batch: the first two are in the file, whole, and a rerun counts the rest."""
    script = textwrap.dedent(f"""
        import os, signal
        import attrib_audit.audit.transfer as transfer
        from attrib_audit.engine.cache import ScoreCache
        from attrib_audit.text.sentences import split_sentences
        calls = []
        def split(text):
            calls.append(text)
            if len(calls) == 8:
                os.kill(os.getpid(), signal.SIGKILL)
            return split_sentences(text)
        transfer.split_sentences, transfer.COUNT_BATCH = split, 3
        transfer.evidence_counts([f"Sentence {{i}}. And one more." for i in range(10)],
                                 ScoreCache({str(tmp_path / 'c.sqlite')!r}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode()
    assert len(_rows(tmp_path / "c.sqlite")) == 6


def test_a_row_that_is_not_two_counts_is_counted_again_and_replaced(tmp_path, monkeypatch):
    path = tmp_path / "c.sqlite"
    with ScoreCache(path) as cache:
        evidence_counts(["one two", "three"], cache)
        cache.put("sig", ["k"], ScoreBatch.plain([0.5]))
    with sqlite3.connect(path) as conn:  # written by something else
        conn.execute("UPDATE text_counts SET words = 'many' WHERE key = ?", (text_key("one two"),))
        conn.execute("UPDATE text_counts SET sentences = -4 WHERE key = ?", (text_key("three"),))
    seen = _counted(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the file is not called corrupt: the scores beside the counts are kept
        with ScoreCache(path) as cache:
            words, sents = evidence_counts(["one two", "three"], cache)
            assert cache.moved_aside is None and cache.count() == 1
    assert (words.tolist(), sents.tolist()) == ([2.0, 1.0], [1.0, 1.0]) and sorted(seen) == ["one two", "three"]
    assert _rows(path) == {text_key("one two"): (2, 1), text_key("three"): (1, 1)}


def test_a_cached_audit_rerun_counts_nothing_and_gives_the_same_results(tmp_path, monkeypatch):
    table = load_pairs(demo_paths()[1])
    config = AuditConfig(scorers=("lexical",), n_boot=50, n_perm=50, cache_path=str(tmp_path / "c.sqlite"),
                         quiet=True)
    seen = _counted(monkeypatch)
    first = run_audit(table, config, log=lambda _: None).results
    assert seen, "the first run counts"
    seen.clear()
    again = run_audit(table, config, log=lambda _: None).results
    assert seen == [], "the rerun recounted evidences the cache holds"
    assert again.transfer == first.transfer and again.sensitivity == first.sensitivity
    assert len(_rows(tmp_path / "c.sqlite")) == len(set(table.evidences))
    nocache = run_audit(table, AuditConfig(scorers=("lexical",), n_boot=50, n_perm=50, cache_path=":memory:",
                                           quiet=True), log=lambda _: None).results
    assert nocache.transfer == first.transfer and first.transfer is not None
    assert np.isfinite([s.evidence_length.words_mean for s in first.transfer.slices]).all()
