"""MiniCheck and the cross-encoder, pinned to their authors' recipes on tiny models of the real families.

Each model is the real config.json (tests/data/hf_configs) shrunk, randomly initialised, with a tiny tokenizer
of the real family built here (tests/tiny_tokenizers.py). The tests compare the exact token sequence each
scorer feeds the model with the sequence the official recipe builds, and the chunk boundaries with the
official chunking rule on a long multi-paragraph text. The official side splits sentences with NLTK's own
Punkt (tests/nltk_official.py), as the authors' `sent_tokenize` does, never with attrib-audit's code.
"""
import numpy as np
import pytest
import torch

import tiny_hf
import tiny_tokenizers as tt
from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.scorers import ScorerUnavailable, get_scorer
from attrib_audit.scorers.hfmodels import torch_device
from nltk_official import nltk_sent_tokenize

CLAIM = "The cat sat on the mat."
EVIDENCE = "Paris is the capital of France. The cat sat on the mat."
SENTENCE = ("The cat sat on the mat near the river bridge "
            + "the cat sat on the mat near the river bridge " * 5).strip() + "."
PARAGRAPH = " ".join([SENTENCE] * 4)  # 4 sentences of 60 words
LONG = "\n\n".join([PARAGRAPH] * 4) + "\nThe " + "the " * 598 + "mat."  # + one 600-word sentence


def official_minicheck_chunks(doc, size, count, sent_tokenize):
    """Liyan06/MiniCheck minicheck/inference.py, `sent_tokenize_with_newlines` + `chunks` + the strip/filter,
    restated, with NLTK's `sent_tokenize` as the authors call it."""
    sents = []
    for block in doc.split("\n"):
        sents.extend(sent_tokenize(block))
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
def sent_tokenize(tmp_path_factory):
    return nltk_sent_tokenize(tmp_path_factory.mktemp("nltk_data"))


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


def test_minicheck_t5_chunks_500_words_on_newline_blocks_and_sentences(models, sent_tokenize):
    """Defect 3: 500-word chunks for Flan-T5, packed from newline blocks and sentences; a sentence is never split."""
    s = get_scorer("minicheck", path=models["t5"])
    chunks = s.chunks(LONG)
    assert chunks == official_minicheck_chunks(LONG, 500, lambda x: len(x.split()), sent_tokenize)
    assert [len(c.split()) for c in chunks] == [480, 480, 600]  # two paragraphs a chunk; the long sentence whole
    assert chunks[0].count("\n\n") == 1 and chunks[2].endswith("the mat.")
    seen = tiny_hf.record_inputs(s.clf.model)
    b = s.score([CLAIM], [LONG])
    assert b.chunks.tolist() == [3] and len(seen) == 3 and b.truncated_tokens[0] == 0


def test_minicheck_encoder_chunks_400_tokens_counted_by_its_tokenizer(models, sent_tokenize):
    s = get_scorer("minicheck", path=models["roberta"])
    tok = s.clf.tokenizer
    count = lambda x: len(tok(x, add_special_tokens=False, max_length=512, truncation=True)["input_ids"])  # noqa: E731
    chunks = s.chunks(LONG)
    official = official_minicheck_chunks(LONG, 400, count, sent_tokenize)
    assert chunks == official
    per_sentence = count(SENTENCE)
    assert all(count(c) <= 400 or len(sent_tokenize(c)) == 1 for c in chunks)
    assert len(chunks) == len(official) > 3 and per_sentence * 2 < 400


def test_minicheck_cut_is_evidence_side_and_counted(models):
    s = get_scorer("minicheck", path=models["roberta"], chunk_size=2000)  # one chunk over the 512-token window
    seen = tiny_hf.record_inputs(s.clf.model)
    b = s.score([CLAIM], [PARAGRAPH * 3])
    tok = s.clf.tokenizer
    claim_part = tok(CLAIM, add_special_tokens=False)["input_ids"]
    assert len(seen[0]) == 512 and seen[0][-len(claim_part) - 1:-1] == claim_part  # the claim survives whole
    full = len(tok(PARAGRAPH * 3, add_special_tokens=False)["input_ids"])
    assert b.truncated_tokens[0] == full + len(claim_part) + 3 - 512


# evidence where the authors' splitter (Punkt) and our rule splitter part ways (tests/test_punkt.py, CASES)
SPLIT_CASES = {
    "quote": 'He said "The cat sat on the mat." Then he left.',
    "U.S.": "The U.S. Army left the base. It rained.",
    "Dr./Gen.": "Dr. Smith met Gen. Lee at the base. It rained.",
    "bullets": "- The cat sat on the mat\n- Paris is the capital of France",
    "blank line": "The cat sat on the mat\n\nParis is the capital of France",
    "lowercase": "It rained on the bridge. then it stopped near the town.",
}


