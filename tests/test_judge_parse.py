"""Judge answer parsing, clamping, prompt budgets and the signature."""
from __future__ import annotations

import math

import pytest

from attrib_audit.scorers.judge.backends import Decoding
from attrib_audit.scorers.judge.parse import parse_label, parse_support
from attrib_audit.scorers.judge.prompts import PROMPTS, Budgets, Prompt, cut, render
from attrib_audit.scorers.judge.scorer import JudgeScorer


@pytest.mark.parametrize("raw, value, clamped", [
    ("SUPPORT: 0.73", 0.73, False),
    ("support:0.5", 0.5, False),
    ("Support = .25", 0.25, False),
    ("**SUPPORT:** 0.9", 0.9, False),
    ("SUPPORT: 1.3", 1.0, True),
    ("SUPPORT: -0.2", 0.0, True),
    ("SUPPORT: 85%", 0.85, False),
    ("SUPPORT: 7/10", 0.7, False),
    ("SUPPORT: 1", 1.0, False),
    ("SUPPORT: 0", 0.0, False),
    ("SUPPORT: 1e-1", 0.1, False),
    ("The evidence says so.\nSUPPORT: 0.8\nSUPPORT: 0.1", 0.8, False),  # first occurrence wins
    ("  0.6  ", 0.6, False),  # a bare number is the whole answer
    ("0.4.", 0.4, False),
    ("SUPPORT: 12", 1.0, True),
])
def test_support_parses_and_clamps(raw, value, clamped):
    p = parse_support(raw)
    assert p.failure is None
    assert p.value == pytest.approx(value)
    assert p.clamped is clamped
    assert 0.0 <= p.value <= 1.0


@pytest.mark.parametrize("raw, reason", [
    ("I cannot help with that.", "refusal"),
    ("Sorry, as an AI I can't judge this", "refusal"),
    ("", "empty answer"),
    ("   \n ", "empty answer"),
    ("The claim is supported.", "no SUPPORT"),
    ("SUPPORT: high", "no SUPPORT"),
    ("SUPPORT: nan", "no SUPPORT"),
    ("I think 0.7 or maybe 0.8", "no SUPPORT"),  # a number inside prose is not an answer
    ("SUPPORT: 3/0", "unreadable number"),
])
def test_support_failures_keep_reason_and_raw_text(raw, reason):
    p = parse_support(raw)
    assert p.value is None
    assert p.failure.startswith(reason)
    if raw.strip():
        assert raw.strip()[:20] in p.failure  # the raw answer is recorded with the failure


@pytest.mark.parametrize("raw, label, value", [
    ("LABEL: attributable\nCONF: 0.8", "attributable", 0.8),
    ("LABEL: not_attributable\nCONF: 0.8", "not_attributable", 0.2),  # higher score = more supported
    ("label: Not Attributable\nconfidence: 90%", "not_attributable", 0.1),
    ("LABEL: **attributable**  CONF: 1.4", "attributable", 1.0),
    ("LABEL: not-attributable\nCONF: 0", "not_attributable", 1.0),
])
def test_label_parses(raw, label, value):
    p = parse_label(raw)
    assert p.failure is None and p.label == label
    assert p.value == pytest.approx(value)


def test_label_failures():
    assert parse_label("").failure == "empty answer"
    assert parse_label("I cannot do that").failure.startswith("refusal")
    assert parse_label("LABEL: maybe\nCONF: 0.5").failure.startswith("no LABEL")
    no_conf = parse_label("LABEL: attributable")
    assert no_conf.value is None and no_conf.label == "attributable" and no_conf.failure.startswith("no CONF")


