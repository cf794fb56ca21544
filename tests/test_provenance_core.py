"""Provenance core: answer hint, sparse terms vs the foundation, distractor search vs the naive loop,
tie-breaking, Eq. 1 against independently computed terms, registry scorers, and the fooled rate."""
from __future__ import annotations

import json

import numpy as np
import pytest

from attrib_audit.engine.cache import ScoreCache
from attrib_audit.files.records import from_record, to_record
from attrib_audit.provenance.corpus import Corpus, answer_hint
from attrib_audit.provenance.diagnostic import ProvenanceConfig, run_provenance
from attrib_audit.provenance.distractors import distractors_naive, find_distractors, sample_candidates
from attrib_audit.provenance.rankers import Eq1Ranker, Eq1Weights, PoolTerms, top1
from attrib_audit.provenance.records import Passage, ProvenanceExample, ProvenanceSet
from attrib_audit.provenance.result import ProvenanceRun
from attrib_audit.scorers import ScoreBatch, ScorerSpec, register, registry
from attrib_audit.text.answers import normalize_answer, split_citations
from attrib_audit.text.tokenize import jaccard, token_set

WORDS = "cat dog bird fish tree river stone cloud rain sun moon star road city king queen".split()


def _ex(i: int, units: list[str], passages: list[str], gold: list[int], **kw) -> ProvenanceExample:
    ps = tuple(Passage(f"p{j}", t) for j, t in enumerate(passages))
    return ProvenanceExample(id=f"e{i}", dataset="toy", question=None, answers=tuple(kw.pop("answers", ())),
                             units=tuple(units), passages=ps, gold=frozenset(f"p{j}" for j in gold), **kw)


def _random_examples(seed: int, n: int = 12) -> list[ProvenanceExample]:
    rng = np.random.default_rng(seed)
    sent = lambda: " ".join(rng.choice(WORDS, size=rng.integers(2, 7)))  # noqa: E731
    shared = sent()  # one text in several examples: must never be its own example's distractor
    out = []
    for i in range(n):
        passages = [sent() for _ in range(rng.integers(2, 5))] + ([shared] if i % 3 == 0 else [])
        out.append(_ex(i, [sent() for _ in range(rng.integers(1, 3))], list(dict.fromkeys(passages)), [0]))
    return out