@pytest.mark.parametrize("family", ["roberta", "deberta", "t5"])
@pytest.mark.parametrize("case", list(SPLIT_CASES))
def test_minicheck_feeds_the_authors_chunks_token_for_token(models, sent_tokenize, family, case):
    """Small chunks (6 tokens / 3 words) make every sentence boundary show in what the model is fed: each input
    must be the official `chunk + eos + claim` with chunks from NLTK's sent_tokenize, token for token."""
    t5 = family == "t5"
    s = get_scorer("minicheck", path=models[family], chunk_size=3 if t5 else 6)
    tok = s.clf.tokenizer
    count = ((lambda x: len(x.split())) if t5 else
             (lambda x: len(tok(x, add_special_tokens=False, max_length=s.window, truncation=True)["input_ids"])))
    evidence = SPLIT_CASES[case]
    chunks = official_minicheck_chunks(evidence, s.chunk_size, count, sent_tokenize)
    seen = tiny_hf.record_inputs(s.clf.model)
    s.score([CLAIM], [evidence])
    official = [tok(("predict: " if t5 else "") + c + tok.eos_token + CLAIM)["input_ids"] for c in chunks]
    assert sorted(seen) == sorted(official) and s.chunks(evidence) == chunks


def test_minicheck_roberta_keeps_the_quote_and_us_whole(models):
    """The two token sequences the old splitter got wrong: the quote after `mat.` was dropped, and `The U.S.`
    was a chunk of its own once chunks were small."""
    s = get_scorer("minicheck", path=models["roberta"])
    seen = tiny_hf.record_inputs(s.clf.model)
    s.score(["He left."], [SPLIT_CASES["quote"]])
    assert tokens(s, seen[0]) == ["<s>", "H", "e", "Ġs", "a", "i", "d", "Ġ", '"', "The", "Ġcat", "Ġsat", "Ġon", "Ġthe",
                                  "Ġmat", ".", '"', "Ġ", "The", "n", "Ġ", "he", "Ġ", "l", "e", "f", "t", ".", "</s>",
                                  "H", "e", "Ġ", "l", "e", "f", "t", ".", "</s>"]  # the quote after `mat.` is kept
    small = get_scorer("minicheck", path=models["roberta"], chunk_size=6)
    assert small.chunks(SPLIT_CASES["U.S."]) == ["The U.S. Army left the base.", "It rained."]


def test_minicheck_recipe_names_punkt_and_its_signature_carries_the_versions(models):
    from attrib_audit.scorers.fingerprint import library_versions
    from attrib_audit.text.punkt import PUNKT, PUNKT_PACKAGES

    s = get_scorer("minicheck", path=models["roberta"])
    assert s.recipe.sentences == PUNKT and library_versions(*PUNKT_PACKAGES) in s.signature


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


def test_float32_by_default_even_for_a_checkpoint_saved_in_float16(models, tmp_path):
    """transformers would load a float16 checkpoint in float16 ("auto"); the scorers load float32 unless asked."""
    import shutil

    from transformers import AutoModelForSequenceClassification

    half = tmp_path / "rob16"
    shutil.copytree(models["roberta"], half)
    AutoModelForSequenceClassification.from_pretrained(models["roberta"]).half().save_pretrained(half)
    s = get_scorer("minicheck", path=str(half))
    assert {p.dtype for p in s.clf.model.parameters()} == {torch.float32} and s.recipe.precision == "float32"
    h = get_scorer("minicheck", path=str(half), dtype="bfloat16")
    assert {p.dtype for p in h.clf.model.parameters()} == {torch.bfloat16} and h.signature != s.signature
    for name, path in (("nli-mnli", models["ce_nli"]), ("cross-encoder", models["ce"])):
        default, f16 = get_scorer(name, path=path), get_scorer(name, path=path, dtype="float16")
        model = (lambda x: x.model.model) if name == "cross-encoder" else (lambda x: x.clf.model)
        assert {p.dtype for p in model(default).parameters()} == {torch.float32}
        assert {p.dtype for p in model(f16).parameters()} == {torch.float16}
        assert default.recipe.precision == "float32" and default.signature != f16.signature


def test_minicheck_t5_keeps_wo_in_float32_under_float16(models):
    s = get_scorer("minicheck", path=models["t5"], dtype="float16")
    dtypes = {n: p.dtype for n, p in s.clf.model.named_parameters()}
    assert any(n.endswith(".wo.weight") for n in dtypes)
    assert all((d == torch.float32) == n.endswith(".wo.weight") for n, d in dtypes.items())


def test_unknown_dtype_is_one_line(models):
    from attrib_audit.scorers.base import ScorerOptionError

    for name in ("minicheck", "nli-mnli", "cross-encoder"):
        msg = f"{name}: dtype must be one of float32, float16, bfloat16, got 'half'"
        with pytest.raises(ScorerOptionError, match=msg):
            get_scorer(name, path=models["ce_nli"], dtype="half")
