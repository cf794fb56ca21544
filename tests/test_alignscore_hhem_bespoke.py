"""AlignScore, HHEM-2.1-Open and Bespoke-MiniCheck-7B on tiny stand-ins built like the released checkpoints.

AlignScore: a Lightning-style .ckpt (`state_dict` with base_model.*, bin/tri/reg_layer, mlm_head.*, plus
hyper-parameters) beside a RoBERTa config and tokenizer. HHEM: model.safetensors with `t5.*` weights of a
T5ForTokenClassification and a config.json naming its foundation and prompt. Bespoke: a tiny causal LM
with a chat template in the InternLM2 `<|im_start|>` form (the real one runs custom code, checked apart).
The official side splits sentences with NLTK's own Punkt (tests/nltk_official.py), as the authors'
`sent_tokenize` does, never with attrib-audit's code.
"""
import json

import numpy as np
import pytest
import torch

import tiny_hf
import tiny_tokenizers as tt
from attrib_audit.scorers import get_scorer
from attrib_audit.scorers.base import ScorerLoadError, ScorerOptionError
from attrib_audit.scorers.bespoke import SYSTEM_PROMPT
from attrib_audit.scorers.hhem import PROMPT
from attrib_audit.text.chunk import alignscore_chunks
from nltk_official import nltk_sent_tokenize

CLAIM = "The cat sat on the mat. Paris is the capital of France."
SENTENCE = "The cat sat on the mat near the river bridge and the town."
EVIDENCE = " ".join([SENTENCE] * 60)  # 60 sentences, 720 words


# where the authors' splitter (Punkt) and our rule splitter part ways (tests/test_punkt.py, CASES)
SPLIT_CASES = {
    "quote": 'He said "The cat sat on the mat." Then he left.',
    "U.S.": "The U.S. Army left the base. It rained.",
    "Dr./Gen.": "Dr. Smith met Gen. Lee at the base. It rained.",
    "bullets": "- The cat sat on the mat\n- Paris is the capital of France",
    "blank line": "The cat sat on the mat\n\nParis is the capital of France",
    "lowercase": "It rained on the bridge. then it stopped near the town.",
}


@pytest.fixture(scope="module")
def sent_tokenize(tmp_path_factory):
    return nltk_sent_tokenize(tmp_path_factory.mktemp("nltk_data"))


