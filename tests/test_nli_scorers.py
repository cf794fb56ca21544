"""NLI scorers on tiny random BERT/RoBERTa classifiers: label index, truncation, chunk-and-max, cache, CLI."""
import json
import re

import numpy as np
import pytest
import torch

import tiny_hf
from attrib_audit.audit import AuditConfig, run_audit
from attrib_audit.cli import main
from attrib_audit.data import load_demo
from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.scorers import ScorerUnavailable, get_scorer, registry
from attrib_audit.scorers.pairclf import ModelConfigError, entailment_index

LONG = " ".join(f"Sentence {i} tells of the cat and the mat and the hat." for i in range(40))
CLAIMS = ["The cat sat on the mat.", "Paris is in France.", "The hat is red.", "Nothing here."]
EVIDENCES = [LONG, "Paris is the capital of France.", LONG[:300], ""]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("nli")
    return {
        "bert3": tiny_hf.tiny_classifier(root / "bert3", tiny_hf.NLI3_SHUFFLED, seed=1),
        "roberta2": tiny_hf.tiny_classifier(root / "roberta2", tiny_hf.NLI2, arch="roberta", seed=2),
        "generic": tiny_hf.tiny_classifier(root / "generic", {0: "LABEL_0", 1: "LABEL_1"}, seed=3),
    }


