"""Sentence-window chunking: spans fit, nothing is dropped, over-long sentences split by words."""
import numpy as np
import pytest

from attrib_audit.scorers.pairclf import plan_batches
from attrib_audit.text.chunk import pack, sentence_windows, word_count


def test_pack_greedy_spans():
    assert pack([3, 3, 3, 5, 1], 6) == [(0, 2), (2, 3), (3, 5)]
    assert pack([9, 1], 5) == [(0, 1), (1, 2)]  # an over-budget unit stands alone
    assert pack([], 5) == []
    with pytest.raises(ValueError):
        pack([1], 0)


def test_sentence_windows_fit_and_cover_text():
    text = " ".join(f"Sentence number {i} has exactly seven words." for i in range(20))
    wins = sentence_windows(text, 20, word_count)
    assert all(len(w.split()) <= 20 for w in wins)
    assert " ".join(wins).split() == text.split()
    assert len(wins) == 10  # two 7-word sentences per 20-word window


def test_long_sentence_is_split_by_words_not_dropped():
    long = "Long " + " ".join(f"w{i}" for i in range(1000)) + "."
    wins = sentence_windows("Short one. " + long, 400, word_count)
    assert [len(w.split()) for w in wins] == [2, 400, 400, 201]
    assert " ".join(wins).split() == ("Short one. " + long).split()


def test_empty_evidence_gives_one_empty_window():
    assert sentence_windows("", 400, word_count) == [""]
    assert sentence_windows("   \n ", 400, word_count) == [""]


def test_plan_batches_sorted_and_token_budget():
    lengths = np.array([5, 50, 7, 30, 50, 1])
    fixed = plan_batches(lengths, 2, sort=False)
    assert [b.tolist() for b in fixed] == [[0, 1], [2, 3], [4, 5]]
    srt = plan_batches(lengths, 2)
    assert [b.tolist() for b in srt] == [[1, 4], [3, 2], [0, 5]]
    dyn = plan_batches(lengths, 2, max_tokens=100)
    assert sorted(np.concatenate(dyn).tolist()) == list(range(6))
    assert all(len(b) * lengths[b].max() <= 100 or len(b) == 1 for b in dyn)
    assert [b.tolist() for b in dyn] == [[1, 4], [3, 2, 0], [5]]