def official_alignscore_split(premise, hypo, sent_tokenize):
    """yuh-zha/AlignScore src/alignscore/inference.py, Inferencer.inference_per_example (nli_sp), restated:
    the premise chunks and the hypothesis sentences it pairs (every chunk with every sentence)."""
    premise_sents = sent_tokenize(premise) or [""]
    n_chunk = len(premise.strip().split()) // 350 + 1
    n_chunk = max(len(premise_sents) // n_chunk, 1)
    chunks = [" ".join(premise_sents[i:i + n_chunk]) for i in range(0, len(premise_sents), n_chunk)]
    return chunks, sent_tokenize(hypo)


def test_alignscore_chunks_follow_the_350_word_rule(sent_tokenize):
    # 720 words: n = 720 // 350 + 1 = 3 chunks of 60 // 3 = 20 sentences
    chunks = alignscore_chunks(EVIDENCE)
    assert [len(sent_tokenize(c)) for c in chunks] == [20, 20, 20]
    assert chunks == official_alignscore_split(EVIDENCE, CLAIM, sent_tokenize)[0]
    text = " ".join([SENTENCE] * 31)  # 372 words: n = 2, 31 // 2 = 15 sentences a chunk, the remainder last
    assert [len(sent_tokenize(c)) for c in alignscore_chunks(text)] == [15, 15, 1]
    assert alignscore_chunks("") == [""]


@pytest.fixture(scope="module")
def alignscore(tmp_path_factory):
    from transformers import AutoConfig, RobertaModel

    root = tmp_path_factory.mktemp("align")
    backbone = tiny_hf.tiny_from_config(root / "ckpt", "FacebookAI_roberta-large-mnli", tt.roberta_bpe(root / "tok"),
                                        architecture="RobertaModel")
    for f in (root / "ckpt").glob("*.safetensors"):
        f.unlink()  # the folder keeps only the backbone's config and tokenizer, as the install hint says
    torch.manual_seed(3)
    base = RobertaModel(AutoConfig.from_pretrained(backbone), add_pooling_layer=True)
    hidden = base.config.hidden_size
    state = {f"base_model.{k}": v for k, v in base.state_dict().items()}
    for name, out in (("bin_layer", 2), ("tri_layer", 3), ("reg_layer", 1)):
        layer = torch.nn.Linear(hidden, out)
        torch.nn.init.normal_(layer.weight, std=2.0)
        state.update({f"{name}.weight": layer.weight.detach(), f"{name}.bias": layer.bias.detach()})
    state["mlm_head.dense.weight"] = torch.zeros(hidden, hidden)
    torch.save({"epoch": 2, "global_step": 10, "pytorch-lightning_version": "1.7.7", "state_dict": state,
                "hyper_parameters": {"model": "roberta-large", "using_pretrained": True, "learning_rate": 1e-5}},
               root / "ckpt" / "AlignScore-large.ckpt")
    return root / "ckpt", base.eval(), state


def test_alignscore_pairs_chunk_sentence_and_max_then_mean(alignscore, sent_tokenize):
    folder, base, state = alignscore
    s = get_scorer("alignscore", path=str(folder))
    assert s.recipe.aggregation == "max over chunks, then mean over claim sentences" and s.clf.window == 512
    seen = tiny_hf.record_inputs(s.clf.model.base)
    b = s.score([CLAIM], [EVIDENCE])
    tok = s.clf.tokenizer
    chunks, sents = alignscore_chunks(EVIDENCE), sent_tokenize(CLAIM)
    expected_inputs = [tok(c, x, truncation="only_first", max_length=512)["input_ids"] for x in sents for c in chunks]
    assert sorted(seen) == sorted(expected_inputs) and len(seen) == 6
    tri = torch.nn.Linear(base.config.hidden_size, 3)
    tri.load_state_dict({"weight": state["tri_layer.weight"], "bias": state["tri_layer.bias"]})
    with torch.no_grad():
        per = [[torch.softmax(tri(base(input_ids=torch.tensor([ids])).pooler_output), -1)[0, 0].item()
                for ids in expected_inputs[k * 3:(k + 1) * 3]] for k in range(2)]
    assert b.scores[0] == pytest.approx(np.mean([max(p) for p in per]), abs=1e-5)
    assert b.chunks.tolist() == [3]


@pytest.mark.parametrize("case", list(SPLIT_CASES))
def test_alignscore_feeds_the_authors_pairs_token_for_token(alignscore, sent_tokenize, case):
    """Claim and evidence both split by NLTK's Punkt, as nli_sp does: `The U.S. Army` is one claim sentence, the
    bullets and the blank line do not split a claim, and an evidence chunk keeps its line breaks."""
    folder, _, _ = alignscore
    s = get_scorer("alignscore", path=str(folder))
    tok = s.clf.tokenizer
    text = SPLIT_CASES[case]
    evidence = text + " Paris is the capital of France."
    seen = tiny_hf.record_inputs(s.clf.model.base)
    s.score([text], [evidence])
    chunks, sentences = official_alignscore_split(evidence, text, sent_tokenize)
    official = [tok(c, h, truncation="only_first", max_length=512)["input_ids"] for c in chunks for h in sentences]
    assert sorted(seen) == sorted(official)


def test_alignscore_us_claim_is_one_sentence_and_bullets_keep_their_newline(alignscore):
    folder, _, _ = alignscore
    s = get_scorer("alignscore", path=str(folder))
    tok = s.clf.tokenizer
    seen = tiny_hf.record_inputs(s.clf.model.base)
    s.score([SPLIT_CASES["U.S."], SPLIT_CASES["bullets"]], ["The cat sat on the mat."] * 2)
    assert sorted("".join(tok.convert_ids_to_tokens(x)).replace("Ġ", " ") for x in seen) == [
        "<s>The cat sat on the mat.</s></s>- The cat sat on the matĊ- Paris is the capital of France</s>",
        "<s>The cat sat on the mat.</s></s>It rained.</s>",
        "<s>The cat sat on the mat.</s></s>The U.S. Army left the base.</s>"]  # 3 pairs, not 5


def test_alignscore_checkpoint_with_python_objects_is_refused_not_unpickled(alignscore, tmp_path):
    import argparse

    folder, _, state = alignscore
    bad = tmp_path / "bad.ckpt"
    torch.save({"state_dict": state, "hyper_parameters": argparse.Namespace(model="roberta-large")}, bad)
    with pytest.raises(ScorerLoadError) as exc:
        get_scorer("alignscore", path=str(bad))
    assert "refusing to unpickle" in str(exc.value) and "\n" not in str(exc.value)


@pytest.fixture(scope="module")
def hhem(tmp_path_factory):
    from safetensors.torch import save_file
    from transformers import AutoConfig, T5ForTokenClassification

    root = tmp_path_factory.mktemp("hhem")
    foundation = tiny_hf.tiny_from_config(root / "hhem" / "foundation", "lytang_MiniCheck-Flan-T5-Large",
                                          tt.t5_unigram(root / "tok"))
    torch.manual_seed(5)
    model = T5ForTokenClassification(AutoConfig.from_pretrained(foundation)).eval()
    save_file({f"t5.{k}": v.contiguous() for k, v in model.state_dict().items()
               if k != "transformer.encoder.embed_tokens.weight"}, str(root / "hhem" / "model.safetensors"))
    (root / "hhem" / "config.json").write_text(json.dumps({
        "architectures": ["HHEMv2ForSequenceClassification"], "model_type": "HHEMv2",
        "foundation": "google/flan-t5-base", "prompt": PROMPT}))
    return root / "hhem", model


def test_hhem_prompt_premise_evidence_and_first_position_class_1(hhem):
    folder, model = hhem
    s = get_scorer("hhem", path=str(folder))
    seen = tiny_hf.record_inputs(s.model)
    evidence = "Paris is the capital of France."
    b = s.score([CLAIM], [evidence])
    ids = s.tokenizer(PROMPT.format(text1=evidence, text2=CLAIM))["input_ids"]
    assert seen == [ids] and ids[0] == s.tokenizer.pad_token_id  # the template's literal "<pad>" comes first
    toks = s.tokenizer.convert_ids_to_tokens(ids)
    assert toks[0] == "<pad>" and toks[-1] == "</s>" and "▁Premise" not in toks[:2]
    with torch.no_grad():
        expected = torch.softmax(model(input_ids=torch.tensor([ids])).logits[:, 0, :], -1)[0, 1].item()
    assert b.scores[0] == pytest.approx(expected, abs=1e-6)


@pytest.fixture(scope="module")
def causal(tmp_path_factory):
    from tokenizers import processors
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    root = tmp_path_factory.mktemp("bespoke")
    tok_dir = tt.roberta_bpe(root / "tok")
    config = json.loads((root / "tok" / "tokenizer_config.json").read_text())
    # as InternLM2's tokenizer (add_bos_token, no eos): a plain fast tokenizer that adds <s> in front, nothing after
    tok_config = {**config, "tokenizer_class": "PreTrainedTokenizerFast"}
    (root / "tok" / "tokenizer_config.json").write_text(json.dumps(tok_config))
    tok = AutoTokenizer.from_pretrained(tok_dir)
    tok.backend_tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A $B",
                                                                         special_tokens=[("<s>", 0)])
    tok.add_tokens(["Yes", "No"])
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tok.chat_template = ("{{ bos_token }}{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
                         "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
                         "{{ '<|im_start|>assistant\\n' }}{% endif %}")
    torch.manual_seed(7)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096))
    model.save_pretrained(root / "m")
    tok.save_pretrained(root / "m")
    return str(root / "m")


