"""MiniCheck and the cross-encoder, pinned to their authors' recipes on tiny models of the real families.

Each model is the real config.json (tests/data/hf_configs) shrunk, randomly initialised, with a tiny tokenizer
of the real family built here (tests/tiny_tokenizers.py). The tests compare the exact token sequence each
scorer feeds the model with the sequence the official recipe builds, and the chunk boundaries with the
official chunking rule on a long multi-paragraph text.
"""
import numpy as np
import pytest
import torch

import tiny_hf
import tiny_tokenizers as tt
from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.scorers import ScorerUnavailable, get_scorer
from attrib_audit.scorers.hfmodels import torch_device
from attrib_audit.text.sentences import split_sentences

CLAIM = "The cat sat on the mat."
EVIDENCE = "Paris is the capital of France. The cat sat on the mat."
SENTENCE = ("The cat sat on the mat near the river bridge "
            + "the cat sat on the mat near the river bridge " * 5).strip() + "."
PARAGRAPH = " ".join([SENTENCE] * 4)  # 4 sentences of 60 words
LONG = "\n\n".join([PARAGRAPH] * 4) + "\nThe " + "the " * 598 + "mat."  # + one 600-word sentence


def official_minicheck_chunks(doc, size, count):
    """Liyan06/MiniCheck minicheck/inference.py, `sent_tokenize_with_newlines` + `chunks` + the strip/filter,
    restated (with our offline sentence splitter standing in for NLTK's sent_tokenize)."""
    sents = []
    for block in doc.split("\n"):
        sents.extend(split_sentences(block))
        sents.append("\n")
    sents = sents[:-1] or [""]
    out, cur, n = [], [], 0
    for s in sents:
        c = count(s)
        if n + c > size:
            out.append(" ".join(cur))
            cur, n = [s], c
        else:
            cur.append(s)
            n += c
    if cur:
        out.append(" ".join(cur))
    return [c for c in (x.replace(" \n ", "\n").strip() for x in out) if c]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("mc")
    rob, deb = tt.roberta_bpe(root / "tok_rob"), tt.deberta_unigram(root / "tok_deb")
    t5 = tt.t5_unigram(root / "tok_t5")
    return {
        "t5": tiny_hf.tiny_from_config(root / "t5", "lytang_MiniCheck-Flan-T5-Large", t5, seed=4),
        "roberta": tiny_hf.tiny_from_config(root / "rob", "lytang_MiniCheck-RoBERTa-Large", rob, seed=5),
        "deberta": tiny_hf.tiny_from_config(root / "deb", "lytang_MiniCheck-DeBERTa-v3-Large", deb, seed=6),
        "ce_nli": tiny_hf.tiny_from_config(root / "ce_nli", "cross-encoder_nli-deberta-v3-base", deb, seed=7),
        "ce": tiny_hf.tiny_cross_encoder(root / "ce", seed=6),
    }


def tokens(scorer, ids):
    return scorer.clf.tokenizer.convert_ids_to_tokens(ids)


def test_minicheck_roberta_loads_0_1_head_and_feeds_doc_eos_claim(models):
    """Defect 2: MiniCheck-RoBERTa-Large's id2label {"0": "0", "1": "1"} loads, class 1 is read, and the input is
    the single text `doc + eos + claim` (one </s> between), not the pair template (`</s></s>`)."""
    s = get_scorer("minicheck", path=models["roberta"])
    assert (s.clf.head.kind, s.clf.head.index, s.window, s.chunk_size) == ("seqcls", 1, 512, 400)
    seen = tiny_hf.record_inputs(s.clf.model)
    b = s.score([CLAIM], [EVIDENCE])
    tok = s.clf.tokenizer
    official = tok(EVIDENCE + tok.eos_token + CLAIM)["input_ids"]  # minicheck/inference.py batch_tokenize
    assert seen == [official]
    assert official == [0, 398, 355, 264, 385, 333, 273, 279, 359, 384, 18, 225, 270, 301, 380, 377, 264, 299, 18, 2,
                        270, 301, 380, 377, 264, 299, 18, 2]
    assert tokens(s, official) == ["<s>", "Paris", "Ġis", "Ġthe", "Ġcap", "it", "al", "Ġof", "ĠFr", "ance", ".", "Ġ",
                                   "The", "Ġcat", "Ġsat", "Ġon", "Ġthe", "Ġmat", ".", "</s>", "The", "Ġcat", "Ġsat",
                                   "Ġon", "Ġthe", "Ġmat", ".", "</s>"]  # one </s> between, not the pair's </s></s>
    with torch.no_grad():
        expected = torch.softmax(s.clf.model(input_ids=torch.tensor([official])).logits, -1)[0, 1].item()
    assert b.scores[0] == pytest.approx(expected, abs=1e-6)