def reference(path, claims, evidences, index, window):
    """Straight transformers: one pair at a time, P(class index) after evidence-only truncation."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    out = []
    for c, e in zip(claims, evidences):
        enc = tok([e], [c], truncation="only_first", max_length=window, return_tensors="pt")
        with torch.no_grad():
            out.append(torch.softmax(model(**enc).logits, -1)[0, index].item())
    return np.array(out)


def test_entailment_index_from_config():
    class Cfg:
        def __init__(self, labels):
            self.id2label = labels

    assert entailment_index(Cfg(tiny_hf.NLI3), "x") == (0, "ENTAILMENT")
    assert entailment_index(Cfg(tiny_hf.NLI3_SHUFFLED), "x") == (2, "entailment")
    assert entailment_index(Cfg(tiny_hf.NLI2), "x") == (0, "entailment")  # not_entailment is the other class
    assert entailment_index(Cfg({0: "not_entailment", 1: "Entails"}), "x") == (1, "Entails")
    with pytest.raises(ModelConfigError, match="cannot tell the entailment class"):
        entailment_index(Cfg({0: "LABEL_0", 1: "LABEL_1"}), "x")


def test_three_way_head_uses_config_index(models):
    s = get_scorer("nli-mnli", path=models["bert3"])
    assert s.clf.head.index == 2 and s.clf.window == 128 and "3way" in s.signature
    b = s.score(CLAIMS, EVIDENCES)
    np.testing.assert_allclose(b.scores, reference(models["bert3"], CLAIMS, EVIDENCES, 2, 128), atol=1e-5)
    assert np.all((b.scores >= 0) & (b.scores <= 1))


def test_two_way_roberta_head(models):
    s = get_scorer("nli-fever", path=models["roberta2"])
    assert s.clf.head.index == 0 and s.clf.window == 128  # 130 positions minus RoBERTa's offset of 2
    b = s.score(CLAIMS, EVIDENCES)
    np.testing.assert_allclose(b.scores, reference(models["roberta2"], CLAIMS, EVIDENCES, 0, 128), atol=1e-5)
    assert np.all((b.scores >= 0) & (b.scores <= 1))


def test_model_without_entailment_label_is_a_clear_error(models):
    with pytest.raises(ModelConfigError, match="id2label"):
        get_scorer("nli-mnli", path=models["generic"])


def test_truncation_counts_are_exact(models):
    s = get_scorer("nli-mnli", path=models["bert3"])
    tok = tiny_hf.minilm_tokenizer()
    b = s.score(CLAIMS, EVIDENCES)
    n_ev = np.array([len(tok(e, add_special_tokens=False)["input_ids"]) for e in EVIDENCES])
    n_cl = np.array([len(tok(c, add_special_tokens=False)["input_ids"]) for c in CLAIMS])
    expected_cut = np.maximum(n_ev - (128 - 3 - n_cl), 0)
    assert expected_cut[0] > 0 and expected_cut[1] == 0
    np.testing.assert_array_equal(b.truncated_tokens, expected_cut)
    np.testing.assert_array_equal(b.input_tokens, n_ev)
    np.testing.assert_array_equal(b.chunks, 1)


def test_chunk_mode_is_max_over_window_scores(models):
    chunked = get_scorer("nli-mnli", path=models["bert3"], mode="chunk")
    plain = get_scorer("nli-mnli", path=models["bert3"])
    assert chunked.signature != plain.signature
    b = chunked.score(CLAIMS, EVIDENCES)
    windows = chunked.windows(CLAIMS, EVIDENCES)
    assert b.chunks.tolist() == [len(w) for w in windows] and b.chunks[0] > 1
    for i, wins in enumerate(windows):
        per_window = plain.score([CLAIMS[i]] * len(wins), list(wins))
        assert per_window.truncated_tokens.sum() == 0  # every window fits beside its claim
        assert b.scores[i] == pytest.approx(per_window.scores.max(), abs=1e-5)  # fp32 padding noise
    assert b.truncated_tokens.sum() == 0


def test_claim_filling_the_window_is_a_reported_failure(models):
    s = get_scorer("nli-mnli", path=models["bert3"])
    b = s.score(["word " * 200, "ok"], ["evidence", "evidence"])
    assert np.isnan(b.scores[0]) and "leaves no room for evidence" in b.failures[0]
    assert b.failures[1] is None and np.isfinite(b.scores[1])


def test_identical_inputs_identical_cached_scores(models, tmp_path):
    s = get_scorer("nli-mnli", path=models["bert3"])
    claims, evs = CLAIMS + CLAIMS[:2], EVIDENCES + EVIDENCES[:2]
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        first, st1 = score_pairs(s, claims, evs, cache=cache, quiet=True)
        second, st2 = score_pairs(s, claims, evs, cache=cache, quiet=True)
    assert st1.n_unique == 4 and st1.n_scored == 4
    assert st2.n_cached == 4 and st2.n_scored == 0
    np.testing.assert_array_equal(first.scores, second.scores)
    np.testing.assert_array_equal(first.truncated_tokens, second.truncated_tokens)
    assert first.scores[4] == first.scores[0]


def test_absent_weights_one_line_and_audit_runs_the_rest(monkeypatch, tmp_path):
    monkeypatch.delenv("ATTRIB_AUDIT_NLI_MNLI", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    ok, where = registry()["nli-mnli"].check()
    assert not ok and "roberta-large-mnli" in where
    with pytest.raises(ScorerUnavailable) as exc:
        get_scorer("nli-mnli")
    assert "\n" not in str(exc.value) and "hf download roberta-large-mnli" in str(exc.value)
    lines = []
    table = load_demo()
    res = run_audit(table, AuditConfig(scorers=("lexical", "nli-mnli"), n_boot=20,
                                       cache_path=str(tmp_path / "c.sqlite"), quiet=True), log=lines.append)
    assert [u.scorer for u in res.results.unavailable] == ["nli-mnli"]
    assert len(lines) == 1 and lines[0].startswith("[skip] nli-mnli:") and "\n" not in lines[0]
    assert list(res.scores) == ["lexical"]


def test_models_list_resolves_env_var(models, monkeypatch):
    monkeypatch.setenv("ATTRIB_AUDIT_NLI_FEVER", models["roberta2"])
    ok, where = registry()["nli-fever"].check()
    assert ok and where == f"env:ATTRIB_AUDIT_NLI_FEVER: {models['roberta2']}"


def test_cli_audit_end_to_end(models, tmp_path, capsys):
    demo = load_demo()
    rows = list(demo.records())[::10]
    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join(json.dumps(r.__dict__) for r in rows))
    out = tmp_path / "out"
    rc = main(["audit", str(data), "--scorers", "nli-mnli", "--model-path", f"nli-mnli={models['bert3']}",
               "--cache", str(tmp_path / "c.sqlite"), "--out", str(out), "--n-boot", "50", "--quiet"])
    assert rc == 0
    res = json.loads((out / "results.json").read_text())
    assert res["unavailable"] == [] and {r["scorer"] for r in res["auroc"]} == {"nli-mnli"}
    tok = tiny_hf.minilm_tokenizer()
    for t in res["truncation"]:
        sl = [r for r in rows if r.dataset == t["slice"]]
        n_ev = np.array([len(tok(r.evidence, add_special_tokens=False)["input_ids"]) for r in sl])
        n_cl = np.array([len(tok(r.claim, add_special_tokens=False)["input_ids"]) for r in sl])
        cut = np.maximum(n_ev - (128 - 3 - n_cl), 0)
        assert t["pairs_truncated"] == int((cut > 0).sum())
        assert t["share_tokens_cut"] == pytest.approx(cut.sum() / n_ev.sum())
    assert any(t["pairs_truncated"] for t in res["truncation"])
    rc = main(["audit", str(data), "--scorers", "nli-mnli", "--model-path", f"nli-mnli={models['bert3']}",
               "--scorer-opt", "nli-mnli.mode=chunk", "--cache", str(tmp_path / "c.sqlite"),
               "--out", str(out), "--n-boot", "50", "--quiet"])
    res = json.loads((out / "results.json").read_text())
    assert all(t["pairs_truncated"] == 0 for t in res["truncation"])
    assert max(t["mean_chunks"] for t in res["truncation"]) > 1


def test_models_install_says_pypi_ships_no_nli_weights(capsys):
    assert main(["models", "install", "nli-mnli"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and re.search("PyPI ships no weights for 'nli-mnli'.*hf download roberta-large-mnli", err)
    assert main(["models", "list"]) == 0
    listing = capsys.readouterr().out
    for name in ("nli-mnli", "nli-fever", "minicheck", "cross-encoder"):
        assert name in listing