def test_bespoke_chat_prompt_top5_yes_max_over_chunks_min_over_sentences(causal, sent_tokenize):
    s = get_scorer("bespoke-minicheck", path=causal, window=400)  # 100-token chunks on this tiny model
    assert s.chunk_size == 100 and s.recipe.aggregation == "max over chunks, then min over claim sentences"
    ids = s.prompt("DOC", "CLAIM")
    text = s.tokenizer.decode(ids)
    assert text.startswith("<s><s><|im_start|>system\nDetermine whether the provided claim is consistent")
    assert text.endswith("<|im_end|>\n<|im_start|>user\nDocument: DOC\nClaim: CLAIM<|im_end|>\n<|im_start|>assistant\n")
    yes = s.tokenizer.convert_tokens_to_ids("Yes")
    with torch.no_grad():
        logits = s.model(input_ids=torch.tensor([ids])).logits[0, -1]
    top = torch.topk(torch.log_softmax(logits, -1), 5)
    expected = sum(v.exp().item() for v, i in zip(top.values, top.indices.tolist()) if i == yes)
    assert s.p_yes(ids) == pytest.approx(expected, abs=1e-6)
    b = s.score([CLAIM], [EVIDENCE])
    chunks = s.chunks(EVIDENCE)
    assert len(chunks) > 1 and b.chunks.tolist() == [len(chunks)]
    per_sentence = [max(s.p_yes(s.prompt(c, x)) for c in chunks) for x in sent_tokenize(CLAIM)]
    assert b.scores[0] == pytest.approx(min(per_sentence), abs=1e-9)