def test_minicheck_deberta_feeds_cls_doc_sep_claim_sep_with_2048_window(models):
    s = get_scorer("minicheck", path=models["deberta"])
    assert (s.clf.head.index, s.window, s.chunk_size) == (1, 2048, 400)  # relative positions: the authors' 2048
    seen = tiny_hf.record_inputs(s.clf.model)
    s.score([CLAIM], [EVIDENCE])
    tok = s.clf.tokenizer
    official = tok(EVIDENCE + tok.eos_token + CLAIM)["input_ids"]
    assert seen == [official]
    assert official == [1, 10, 36, 54, 20, 40, 9, 68, 12, 21, 47, 41, 54, 38, 68, 2, 12, 21, 47, 41, 54, 38, 68, 2]
    assert tokens(s, official) == ["[CLS]", "▁Paris", "▁is", "▁the", "▁capital", "▁of", "▁France", ".", "▁The", "▁cat",
                                   "▁sat", "▁on", "▁the", "▁mat", ".", "[SEP]", "▁The", "▁cat", "▁sat", "▁on", "▁the",
                                   "▁mat", ".", "[SEP]"]


def test_minicheck_t5_predict_prefix_eos_claim_and_label_tokens_3_209(models):
    s = get_scorer("minicheck", path=models["t5"])
    assert s.clf.head.kind == "seq2seq" and s.clf.head.token_ids == (3, 209) and s.window == 2048
    assert s.chunk_size == 500  # Flan-T5 chunks are 500 words (minicheck.py), not 400
    seen = tiny_hf.record_inputs(s.clf.model)
    b = s.score([CLAIM], [EVIDENCE])
    tok = s.clf.tokenizer
    official = tok("predict: " + EVIDENCE + tok.eos_token + CLAIM)["input_ids"]
    assert seen == [official]
    assert official == [193, 124, 111, 110, 115, 109, 126, 78, 9, 35, 53, 19, 39, 8, 67, 11, 20, 46, 40, 53, 37, 67, 1,
                        11, 20, 46, 40, 53, 37, 67, 1]
    assert tokens(s, official) == ["▁p", "r", "e", "d", "i", "c", "t", ":", "▁Paris", "▁is", "▁the", "▁capital", "▁of",
                                   "▁France", ".", "▁The", "▁cat", "▁sat", "▁on", "▁the", "▁mat", ".", "</s>", "▁The",
                                   "▁cat", "▁sat", "▁on", "▁the", "▁mat", ".", "</s>"]
    with torch.no_grad():
        logits = s.clf.model(input_ids=torch.tensor([official]),
                             decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits
    assert b.scores[0] == pytest.approx(torch.softmax(logits[0, 0, [3, 209]], -1)[1].item(), abs=1e-6)


def test_minicheck_t5_chunks_500_words_on_newline_blocks_and_sentences(models):
    """Defect 3: 500-word chunks for Flan-T5, packed from newline blocks and sentences; a sentence is never split."""
    s = get_scorer("minicheck", path=models["t5"])
    chunks = s.chunks(LONG)
    assert chunks == official_minicheck_chunks(LONG, 500, lambda x: len(x.split()))
    assert [len(c.split()) for c in chunks] == [480, 480, 600]  # two paragraphs a chunk; the long sentence whole
    assert chunks[0].count("\n\n") == 1 and chunks[2].endswith("the mat.")
    seen = tiny_hf.record_inputs(s.clf.model)
    b = s.score([CLAIM], [LONG])
    assert b.chunks.tolist() == [3] and len(seen) == 3 and b.truncated_tokens[0] == 0


def test_minicheck_encoder_chunks_400_tokens_counted_by_its_tokenizer(models):
    s = get_scorer("minicheck", path=models["roberta"])
    tok = s.clf.tokenizer
    count = lambda x: len(tok(x, add_special_tokens=False, max_length=512, truncation=True)["input_ids"])  # noqa: E731
    chunks = s.chunks(LONG)
    assert chunks == official_minicheck_chunks(LONG, 400, count)
    per_sentence = count(SENTENCE)
    assert all(count(c) <= 400 or len(split_sentences(c)) == 1 for c in chunks)
    assert len(chunks) == len(official_minicheck_chunks(LONG, 400, count)) > 3 and per_sentence * 2 < 400


def test_minicheck_cut_is_evidence_side_and_counted(models):
    s = get_scorer("minicheck", path=models["roberta"], chunk_size=2000)  # one chunk over the 512-token window
    seen = tiny_hf.record_inputs(s.clf.model)
    b = s.score([CLAIM], [PARAGRAPH * 3])
    tok = s.clf.tokenizer
    claim_part = tok(CLAIM, add_special_tokens=False)["input_ids"]
    assert len(seen[0]) == 512 and seen[0][-len(claim_part) - 1:-1] == claim_part  # the claim survives whole
    full = len(tok(PARAGRAPH * 3, add_special_tokens=False)["input_ids"])
    assert b.truncated_tokens[0] == full + len(claim_part) + 3 - 512


def test_recipe_change_changes_the_signature(models):
    a = get_scorer("minicheck", path=models["t5"])
    b = get_scorer("minicheck", path=models["t5"], chunk_size=400)
    assert a.signature != b.signature and a.recipe.digest() in a.signature
    assert a.recipe.chunk_unit == "words" and a.recipe.aggregation == "max over chunks"


def test_cross_encoder_nli_head_reads_premise_evidence_first(models):
    """Defect 1: an NLI cross-encoder reads (premise = evidence, hypothesis = claim); the evidence is cut."""
    s = get_scorer("cross-encoder", path=models["ce_nli"])
    assert s.nli and s.index == 1  # cross-encoder/nli-deberta-v3: contradiction, entailment, neutral
    seen = tiny_hf.record_inputs(s.model.model)
    b = s.score([CLAIM], [EVIDENCE])
    tok = s.tokenizer
    assert seen == [tok(EVIDENCE, CLAIM)["input_ids"]]
    assert tok.convert_ids_to_tokens(seen[0])[:3] == ["[CLS]", "▁Paris", "▁is"]
    long = " ".join([EVIDENCE] * 80)
    cut = s.score([CLAIM], [long])
    n_ev = len(tok(long, add_special_tokens=False)["input_ids"])
    assert cut.truncated_tokens[0] == n_ev + len(tok(CLAIM, add_special_tokens=False)["input_ids"]) + 3 - s.window
    assert 0 <= b.scores[0] <= 1


def test_cross_encoder_relevance_head_keeps_query_claim_first_and_nli_option(models):
    s = get_scorer("cross-encoder", path=models["ce"])
    seen = tiny_hf.record_inputs(s.model.model)
    s.score([CLAIM], [EVIDENCE])
    assert seen == [s.tokenizer(CLAIM, EVIDENCE)["input_ids"]]
    hhem1 = get_scorer("cross-encoder", path=models["ce"], input="nli")  # a one-logit NLI model (HHEM-1.0)
    seen = tiny_hf.record_inputs(hhem1.model.model)
    hhem1.score([CLAIM], [EVIDENCE])
    assert seen == [s.tokenizer(EVIDENCE, CLAIM)["input_ids"]] and hhem1.signature != s.signature


def test_cross_encoder_sigmoid_of_logit_and_exact_cut(models, tmp_path):
    from transformers import AutoModelForSequenceClassification

    claims = ["The bridge crosses the river.", "A town exists.", "Nothing."]
    long = " ".join(f"Paragraph sentence {i} mentions a river, a bridge and a town." for i in range(120))
    evidences = [long, "The town has a bridge over the river.", ""]
    s = get_scorer("cross-encoder", path=models["ce"])
    b = s.score(claims, evidences)
    tok = tiny_hf.minilm_tokenizer()
    model = AutoModelForSequenceClassification.from_pretrained(models["ce"]).eval()
    for i, (c, e) in enumerate(zip(claims, evidences)):
        enc = tok([c], [e], truncation="only_second", max_length=128, return_tensors="pt")  # lists: keep an empty pair
        with torch.no_grad():
            expected = torch.sigmoid(model(**enc).logits[0, 0]).item()
        assert b.scores[i] == pytest.approx(expected, abs=1e-5)
        n_ev, n_cl = (len(tok(x, add_special_tokens=False)["input_ids"]) for x in (e, c))
        assert b.truncated_tokens[i] == max(n_ev - (128 - 3 - n_cl), 0)
        assert b.input_tokens[i] == n_ev
    with ScoreCache(tmp_path / "c.sqlite") as cache:
        first, _ = score_pairs(s, claims, evidences, cache=cache, quiet=True)
        again, st = score_pairs(s, claims, evidences, cache=cache, quiet=True)
    assert st.n_cached == 3 and np.array_equal(first.scores, again.scores)


def test_unavailable_device_is_one_line(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a machine without CUDA, on every machine
    with pytest.raises(ScorerUnavailable, match="no CUDA device"):
        torch_device("cuda", "nli-mnli")
    with pytest.raises(ScorerUnavailable, match="unknown device"):
        torch_device("tpu", "nli-mnli")