def test_budgets_cut_and_count():
    b = Budgets(evidence=10, claim=5, question=3)
    r = render(PROMPTS["graded"], "claim-long", "e" * 25, "why?!", b)
    assert r.chars_in == len("claim-long") + 25 + 5
    assert r.chars_cut == (10 - 5) + (25 - 10) + (5 - 3)
    user = r.messages[1]["content"]
    assert "e" * 10 in user and "e" * 11 not in user and "Question:\nwhy\n" in user
    assert cut("abc", 3) == ("abc", 0)
    no_q = render(PROMPTS["label"], "c", "e", None, b)
    assert "Question" not in no_q.messages[1]["content"] and no_q.chars_cut == 0
    with pytest.raises(ValueError):
        Budgets(evidence=0)


def test_braces_in_inputs_do_not_break_the_template():
    r = render(PROMPTS["graded"], "x {claim} y", "{evidence} {0}", None, Budgets())
    assert "x {claim} y" in r.messages[1]["content"] and "{evidence} {0}" in r.messages[1]["content"]


class _Backend:
    concurrency = 1
    signature = "test-backend"
    decoding = Decoding()


def test_signature_changes_with_prompt_budget_and_decoding():
    base = JudgeScorer("judge", PROMPTS["graded"], _Backend())
    edited = Prompt("graded", 1, PROMPTS["graded"].system, PROMPTS["graded"].template + " ")
    bumped = Prompt("graded", PROMPTS["graded"].version + 1, PROMPTS["graded"].system, PROMPTS["graded"].template)
    sigs = {base.signature, JudgeScorer("judge", edited, _Backend()).signature,
            JudgeScorer("judge", bumped, _Backend()).signature,
            JudgeScorer("judge", PROMPTS["graded"], _Backend(), budgets=Budgets(evidence=1000)).signature}
    assert len(sigs) == 4
    assert "t0-max20-seed0" in base.signature and "e1500c600q300" in base.signature


def test_failed_rows_are_nan_not_imputed():
    class Echo(_Backend):
        def complete(self, messages):
            from attrib_audit.scorers.judge.backends import Reply

            claim = messages[1]["content"].split("Claim:\n")[1].split("\n")[0]
            return Reply({"a": "SUPPORT: 0.4", "b": "I cannot help", "c": ""}[claim])

    batch = JudgeScorer("judge", PROMPTS["graded"], Echo()).score(["a", "b", "c"], ["e", "e", "e"])
    assert batch.scores[0] == pytest.approx(0.4)
    assert math.isnan(batch.scores[1]) and math.isnan(batch.scores[2])
    assert batch.failures[0] is None and batch.failures[1].startswith("refusal") and batch.failures[2] == "empty answer"
    assert batch.extras["raw"] == ["SUPPORT: 0.4", "I cannot help", ""]


def test_questions_reach_only_scorers_that_ask_and_key_the_cache():
    from attrib_audit.engine import ScoreCache, pair_key, score_pairs
    from attrib_audit.scorers.lexical import LexicalScorer

    assert pair_key("c", "e") == pair_key("c", "e", None) == pair_key("c", "e", "")
    assert pair_key("c", "e", "q") != pair_key("c", "e")
    with ScoreCache(":memory:") as cache:  # a plain scorer: same keys and scores with or without questions
        plain, _ = score_pairs(LexicalScorer(), ["a b"], ["a c"], cache=cache)
        again, st = score_pairs(LexicalScorer(), ["a b"], ["a c"], cache=cache, questions=["why?"])
    assert st.n_cached == 1 and again.scores[0] == plain.scores[0]

    seen = []

    class Asks(_Backend):
        def complete(self, messages):
            from attrib_audit.scorers.judge.backends import Reply

            seen.append("Question:\nwhy?" in messages[1]["content"])
            return Reply("SUPPORT: 0.5")

    with ScoreCache(":memory:") as cache:
        score_pairs(JudgeScorer("judge", PROMPTS["graded"], Asks()), ["a"], ["e"], cache=cache, questions=["why?"])
        _, st = score_pairs(JudgeScorer("judge", PROMPTS["graded"], Asks()), ["a"], ["e"], cache=cache)
    assert seen == [True, False] and st.n_scored == 1
