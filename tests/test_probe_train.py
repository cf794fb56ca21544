"""Two real GRPO steps with LoRA on a tiny randomly initialised Llama built here (no downloads)."""
import json

import peft  # noqa: F401 - the dev extra installs trl and peft: a missing one is a failure, not a skip
import torch
import trl  # noqa: F401

from attrib_audit.cli import main
from attrib_audit.probe.examples import example_paths
from attrib_audit.probe.records import load_asqa
from attrib_audit.probe.train import completion_text, prompt_rows


def _tiny_model(folder, texts):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    # "[1]" stays one token, so a sampled citation decodes to a marker the reward can parse
    pre = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                   pre_tokenizers.Split(Regex(r"\[\d+\]|\w+|[^\w\s]"), behavior="isolated")])
    words = sorted({w for t in texts for w, _ in pre.pre_tokenize_str(t)})
    vocab = {w: i for i, w in enumerate(["<pad>", "<eos>", "<unk>", *words])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre
    tok.decoder = decoders.WordPiece()  # joins word tokens with spaces
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                      pad_token_id=0, bos_token_id=1, eos_token_id=1)
    torch.manual_seed(0)
    LlamaForCausalLM(cfg).save_pretrained(folder)
    fast.save_pretrained(folder)


def test_prompt_rows_are_deterministic_with_an_unrelated_swap_passage():
    ex = list(load_asqa(example_paths()["data"]).values())[:3]
    rows = prompt_rows(ex, max_docs=2)
    assert rows == prompt_rows(ex, max_docs=2)
    assert len(rows[0]["passages"]) == 2 and "[2] " in rows[0]["prompt"] and "[3] " not in rows[0]["prompt"]
    assert rows[0]["unrelated"] == ex[1].docs[0].as_evidence() and rows[2]["unrelated"] == ex[0].docs[0].as_evidence()
    assert all(r["answerable"] for r in rows)
    assert completion_text([{"role": "assistant", "content": "hi [1]"}]) == "hi [1]"


def test_two_grpo_steps_update_the_lora_adapter_and_call_the_reward(tmp_path, capsys):
    from safetensors.torch import load_file

    data = tmp_path / "asqa.jsonl"
    data.write_text("".join(example_paths()["data"].read_text().splitlines(keepends=True)[:4]))
    texts = [r["prompt"] for r in prompt_rows(list(load_asqa(data).values()), max_docs=5)]
    model = tmp_path / "tiny-llama"
    _tiny_model(model, texts)
    out = tmp_path / "run"
    assert main(["probe", "train", "--model", str(model), "--data", str(data), "--out", str(out), "--max-steps", "2",
                 "--num-generations", "4", "--batch-size", "8", "--max-completion-length", "32", "--lr", "0.05",
                 "--lora-r", "4", "--lora-alpha", "8", "--reward-scorer", "lexical"]) == 0
    assert "2 GRPO steps" in capsys.readouterr().out
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["steps"] == 2 and summary["reward_calls"] >= 2
    assert set(summary["reward_log"][0]) >= {"claim_support", "counterfactual_margin", "evidence_coverage",
                                             "commitment", "total"}
    weights = load_file(str(out / "adapter" / "adapter_model.safetensors"))
    lora_b = {k: v for k, v in weights.items() if "lora_B" in k}
    assert lora_b, sorted(weights)
    # peft initialises every lora_B to zero, so any non-zero entry was written by the two updates
    assert any(v.abs().sum().item() > 0 for v in lora_b.values())
