"""AlignScore (Zha et al., 2023) run natively from its checkpoint's state dict: no Lightning, no unpickling.

The released checkpoints (yzha/AlignScore: AlignScore-large.ckpt, -base.ckpt) are PyTorch Lightning
files whose `state_dict` holds `base_model.*` (a RobertaModel with its pooler) and the heads `bin_layer`,
`tri_layer`, `reg_layer`. We read it with `torch.load(weights_only=True)` (tensors and plain containers
only: a file that needs any other Python object is refused, never executed), load `base_model.*` into
transformers' RobertaModel and `tri_layer` into a Linear(hidden, 3), and run the authors' default
`nli_sp` mode (src/alignscore/inference.py):
- the context is cut into n = words // 350 + 1 chunks of len(sentences) // n consecutive sentences;
- the claim is split into sentences;
- each (chunk, claim sentence) is a pair `tokenizer(chunk, sentence, truncation='only_first',
  max_length=512)`, read as softmax(tri_layer(pooler_output))[:, 0] (P(aligned));
- score = max over chunks for each claim sentence, then the mean over claim sentences.
Sentences (chunks and claim) come from `nltk.sent_tokenize` as the authors split: NLTK's Punkt, run offline
by text.punkt. The RoBERTa config and tokenizer come from
a folder beside the checkpoint (config.json + tokenizer files) when present, else the hub id the
checkpoint's hyper-parameters name (roberta-large), from the cache or the hub when online.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerLoadError, ScorerSpec, ScorerUnavailable, register
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.hfmodels import (
    check_resolved,
    env_var,
    refuse_hub_offline,
    require,
    require_punkt,
    torch_device,
    torch_dtype,
)
from attrib_audit.scorers.pairclf import Head, PairClassifier
from attrib_audit.scorers.recipe import Recipe
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable, offline
from attrib_audit.text.chunk import alignscore_chunks
from attrib_audit.text.punkt import PUNKT, punkt_sentences

ALIGNSCORE_HUB = "yzha/AlignScore"
ALIGNSCORE_FILE = "AlignScore-large.ckpt"
INSTALL = (f"not on PyPI; on a networked machine: hf download {ALIGNSCORE_HUB} {ALIGNSCORE_FILE} --local-dir DIR "
           f"and hf download roberta-large config.json vocab.json merges.txt tokenizer.json --local-dir DIR, "
           f"then --model-path alignscore=DIR or {env_var('alignscore')}=DIR")


def resolve_alignscore(path: str | None = None) -> Resolved:
    """A .ckpt file, a folder holding one, $ATTRIB_AUDIT_ALIGNSCORE, or the hub file (cached or online)."""
    given = path or os.environ.get(env_var("alignscore"))
    if given:
        p = Path(given)
        found = [p] if p.is_file() else sorted(p.glob("*.ckpt")) if p.is_dir() else []
        if not found:
            raise ScorerUnavailable(f"alignscore: no AlignScore .ckpt at {given!r} ({INSTALL})")
        return Resolved(str(found[0]), "path" if path else f"env:{env_var('alignscore')}")
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(ALIGNSCORE_HUB, ALIGNSCORE_FILE)
    except ImportError:  # pragma: no cover - ships with transformers
        cached = None
    if isinstance(cached, str):
        return Resolved(cached, "hub-cache")
    return Resolved(f"{ALIGNSCORE_HUB}/{ALIGNSCORE_FILE}", "hub")


def read_state_dict(ckpt: str) -> tuple[dict, dict]:
    """(state dict, hyper-parameters) of a Lightning checkpoint or a bare state dict, tensors only."""
    import pickle

    import torch

    try:
        obj = torch.load(ckpt, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        first = next((ln.strip() for ln in str(exc).splitlines() if "Unsupported global" in ln), "")
        raise ScorerLoadError(f"alignscore: {ckpt} holds Python objects beyond tensors "
                              f"({first or 'not weights-only'}); "
                              f"refusing to unpickle it: save its state_dict alone") from None
    state = obj.get("state_dict", obj) if isinstance(obj, dict) else None
    if not isinstance(state, dict) or not any(str(k).startswith("base_model.") for k in state):
        raise ScorerLoadError(f"alignscore: {ckpt} has no base_model.* state dict (not an AlignScore checkpoint)")
    hparams = obj.get("hyper_parameters") if isinstance(obj.get("hyper_parameters"), dict) else {}
    return state, hparams


class AlignScoreModel:
    """RobertaModel + tri_layer, called like a transformers classifier (`.logits`) so PairClassifier can batch it."""

    def __init__(self, base, tri) -> None:
        self.base, self.tri = base, tri
        self.config = base.config

    def __call__(self, input_ids, attention_mask, token_type_ids=None):
        from types import SimpleNamespace

        pooled = self.base(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=token_type_ids).pooler_output
        return SimpleNamespace(logits=self.tri(pooled))


def build_model(state: dict, config, what: str):
    import torch
    from transformers import RobertaModel

    base = RobertaModel(config, add_pooling_layer=True)
    sub = {k[len("base_model."):]: v for k, v in state.items() if k.startswith("base_model.")}
    missing, unexpected = base.load_state_dict(sub, strict=False)
    unexpected = [k for k in unexpected if not k.endswith("position_ids")]
    if missing or unexpected or "tri_layer.weight" not in state:
        raise ScorerLoadError(f"{what}: checkpoint does not fit a {config.model_type} of its config "
                              f"(missing {missing[:3]}, unexpected {unexpected[:3]}, tri_layer "
                              f"{'present' if 'tri_layer.weight' in state else 'absent'})")
    tri = torch.nn.Linear(config.hidden_size, 3)
    tri.load_state_dict({"weight": state["tri_layer.weight"], "bias": state["tri_layer.bias"]})
    return base.eval(), tri.eval()


class AlignScoreScorer(Scorer):
    name = "alignscore"
    batch_size = 32

    def __init__(self, resolved: Resolved, *, device: str = "cpu", model_batch: int = 16, dtype: str = "float32",
                 install_hint: str = "") -> None:
        require("transformers", self.name)
        weights_dtype = torch_dtype(dtype, self.name)
        device = torch_device(device, self.name)
        refuse_hub_offline(resolved, self.name, install_hint)
        splitter = require_punkt(self.name)
        self.resolved = resolved

        def load(loc: str):
            from transformers import AutoConfig, AutoTokenizer

            ckpt = loc
            if resolved.origin == "hub":
                from huggingface_hub import hf_hub_download

                ckpt = hf_hub_download(ALIGNSCORE_HUB, ALIGNSCORE_FILE)
            state, hparams = read_state_dict(ckpt)
            folder = Path(ckpt).parent
            backbone = str(folder) if (folder / "config.json").exists() else str(hparams.get("model") or (
                "roberta-large" if state["base_model.embeddings.word_embeddings.weight"].shape[1] == 1024
                else "roberta-base"))
            base, tri = build_model(state, AutoConfig.from_pretrained(backbone), self.name)
            # RoBERTa keeps no module in float32, so a cast gives what from_pretrained(dtype=...) would
            model = AlignScoreModel(base.to(device, weights_dtype), tri.to(device, weights_dtype))
            return AutoTokenizer.from_pretrained(backbone), model

        tokenizer, model = load_or_unavailable(resolved, load, what=self.name, install_hint=install_hint)
        window = int(tokenizer.model_max_length) if tokenizer.model_max_length < 1_000_000 else 512
        self.clf = PairClassifier(tokenizer, model, Head("seqcls", index=0, label="aligned"), window=window,
                                  device=device, batch_size=model_batch, max_batch_tokens=model_batch * window)
        self.recipe = Recipe(
            input="pair(premise=context chunk, hypothesis=claim sentence), RoBERTa pair template",
            window=window, cut="evidence (only_first)", chunk_unit="sentences", chunk_size=350,
            chunk_rule="n = words // 350 + 1 chunks of len(sentences) // n consecutive sentences",
            claim_split="sentences", sentences=PUNKT, aggregation="max over chunks, then mean over claim sentences",
            precision=dtype, label="softmax(tri_layer(pooler_output))[0] (aligned), nli_sp mode",
            source="yuh-zha/AlignScore src/alignscore/inference.py + model.py (BERTAlignModel)")
        self._fingerprint = f"{weights_fingerprint(resolved)}:{library_versions('transformers', 'torch')},{splitter}"

    @property
    def signature(self) -> str:
        base = Path(self.resolved.location).name
        return f"alignscore:model={base}:weights={self._fingerprint}:recipe={self.recipe.digest()}:v1"

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        chunks = {e: alignscore_chunks(e) for e in dict.fromkeys(evidences)}
        owner, sentences, windows = [], [], []
        for i, (c, e) in enumerate(zip(claims, evidences)):
            for s in punkt_sentences(c) or [c]:
                owner.append(i)
                sentences.append(s)
                windows.append(chunks[e])
        return per_claim(self.clf.score_windows(sentences, windows, "max"), np.asarray(owner), len(claims), "mean")


def per_claim(batch: ScoreBatch, owner: np.ndarray, n: int, how: str) -> ScoreBatch:
    """Claim-sentence scores to pair scores (mean or min); a sentence that failed fails its pair. The evidence
    counts are those of one sentence (every sentence reads the same evidence); the cut, the largest."""
    scores = np.full(n, np.nan)
    cut = np.zeros(n, dtype=np.int64)
    ev = np.zeros(n, dtype=np.int64)
    chunks = np.zeros(n, dtype=np.int64)
    failures: list[str | None] = [None] * n
    for i in range(n):
        rows = np.flatnonzero(owner == i)
        bad = [batch.failures[r] for r in rows if batch.failures[r]]
        if bad:
            failures[i] = f"a claim sentence failed: {bad[0]}"
        else:
            vals = batch.scores[rows]
            scores[i] = vals.mean() if how == "mean" else vals.min()
        cut[i], ev[i], chunks[i] = (batch.truncated_tokens[rows].max(), batch.input_tokens[rows[0]],
                                    batch.chunks[rows[0]])
    return ScoreBatch(scores=scores, truncated_tokens=cut, input_tokens=ev, chunks=chunks, failures=failures)


def _build(path: str | None = None, device: str = "cpu", **opts) -> AlignScoreScorer:
    return AlignScoreScorer(resolve_alignscore(path), device=device, install_hint=INSTALL, **opts)


def _check() -> tuple[bool, str]:
    ok, where = check_resolved(resolve_alignscore)
    if not ok and offline():
        where += " (the hub is offline)"
    return ok, where


register(ScorerSpec(name="alignscore", factory=_build,
                    description="AlignScore-large P(aligned), nli_sp: max over ~350-word chunks, "
                                "mean over claim sentences",
                    family="fact-check", check=_check, install=INSTALL,
                    options=("path", "device", "model_batch", "dtype"),
                    needs=("needs the roberta-large config + tokenizer files beside the checkpoint",
                     "no --trust-remote-code: the Lightning checkpoint's state dict is read weights-only, "
                     "run natively"),
                    sentences=PUNKT))
