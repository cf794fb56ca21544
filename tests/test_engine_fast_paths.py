"""The engine's faster bookkeeping keeps its results: cache keys, batch order, cache rows."""
import hashlib

import numpy as np

from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.engine.cache import pair_key
from attrib_audit.scorers.base import ScoreBatch


def test_pair_key_is_the_part_by_part_hash():
    for c, e, q in [("a", "b", None), ("ü\ud800", "x" * 5000, "why?"), ("", "", ""), ("ab", "c", None)]:
        h = hashlib.sha256()
        for part in (str(len(c.encode("utf-8", "surrogatepass"))) + ":", c,
                     str(len(e.encode("utf-8", "surrogatepass"))) + ":", e):
            h.update(part.encode("utf-8", "surrogatepass"))
        if q:
            qb = q.encode("utf-8", "surrogatepass")
            h.update(f"q{len(qb)}:".encode())
            h.update(qb)
        assert pair_key(c, e, q) == h.hexdigest()
    assert pair_key("ab", "c") != pair_key("a", "bc")


class Recorder:
    name, signature, batch_size = "rec", "rec:v1", 2

    def __init__(self):
        self.batches = []

    def score(self, claims, evidences):
        self.batches.append(list(claims))
        return ScoreBatch(scores=np.array([np.nan if c == "nan" else len(c) for c in claims], dtype=float),
                          truncated_tokens=np.zeros(len(claims), dtype=np.int64),
                          input_tokens=np.arange(len(claims), dtype=np.int64), chunks=np.ones(len(claims),
                                                                                              dtype=np.int64),
                          failures=["why" if c == "nan" else None for c in claims], extras={"raw": list(claims)})


def test_batches_go_longest_first_ties_in_first_seen_order_and_cache_rows_round_trip(tmp_path):
    claims = ["bb", "a", "nan", "cc", "a", "dddd", "ee"]
    evidences = ["x"] * len(claims)
    rec = Recorder()
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        first, _ = score_pairs(rec, claims, evidences, cache=cache, quiet=True)
        again, st = score_pairs(Recorder(), claims, evidences, cache=cache, quiet=True)
    order = sorted(dict.fromkeys(claims), key=lambda c: -len(c))  # Python's stable sort: the reference
    assert [c for b in rec.batches for c in b] == order
    assert st.n_scored == 0 and st.n_cached == 6
    np.testing.assert_array_equal(again.scores, first.scores)
    assert again.failures == first.failures and again.extras == first.extras
    assert np.isnan(again.scores[2]) and again.failures[2] == "why"
    np.testing.assert_array_equal(again.input_tokens, first.input_tokens)


def test_a_lookup_reads_the_same_rows_whether_it_scans_the_signature_or_looks_keys_up(tmp_path):
    """`get` reads every row of the signature when that is at most twice what it was asked for, else looks the keys
    up; both give exactly the asked-for rows of that signature (other signatures' rows never leak in)."""
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        keys = [f"k{i:03d}" for i in range(100)]
        batch = ScoreBatch.plain(np.arange(100) / 100)
        batch.failures[3] = "refused"
        cache.put("sig", keys, batch)
        cache.put("other", keys, ScoreBatch.plain(np.ones(100)))
        asked_many = keys[::2] + ["absent"]  # 51 keys of 100 held: one pass over the signature
        asked_few = keys[:40:4] + ["absent"]  # 11 keys: looked up
        for asked in (asked_many, asked_few, keys, ["absent"], []):
            got = cache.get("sig", asked)
            assert set(got) == set(asked) - {"absent"}
            assert all(got[k][0] == int(k[1:]) / 100 for k in got)
            assert all(got[k][4] == ("refused" if k == "k003" else None) for k in got)
        assert cache.get("nothing-cached", keys) == {}


def test_each_distinct_pair_is_hashed_once_and_an_empty_question_is_no_question(tmp_path, monkeypatch):
    import attrib_audit.engine.runner as runner

    hashed = []
    monkeypatch.setattr(runner, "pair_key", lambda *p: hashed.append(p) or pair_key(*p))

    class Asks(Recorder):
        wants_questions = True

        def score(self, claims, evidences, questions):
            assert len(questions) == len(claims)
            return super().score(claims, evidences)

    claims, evidences = ["a", "b", "a", "a", "b"], ["x", "x", "x", "x", "y"]
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        out, st = score_pairs(Asks(), claims, evidences, cache=cache, questions=["", "q", None, "q", None])
    assert hashed == [("a", "x", None), ("b", "x", "q"), ("a", "x", "q"), ("b", "y", None)]  # first-seen order
    assert st.n_pairs == 5 and st.n_unique == 4  # ("a", "x", "") and ("a", "x", None): one pair, as pair_key says
    assert pair_key("a", "x", "") == pair_key("a", "x", None)
    np.testing.assert_array_equal(out.scores, [1, 1, 1, 1, 1])