@pytest.mark.parametrize("case", list(SPLIT_CASES))
def test_bespoke_claim_sentences_and_chunks_are_punkt_token_for_token(causal, sent_tokenize, case):
    """Claim sentences (model card) and chunks (LLMCheck: newline blocks, sent_tokenize, greedy packing) from
    NLTK's Punkt; 8-token chunks make every boundary show in the prompts."""
    s = get_scorer("bespoke-minicheck", path=causal, window=308)
    assert s.chunk_size == 8
    tok = s.tokenizer
    text = SPLIT_CASES[case]
    units = []
    for block in text.split("\n"):  # LLMCheck.sent_tokenize_with_newlines
        units += sent_tokenize(block) + ["\n"]
    chunks, cur, n = [], [], 0
    for u in units[:-1] or [""]:  # LLMCheck.get_all_chunks_per_doc
        c = len(tok(u, add_special_tokens=False)["input_ids"])
        if n + c > 8:
            chunks.append(" ".join(cur))
            cur, n = [u], c
        else:
            cur.append(u)
            n += c
    chunks.append(" ".join(cur))
    chunks = [c for c in (x.replace(" \n ", "\n").strip() for x in chunks) if c] or [""]
    assert s.chunks(text) == chunks
    seen = tiny_hf.record_inputs(s.model)
    s.score([text], [text])
    assert sorted(seen) == sorted(s.prompt(c, x) for x in sent_tokenize(text) for c in chunks)


def test_hhem_keeps_t5_wo_in_float32_under_float16(hhem):
    """HHEM is loaded through from_pretrained, so T5's `_keep_in_fp32_modules` guard holds: in float16 the `wo`
    layers (whose activations overflow float16) stay float32; built-then-cast, they were float16."""
    folder, model = hhem
    default = get_scorer("hhem", path=str(folder))
    assert {p.dtype for p in default.model.parameters()} == {torch.float32}
    assert default.recipe.precision.startswith("float32")
    half = get_scorer("hhem", path=str(folder), dtype="float16")
    dtypes = {n: p.dtype for n, p in half.model.named_parameters()}
    wo = [n for n in dtypes if n.endswith("DenseReluDense.wo.weight")]
    assert wo and all(dtypes[n] == torch.float32 for n in wo)
    assert all(d == torch.float16 for n, d in dtypes.items() if n not in wo)
    assert half.signature != default.signature and half.recipe.precision.startswith("float16")
    evidence = "Paris is the capital of France."
    full, low = default.score([CLAIM], [evidence]).scores[0], half.score([CLAIM], [evidence]).scores[0]
    assert np.isfinite(low) and abs(full - low) < 0.05  # the same model, read at lower precision


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_alignscore_half_precision_only_when_asked(alignscore, dtype):
    folder, _, _ = alignscore
    s = get_scorer("alignscore", path=str(folder))
    assert {p.dtype for p in s.clf.model.base.parameters()} == {torch.float32} and s.recipe.precision == "float32"
    h = get_scorer("alignscore", path=str(folder), dtype=dtype)
    assert {p.dtype for p in h.clf.model.base.parameters()} == {getattr(torch, dtype)} and h.signature != s.signature


def test_bespoke_bos_as_vllm_generate_gives_it_or_the_templates_alone(causal):
    """The authors pass the templated string to vLLM's LLM.generate, which tokenises it adding the tokenizer's
    BOS: with a template that starts with `{{ bos_token }}` the model reads two. bos="template" gives one."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(causal)
    messages = [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": "Document: DOC\nClaim: CLAIM"}]
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)  # LLMCheck.apply_chat_template
    vllm_ids = tok(text)["input_ids"]  # vLLM's encode: add_special_tokens defaults to True
    s = get_scorer("bespoke-minicheck", path=causal)
    assert s.prompt("DOC", "CLAIM") == vllm_ids
    assert vllm_ids[:2] == [tok.bos_token_id] * 2 and vllm_ids[2] != tok.bos_token_id
    one = get_scorer("bespoke-minicheck", path=causal, bos="template")
    assert one.prompt("DOC", "CLAIM") == vllm_ids[1:] == tok(text, add_special_tokens=False)["input_ids"]
    assert one.signature != s.signature and "BOS twice" in s.recipe.input
    with pytest.raises(ScorerOptionError, match="bos must be one of vllm, template"):
        get_scorer("bespoke-minicheck", path=causal, bos="none")
