"""MiniCheck (tiny T5 and encoder paths) and the CrossEncoder scorer against straight transformers."""
import numpy as np
import pytest
import torch

import tiny_hf
from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.scorers import ScorerUnavailable, get_scorer
from attrib_audit.scorers.hfmodels import torch_device
from attrib_audit.text.chunk import word_windows

LONG = " ".join(f"Paragraph sentence {i} mentions a river, a bridge and a town." for i in range(120))
CLAIMS = ["The bridge crosses the river.", "A town exists.", "Nothing."]
EVIDENCES = [LONG, "The town has a bridge over the river.", ""]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("mc")
    return {
        "t5": tiny_hf.tiny_t5(root / "t5", seed=4),
        "enc": tiny_hf.tiny_classifier(root / "enc", {0: "LABEL_0", 1: "LABEL_1"}, arch="roberta", seed=5),
        "ce": tiny_hf.tiny_cross_encoder(root / "ce", seed=6),
    }


def t5_reference(path, claim, chunk):
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    tok = AutoTokenizer.from_pretrained(path)
    model = T5ForConditionalGeneration.from_pretrained(path).eval()
    neg, pos = tok("0", add_special_tokens=False)["input_ids"][0], tok("1", add_special_tokens=False)["input_ids"][0]
    enc = tok(["predict: " + chunk], [claim], return_tensors="pt")
    enc.pop("token_type_ids", None)
    with torch.no_grad():
        logits = model(**enc, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits[0, 0]
    return torch.softmax(logits[[neg, pos]], -1)[1].item()


def test_minicheck_t5_first_step_label_tokens_and_chunk_max(models):
    s = get_scorer("minicheck", path=models["t5"])
    tok = tiny_hf.minilm_tokenizer()
    assert s.clf.head.kind == "seq2seq" and s.clf.window == 2048  # relative positions: the full window
    assert s.clf.head.token_ids == (tok("0", add_special_tokens=False)["input_ids"][0],
                                    tok("1", add_special_tokens=False)["input_ids"][0])
    b = s.score(CLAIMS, EVIDENCES)
    chunks = [word_windows(e, 400) for e in EVIDENCES]
    assert b.chunks.tolist() == [len(c) for c in chunks] == [4, 1, 1]
    for i, wins in enumerate(chunks):
        expected = max(t5_reference(models["t5"], CLAIMS[i], w) for w in wins)
        assert b.scores[i] == pytest.approx(expected, abs=1e-5)
    assert np.all((b.scores >= 0) & (b.scores <= 1)) and b.truncated_tokens.sum() == 0


def test_minicheck_encoder_generic_head_is_class_1_and_window_capped(models):
    s = get_scorer("minicheck", path=models["enc"])
    assert s.clf.head.kind == "seqcls" and s.clf.head.index == 1
    assert s.clf.window == 128  # absolute positions cap the requested 2048
    b = s.score(CLAIMS, EVIDENCES)
    assert b.truncated_tokens[0] > 0  # 400-word chunks do not fit 128 tokens: counted, not hidden
    assert np.all((b.scores >= 0) & (b.scores <= 1))


def test_cross_encoder_sigmoid_of_logit_and_exact_cut(models, tmp_path):
    from transformers import AutoModelForSequenceClassification

    s = get_scorer("cross-encoder", path=models["ce"])
    b = s.score(CLAIMS, EVIDENCES)
    tok = tiny_hf.minilm_tokenizer()
    model = AutoModelForSequenceClassification.from_pretrained(models["ce"]).eval()
    for i, (c, e) in enumerate(zip(CLAIMS, EVIDENCES)):
        enc = tok([c], [e], truncation="only_second", max_length=128, return_tensors="pt")  # lists: keep an empty pair
        with torch.no_grad():
            expected = torch.sigmoid(model(**enc).logits[0, 0]).item()
        assert b.scores[i] == pytest.approx(expected, abs=1e-5)
        n_ev, n_cl = (len(tok(x, add_special_tokens=False)["input_ids"]) for x in (e, c))
        assert b.truncated_tokens[i] == max(n_ev - (128 - 3 - n_cl), 0)
        assert b.input_tokens[i] == n_ev
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        first, _ = score_pairs(s, CLAIMS, EVIDENCES, cache=cache, quiet=True)
        again, st = score_pairs(s, CLAIMS, EVIDENCES, cache=cache, quiet=True)
    assert st.n_cached == 3 and np.array_equal(first.scores, again.scores)


def test_unavailable_device_is_one_line(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a machine without CUDA, on every machine
    with pytest.raises(ScorerUnavailable, match="no CUDA device"):
        torch_device("cuda", "nli-mnli")
    with pytest.raises(ScorerUnavailable, match="unknown device"):
        torch_device("tpu", "nli-mnli")
