"""Composite scorers (blend): the engine scores each component once, through the score cache, and composes."""
import numpy as np

from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.engine.table import score_table
from attrib_audit.scorers.blend import BlendScorer
from attrib_audit.scorers.lexical import LexicalScorer


class CountingSemantic:
    """A stand-in semantic scorer: the number of shared characters, scaled; records every pair it scores."""

    name = "counting-sem"
    batch_size = 3
    window = 77

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    @property
    def signature(self) -> str:
        return "counting-sem:v1"

    def score(self, claims, evidences):
        from attrib_audit.scorers.base import ScoreBatch

        self.seen += list(zip(claims, evidences))
        s = [len(set(c) & set(e)) / 10 for c, e in zip(claims, evidences)]
        tokens = [len(c) + len(e) for c, e in zip(claims, evidences)]
        return ScoreBatch.plain(s, truncated=[len(c) % 2 for c in claims], input_tokens=tokens)


CLAIMS = ["a b", "c d e f g", "a b", "x", "long claim with many words here", "x", "q r"]
EVID = ["a", "c d", "a", "y", "long evidence", "y", "r s"]


def test_blend_composed_equals_its_own_score():
    sem = CountingSemantic()
    blend = BlendScorer(LexicalScorer(), sem, w_lex=0.3, w_sem=0.7)
    direct = BlendScorer(LexicalScorer(), CountingSemantic(), w_lex=0.3, w_sem=0.7).score(CLAIMS, EVID)
    out, st = score_pairs(blend, CLAIMS, EVID, cache=ScoreCache(":memory:"))
    np.testing.assert_array_equal(out.scores, direct.scores)  # identical, not merely close
    np.testing.assert_array_equal(out.truncated_tokens, direct.truncated_tokens)
    np.testing.assert_array_equal(out.input_tokens, direct.input_tokens)
    lex = LexicalScorer().score(CLAIMS, EVID).scores
    np.testing.assert_allclose(out.scores, 0.3 * lex + 0.7 * np.array([len(set(c) & set(e)) / 10
                                                                       for c, e in zip(CLAIMS, EVID)]))
    assert st.n_unique == 5 and st.n_scored == 5


def test_component_scored_once_per_run_and_blend_cached_under_its_own_signature(tmp_path):
    cache = ScoreCache(tmp_path / "c.sqlite")
    sem = CountingSemantic()
    blend = BlendScorer(LexicalScorer(), sem)
    score_pairs(sem, CLAIMS, EVID, cache=cache)  # the component alone first, as `minilm` before `blend`
    assert len(sem.seen) == 5
    out, st = score_pairs(blend, CLAIMS, EVID, cache=cache)
    assert len(sem.seen) == 5, "blend re-scored pairs its semantic component had already scored"
    assert st.n_scored == 5 and cache.count(blend.signature) == 5
    again, st2 = score_pairs(blend, CLAIMS, EVID, cache=cache)  # blend's own entries serve a rerun
    assert st2.n_cached == 5 and st2.n_scored == 0
    np.testing.assert_array_equal(again.scores, out.scores)


def test_blend_before_its_component_in_one_table_run():
    from attrib_audit.data.records import PairRecord, PairTable

    class Config:
        scorers = ("blend", "sem")
        engine = "local"
        batch_size = None
        cache_path = ":memory:"  # nothing persists, yet one run still shares the component's scores
        quiet = True
        ray = None

        def factory_options(self, name):
            return {}

    recs = [PairRecord(id=str(i), claim=c, evidence=e, label=i % 2, dataset="d") for i, (c, e)
            in enumerate(zip(CLAIMS, EVID))]
    sem = CountingSemantic()
    _, stats = score_table(PairTable.from_records(recs), {"blend": BlendScorer(LexicalScorer(), sem), "sem": sem},
                                Config())
    assert len(sem.seen) == 5
    assert [s.n_scored for s in stats] == [5, 0] and [s.n_cached for s in stats] == [0, 5]
