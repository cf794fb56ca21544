import numpy as np
import pytest

from attrib_audit.probe.claims import FACTUAL, HEDGE, META, REFUSAL, parse_answer
from attrib_audit.probe.reward import RewardConfig, RewardWeights, grounding_reward, grounding_rewards, scorer_support
from attrib_audit.scorers import get_scorer
from attrib_audit.text.tokenize import token_set


class Containment:
    """Share of the sentence's tokens found in the passage: easy to compute by hand; counts its calls."""

    def __init__(self):
        self.calls, self.pairs = 0, 0

    def __call__(self, claims, evidences):
        self.calls += 1
        self.pairs += len(claims)
        return np.array([len(token_set(c) & token_set(e)) / len(token_set(c)) for c, e in zip(claims, evidences)])


CFG = RewardConfig(support_threshold=0.5)
P = ["alpha opened in 1902", "gamma delta"]


def reward(answer, passages=P, config=CFG, **kw):
    return grounding_reward(answer, passages, Containment(), config, **kw)


def test_sentence_types_and_citations():
    sents = parse_answer("Here is what I found. Alpha opened in 1902. [1] Beta may have closed [2]. "
                         "I cannot answer the rest. It opened in May 1902 [1][2].")
    assert [(s.kind, s.cites) for s in sents] == [(META, ()), (FACTUAL, (1,)), (HEDGE, (2,)), (REFUSAL, ()),
                                                  (FACTUAL, (1, 2))]
    assert sents[1].text == "Alpha opened in 1902."


def test_claim_support_factual_must_be_supported_by_what_it_cites():
    # sentence 1 fully contained in [1] (1.0); sentence 2 shares nothing with [2] (0.0)
    t = reward("Alpha opened in 1902 [1]. Beta closed in 1950 [2].")
    assert t.claim_support == pytest.approx(0.5) and t.n_factual == 2
    # the best of several cited passages counts
    assert reward("Alpha opened in 1902 [2][1].").claim_support == pytest.approx(1.0)
    # an uncited factual sentence scores 0 even if some passage states it
    t = reward("Alpha opened in 1902.")
    assert t.claim_support == 0.0 and t.n_uncited_factual == 1


def test_claim_support_ignores_hedges_and_meta():
    base = reward("Alpha opened in 1902 [1].").claim_support
    assert reward("Alpha opened in 1902 [1]. Beta may have closed in 1950 [2].").claim_support == base == 1.0
    t = reward("Here is what I found. Alpha opened in 1902 [1]. Perhaps it closed later.")
    assert t.claim_support == 1.0 and (t.n_meta, t.n_hedge, t.n_factual) == (1, 1, 1)


def test_counterfactual_margin_remove_and_swap():
    # remove: the only other passage does not state it -> margin 1 - 0
    assert reward("Alpha opened in 1902 [1].").counterfactual_margin == pytest.approx(1.0)
    # remove: another passage states it just as well -> citing [1] adds nothing
    same = ["alpha opened in 1902", "in 1902 alpha opened"]
    assert reward("Alpha opened in 1902 [1].", passages=same).counterfactual_margin == pytest.approx(0.0)
    # swap: unrelated passage holds 2 of the 4 tokens -> 1 - 0.5
    swap = RewardConfig(support_threshold=0.5, counterfactual="swap")
    t = reward("Alpha opened in 1902 [1].", config=swap, unrelated="alpha opened elsewhere")
    assert t.counterfactual_margin == pytest.approx(0.5)
    # uncited and hedged sentences do not enter the margin
    assert reward("Alpha opened in 1902. Beta may be [2].").counterfactual_margin == 0.0
    with pytest.raises(ValueError, match="unrelated"):
        reward("Alpha opened in 1902 [1].", config=swap)


def test_evidence_coverage_counts_cited_passages_that_support_a_citing_sentence():
    assert reward("Alpha opened in 1902 [1][2].").evidence_coverage == pytest.approx(0.5)
    assert reward("Alpha opened in 1902 [1]. Gamma delta [2].").evidence_coverage == pytest.approx(1.0)
    t = reward("Alpha opened in 1902 [1][7].")  # [7] does not exist: cited but unsupported
    assert t.evidence_coverage == pytest.approx(0.5) and t.n_invalid_citations == 1
    assert reward("Alpha opened in 1902.").evidence_coverage == 0.0
    # the threshold decides: containment 0.5 of "alpha beta" in [1]
    assert reward("Alpha beta [1].").evidence_coverage == 1.0
    assert reward("Alpha beta [1].", config=RewardConfig(support_threshold=0.51)).evidence_coverage == 0.0


def test_commitment_penalises_hedging_everything_or_refusing_only_when_answerable():
    for answer in ("Perhaps it opened in 1902 [1]. It might have closed.", "I cannot answer this question.", ""):
        assert reward(answer).commitment == -1.0, answer
        assert reward(answer, answerable=False).commitment == 0.0, answer
    assert reward("Alpha opened in 1902 [1]. Perhaps it closed.").commitment == 0.0


def test_total_is_the_weighted_sum_of_the_returned_terms():
    w = RewardWeights.parse("claim_support=2,counterfactual_margin=0,evidence_coverage=1,commitment=3")
    t = reward("Alpha opened in 1902 [1][2].", config=RewardConfig(0.5, weights=w))
    assert t.total == pytest.approx(2 * t.claim_support + 1 * t.evidence_coverage + 3 * t.commitment)
    assert (t.claim_support, t.evidence_coverage, t.commitment) == (1.0, 0.5, 0.0)
    assert RewardWeights.parse("commitment=2") == RewardWeights(commitment=2.0)
    with pytest.raises(ValueError, match="TERM=VALUE"):
        RewardWeights.parse("support=1")
    with pytest.raises(ValueError, match="default support threshold"):
        RewardConfig.for_scorer("bertscore")
    assert RewardConfig.for_scorer("minilm").support_threshold == 0.5


def test_batch_scores_once_and_dedupes_pairs():
    sup = Containment()
    out = grounding_rewards(["Alpha opened in 1902 [1].", "Alpha opened in 1902 [1].", "Nothing."],
                            [P, P, P], sup, CFG, answerable=[True, True, False])
    assert sup.calls == 1 and sup.pairs == 2  # (sentence,[1]) and (sentence,[2]) for the remove counterfactual
    assert out[0] == out[1] and out[2].claim_support == 0.0 and out[2].commitment == 0.0


def test_nan_support_is_an_error_not_a_zero():
    with pytest.raises(ValueError, match="NaN"):
        grounding_reward("Alpha opened [1].", P, lambda c, e: np.full(len(c), np.nan), CFG)


@pytest.mark.parametrize("name", ["lexical", "minilm"])
def test_registry_scorers_reward_a_grounded_answer_over_a_misattributed_one(name):
    support = scorer_support(get_scorer(name))
    cfg = RewardConfig.for_scorer(name)
    passages = ["Harlow Bridge: The first Harlow Bridge was an iron truss over the river Senn. It opened in 1902.",
                "Senn floods: Heavy floods in 1979 damaged several crossings in the valley."]
    good = grounding_reward("The first Harlow Bridge, an iron truss over the Senn, opened in 1902 [1].", passages,
                            support, cfg)
    bad = grounding_reward("The first Harlow Bridge, an iron truss over the Senn, opened in 1902 [2].", passages,
                           support, cfg)
    assert good.claim_support > bad.claim_support
    assert good.counterfactual_margin > 0 > bad.counterfactual_margin
    assert good.total > bad.total
