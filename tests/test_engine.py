import numpy as np
import pytest

from attrib_audit.engine import ScoreCache, pair_key, score_pairs
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.scorers.lexical import LexicalScorer


class CountingScorer:
    """Lexical scores, recording every batch it is asked to score."""

    name = "counting"
    batch_size = 2

    def __init__(self, fail_on_batch: int | None = None, version: str = "v1"):
        self.batches: list[list[str]] = []
        self.fail_on_batch = fail_on_batch
        self.version = version

    @property
    def signature(self) -> str:
        return f"counting:{self.version}"

    def score(self, claims, evidences):
        if self.fail_on_batch is not None and len(self.batches) == self.fail_on_batch:
            raise RuntimeError("boom")
        self.batches.append(list(claims))
        return LexicalScorer().score(claims, evidences)


CLAIMS = ["a b", "c d e f g", "a b", "x", "long claim with many words here", "x"]
EVID = ["a", "c d", "a", "y", "long evidence", "y"]


def test_dedupe_and_cache_hit(tmp_path):
    cache = ScoreCache(tmp_path / "c.sqlite")
    sc = CountingScorer()
    first, st = score_pairs(sc, CLAIMS, EVID, cache=cache)
    assert st.n_unique == 4 and st.n_scored == 4 and st.n_cached == 0
    assert sum(len(b) for b in sc.batches) == 4
    np.testing.assert_allclose(first.scores, LexicalScorer().score(CLAIMS, EVID).scores)
    sc2 = CountingScorer()
    again, st2 = score_pairs(sc2, CLAIMS, EVID, cache=cache)
    assert sc2.batches == [] and st2.n_cached == 4 and st2.n_scored == 0
    np.testing.assert_array_equal(again.scores, first.scores)
    # a new signature (e.g. changed prompt or model) invalidates the cache
    sc3 = CountingScorer(version="v2")
    _, st3 = score_pairs(sc3, CLAIMS, EVID, cache=cache)
    assert st3.n_scored == 4


def test_batches_are_length_sorted():
    sc = CountingScorer()
    score_pairs(sc, CLAIMS, EVID, cache=None)
    lengths = [len(c) for b in sc.batches for c in b]
    assert lengths == sorted(lengths, reverse=True)


def test_finished_batches_survive_a_failure(tmp_path):
    path = tmp_path / "c.sqlite"
    with pytest.raises(RuntimeError, match="boom"):
        score_pairs(CountingScorer(fail_on_batch=1), CLAIMS, EVID, cache=ScoreCache(path))
    cache = ScoreCache(path)
    assert cache.count("counting:v1") == 2  # batch 0 (2 pairs) committed
    sc = CountingScorer()
    _, st = score_pairs(sc, CLAIMS, EVID, cache=cache)
    assert st.n_cached == 2 and st.n_scored == 2


def test_cache_round_trips_failures_and_extras(tmp_path):
    cache = ScoreCache(tmp_path / "c.sqlite")
    batch = ScoreBatch(scores=np.array([np.nan, 0.5]), truncated_tokens=[3, 0], input_tokens=[10, 4], chunks=[1, 2],
                       failures=["refused: I cannot help", None], extras={"label": [None, "attributable"]})
    keys = [pair_key("a", "b"), pair_key("c", "d")]
    cache.put("sig", keys, batch)
    got = cache.get("sig", keys)
    assert got[keys[0]][0] is None and got[keys[0]][4] == "refused: I cannot help"
    assert got[keys[1]][:4] == (0.5, 0, 4, 2)


def test_nan_without_reason_is_rejected():
    with pytest.raises(ValueError, match="without a failure reason"):
        ScoreBatch(scores=np.array([np.nan]), truncated_tokens=[0], input_tokens=[0], chunks=[1], failures=[None])


def test_pair_key_is_unambiguous():
    assert pair_key("ab", "c") != pair_key("a", "bc")
    assert pair_key("x", "y") == pair_key("x", "y")
