"""Vectara HHEM-2.1-Open (vectara/hallucination_evaluation_model), run natively: no code from the hub.

The checkpoint's own code (modeling_hhem_v2.py, `HHEMv2ForSequenceClassification.predict`) is a
`T5ForTokenClassification` on its `foundation` (google/flan-t5-base) with the weights under `t5.`, fed
`prompt.format(text1=premise, text2=hypothesis)` tokenised by the foundation's tokenizer with no
truncation, and read as softmax(logits[:, 0, :])[:, 1] (P(consistent)). We build the same module from
transformers' own T5 class, load the `t5.*` tensors from model.safetensors, and feed the same text, so
nothing from the hub is executed. premise = evidence, hypothesis = claim; long evidence is not cut
(T5's relative positions take any length, as the authors run it).

The foundation's config and tokenizer come from DIR/foundation when present (offline), else the hub id
the checkpoint names (the local Hugging Face cache, or the hub when online).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerLoadError, register
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.hfmodels import hub_scorer_spec, refuse_hub_offline, require, torch_device, torch_dtype
from attrib_audit.scorers.pairclf import plan_batches
from attrib_audit.scorers.recipe import Recipe
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable

HHEM_HUB = "vectara/hallucination_evaluation_model"
# HHEMv2Config's defaults (configuration_hhem_v2.py), used when config.json leaves them out
FOUNDATION = "google/flan-t5-base"
PROMPT = "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\nHypothesis: {text2}"


def local_folder(resolved: Resolved) -> Path:
    """The checkpoint folder: a local path, or the hub snapshot (from the cache, or downloaded when online)."""
    if Path(resolved.location).exists():
        return Path(resolved.location)
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(resolved.location))


def companion(folder: Path, sub: str, hub_id: str) -> str:
    """A model the checkpoint builds on: DIR/<sub> when shipped beside it, else its hub id."""
    return str(folder / sub) if (folder / sub / "config.json").exists() else hub_id


def load_safetensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ScorerLoadError(f"no *.safetensors weights in {folder}")
    state: dict = {}
    for f in files:
        state.update(load_file(str(f)))
    return state


class HHEMScorer(Scorer):
    name = "hhem"
    batch_size = 32

    def __init__(self, resolved: Resolved, *, device: str = "cpu", model_batch: int = 8, dtype: str = "float32",
                 install_hint: str = "") -> None:
        require("transformers", self.name)
        weights_dtype = torch_dtype(dtype, self.name)
        self.resolved, self.device = resolved, torch_device(device, self.name)
        self.model_batch = int(model_batch)
        refuse_hub_offline(resolved, self.name, install_hint)

        def load(loc: str):
            from transformers import AutoConfig, AutoTokenizer, T5ForTokenClassification

            folder = local_folder(resolved)
            cfg = json.loads((folder / "config.json").read_text())
            foundation = companion(folder, "foundation", cfg.get("foundation") or FOUNDATION)
            state = {k[len("t5."):]: v for k, v in load_safetensors(folder).items() if k.startswith("t5.")}
            if not state:
                raise ScorerLoadError(f"{self.name}: {loc} holds no t5.* weights (not HHEM-2.1-Open)")
            # from_pretrained, not construct-then-cast: it keeps T5's `_keep_in_fp32_modules` (the `wo` layers,
            # which overflow in float16) in float32 whatever dtype the rest loads in
            # with output_loading_info the call returns (model, info); transformers' stubs type the model alone
            loaded: Any = T5ForTokenClassification.from_pretrained(
                None, config=AutoConfig.from_pretrained(foundation), state_dict=state, dtype=weights_dtype,
                output_loading_info=True)
            model, info = loaded
            missing = sorted(k for k in info["missing_keys"] if k != "transformer.encoder.embed_tokens.weight")
            unexpected = sorted(info["unexpected_keys"])
            if missing or unexpected:
                raise ScorerLoadError(f"{self.name}: {loc} does not hold HHEM's t5.* weights "
                                      f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
            return (AutoTokenizer.from_pretrained(foundation), model.to(self.device).eval(),
                    cfg.get("prompt") or PROMPT)

        self.tokenizer, self.model, self.prompt = load_or_unavailable(resolved, load, what=self.name,
                                                                      install_hint=install_hint)
        self.recipe = Recipe(
            input=f"text({self.prompt!r}.format(text1=evidence, text2=claim)), the foundation's tokenizer",
            window=None, cut="none (the authors do not truncate; T5 has relative positions)",
            chunk_unit="none", chunk_size=0, chunk_rule="none", claim_split="none", sentences="none",
            aggregation="single input", precision=f"{dtype} (T5's wo layers always float32)",
            label="softmax(logits[:, 0, :])[1] of T5ForTokenClassification (P(consistent))",
            source="vectara/hallucination_evaluation_model modeling_hhem_v2.py "
                   "(HHEMv2ForSequenceClassification.predict)")
        self._fingerprint = f"{weights_fingerprint(resolved)}:{library_versions('transformers', 'torch')}"

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        return f"hhem:model={base}:weights={self._fingerprint}:recipe={self.recipe.digest()}:v1"

    def texts(self, claims: Sequence[str], evidences: Sequence[str]) -> list[str]:
        return [self.prompt.format(text1=e, text2=c) for c, e in zip(claims, evidences)]

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        import torch

        n = len(claims)
        enc = self.tokenizer(self.texts(claims, evidences), verbose=False)
        lengths = np.fromiter((len(x) for x in enc["input_ids"]), dtype=np.int64, count=n)
        scores = np.empty(n)
        with torch.inference_mode():
            for idx in plan_batches(lengths, self.model_batch):
                batch = self.tokenizer.pad({k: [enc[k][i] for i in idx] for k in ("input_ids", "attention_mask")},
                                           return_tensors="pt")
                logits = self.model(**{k: v.to(self.device) for k, v in batch.items()}).logits[:, 0, :].float()
                scores[idx] = torch.softmax(logits, dim=-1)[:, 1].cpu().double().numpy()
        ev = np.fromiter((len(x) for x in self.tokenizer(list(evidences), add_special_tokens=False)["input_ids"]),
                         dtype=np.int64, count=n)
        return ScoreBatch(scores=scores, truncated_tokens=np.zeros(n, dtype=np.int64), input_tokens=ev,
                          chunks=np.ones(n, dtype=np.int64), failures=[None] * n)


register(hub_scorer_spec("hhem", HHEM_HUB,
                         "Vectara HHEM-2.1-Open P(consistent), T5 token classifier", "fact-check", HHEMScorer,
                         needs=("needs the google/flan-t5-base config + tokenizer (DIR/foundation or the HF cache)",
                                "no --trust-remote-code: run natively, the hub's code is not used")))