def test_squad_normalisation_hint_and_citations():
    assert normalize_answer("The  Lakers!") == "lakers" and normalize_answer("an A-team") == "ateam"
    assert answer_hint("In 1987, the Lakers won.", ["Lakers", "1987", "Celtics"]) == pytest.approx(2 / 3)
    assert answer_hint("concatenate", ["cat"]) == 0.0 and answer_hint("anything", []) == 0.0
    assert split_citations("Won in 1987 [1][3]. Also [2, 4].") == ("Won in 1987. Also.", [1, 3, 2, 4])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_lexical_term_is_the_foundation_jaccard(seed):
    corpus = Corpus.build(_random_examples(seed))
    lex = PoolTerms(corpus, corpus.clean).lex
    ref = [jaccard(corpus.unit_texts[u], corpus.texts[t]) for u, t in zip(corpus.clean.unit, corpus.clean.text)]
    np.testing.assert_allclose(lex, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed, k, cap", [(0, 5, None), (1, 3, 9), (2, 40, None), (3, 1, 4)])
def test_sparse_distractor_search_equals_the_naive_loop(seed, k, cap):
    corpus = Corpus.build(_random_examples(seed, n=15))
    cand = sample_candidates(len(corpus.texts), cap, np.random.default_rng(seed))
    fast = find_distractors(corpus.unit_tokens, corpus.unit_example, corpus.text_tokens, corpus.text_owner, k, cand)
    owners = [set(corpus.text_owner[t].indices.tolist()) for t in range(len(corpus.texts))]
    slow = distractors_naive([token_set(u) for u in corpus.unit_texts], corpus.unit_example,
                             [token_set(t) for t in corpus.texts], owners, k, cand)
    np.testing.assert_array_equal(fast[0], slow[0])
    np.testing.assert_allclose(fast[1], slow[1], atol=1e-12)
    own = corpus.text_owner.toarray()
    picked = fast[0] >= 0
    assert not own[fast[0][picked], np.broadcast_to(corpus.unit_example[:, None], fast[0].shape)[picked]].any()


def test_candidate_sampling_is_seeded_and_capped():
    a = sample_candidates(100, 10, np.random.default_rng([0, 1]))
    assert a.size == 10 and np.array_equal(a, sample_candidates(100, 10, np.random.default_rng([0, 1])))
    assert not np.array_equal(a, sample_candidates(100, 10, np.random.default_rng([0, 2])))
    assert np.array_equal(sample_candidates(5, 10, np.random.default_rng(0)), np.arange(5))


def test_ties_break_on_text_hash_not_pool_order_and_nan_ranks_last():
    ex = _ex(0, ["zzz"], ["alpha", "beta", "gamma"], [0])
    corpus = Corpus.build([ex])
    pool = corpus.clean
    winner = int(np.argmin(corpus.tiebreak[pool.text]))
    t = top1(pool, np.zeros(3), corpus.tiebreak, 1)
    assert int(t.entry[0]) == winner and bool(t.tied[0])
    rev = Corpus.build([_ex(0, ["zzz"], ["gamma", "beta", "alpha"], [0])])
    t2 = top1(rev.clean, np.zeros(3), rev.tiebreak, 1)
    assert rev.texts[rev.clean.text[t2.entry[0]]] == corpus.texts[pool.text[winner]]
    t3 = top1(pool, np.array([np.nan, 0.1, 0.2]), corpus.tiebreak, 1)
    assert int(t3.entry[0]) == 2 and not t3.tied[0] and not t3.undefined[0]
    assert bool(top1(pool, np.full(3, np.nan), corpus.tiebreak, 1).undefined[0])


@pytest.fixture(scope="module")
def minilm_store():
    from attrib_audit.provenance.rankers import EmbeddingStore
    from attrib_audit.scorers import get_scorer

    return EmbeddingStore(get_scorer("minilm"))


def test_eq1_is_the_weighted_sum_of_independently_computed_terms(minilm_store):
    ex = _ex(0, ["The Lakers won the 1987 title [cited].", "Magic Johnson was the MVP."],
             ["The Lakers beat the Celtics in 1987.", "Magic Johnson won the finals MVP award.", "Rain in Spain."],
             [0, 1], answers=["Lakers", "1987"], citations=(frozenset({"p2"}), frozenset()))
    corpus = Corpus.build([ex])
    pool = corpus.clean
    terms = PoolTerms(corpus, pool)
    sem_ref = minilm_store.scorer.score([corpus.unit_texts[u] for u in pool.unit],
                                        [corpus.texts[t] for t in pool.text]).scores
    np.testing.assert_allclose(terms.sem(minilm_store), sem_ref, atol=1e-6)
    lex = np.array([jaccard(corpus.unit_texts[u], corpus.texts[t]) for u, t in zip(pool.unit, pool.text)])
    hint = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    cite = np.array([0, 0, 1, 0, 0, 0], dtype=float)
    w = Eq1Weights.parse("lex=0.3,sem=0.5,hint=0.15,cite=0.05")
    got = Eq1Ranker(minilm_store, w).scores(terms)
    np.testing.assert_allclose(got, 0.3 * lex + 0.5 * sem_ref + 0.15 * hint + 0.05 * cite, atol=1e-6)
    # h(u) is constant within a unit, so it never reorders a unit's passages; a big citation weight does
    no_hint = Eq1Ranker(minilm_store, Eq1Weights(0.3, 0.5, 0.0, 0.05)).scores(terms)
    assert np.array_equal(top1(pool, got, corpus.tiebreak, 2).entry, top1(pool, no_hint, corpus.tiebreak, 2).entry)
    cited = Eq1Ranker(minilm_store, Eq1Weights(0.4, 0.45, 0.1, 5.0)).scores(terms)
    assert int(top1(pool, cited, corpus.tiebreak, 2).entry[0]) == 2
    assert Eq1Weights.parse("0.40,0.45,0.10,0.05") == Eq1Weights()
    with pytest.raises(ValueError, match="four numbers"):
        Eq1Weights.parse("0.5,0.5")


class _SharedTokens:
    """A real (tiny) scorer for the registry path: the count of shared tokens, counting its calls."""

    name = "test-shared-tokens"
    signature = "test-shared-tokens:v1"
    batch_size = 7
    calls = 0

    def score(self, claims, evidences):
        _SharedTokens.calls += 1
        return ScoreBatch.plain([len(token_set(c) & token_set(e)) for c, e in zip(claims, evidences)])


if _SharedTokens.name not in registry():
    register(ScorerSpec(name=_SharedTokens.name, factory=lambda **_: _SharedTokens(),
                        description="shared token count (tests)", family="test",
                        check=lambda: (True, "tests"), install="-"))


def _confusing_set() -> ProvenanceSet:
    """Unit 0's own passages share few tokens with it; example 1 holds a near copy, so lexical is fooled."""
    a = _ex(0, ["red fox jumps over lazy dog"], ["a fox is red", "weather report"], [0])
    b = _ex(1, ["blue whale sings"], ["red fox jumps over lazy dog today", "whales sing blue songs"], [1])
    c = _ex(2, ["green tree grows"], ["trees grow green leaves", "stone"], [0])
    return ProvenanceSet([a, b, c])


def test_registry_scorer_runs_through_the_engine_cache_and_lexical_is_fooled(tmp_path):
    cfg = ProvenanceConfig(rankers=("lexical", _SharedTokens.name), confusable_k=1, seeds=2, candidate_cap=None,
                           alphas=(), n_boot=200, cache_path=str(tmp_path / "cache.sqlite"), quiet=True)
    _SharedTokens.calls = 0
    res = run_provenance([_confusing_set()], cfg, log=lambda m: None).results
    assert _SharedTokens.calls > 0
    with ScoreCache(tmp_path / "cache.sqlite") as cache:
        assert cache.count(_SharedTokens.signature) > 0
    d = res.datasets[0]
    assert d.clean.rankers["lexical"].top1.estimate == pytest.approx(1.0)
    seed0 = d.confusable.per_seed[0]
    fooled = seed0.rankers["lexical"].fooled
    assert fooled is not None and fooled.estimate == pytest.approx(1 / 3)
    assert seed0.rankers["lexical"].top1.estimate == pytest.approx(2 / 3)
    assert d.confusable.summary["lexical"].fooled.sd == 0.0  # no cap: the seeds see the same pool
    # units 1 and 2 share no token with another example's passages: no distractor, pool of 2 (counted as short)
    assert seed0.draw is not None and seed0.draw.units_short_of_k == 2
    assert seed0.random_baseline.estimate == pytest.approx(np.mean([1 / 3, 1 / 2, 1 / 2]))
    record = to_record(res)
    assert record["datasets"][0]["confusable"]["per_seed"][0]["units_short_of_k"] == 2  # the draw is inlined
    assert to_record(from_record(ProvenanceRun, json.loads(json.dumps(record)))) == record
    _SharedTokens.calls = 0
    again = run_provenance([_confusing_set()], cfg, log=lambda m: None).results
    assert _SharedTokens.calls == 0 and to_record(again.datasets) == to_record(res.datasets)


def test_examples_without_gold_are_counted_not_scored():
    s = _confusing_set()
    s.examples.append(_ex(3, ["no gold here"], ["nothing"], []))
    cfg = ProvenanceConfig(rankers=("lexical",), confusable_k=0, alphas=(), n_boot=50, cache_path=":memory:")
    d = run_provenance([s], cfg, log=lambda m: None).results.datasets[0]
    assert d.n_examples == 3 and d.skipped == {"no_gold_passage": 1, "units_of_examples_without_gold": 1}
