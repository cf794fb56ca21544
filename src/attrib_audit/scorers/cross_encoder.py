"""Cross-encoders (sentence-transformers `CrossEncoder`, default ms-marco-MiniLM-L6-v2).

The pair order follows the head, as each model was trained:
- a relevance reranker (one logit, e.g. ms-marco) reads (query = claim, passage = evidence); the
  passage is cut (`only_second`); score = sigmoid of the raw logit (not whatever activation a saved
  config names);
- an NLI head (id2label naming entailment, e.g. cross-encoder/nli-deberta-v3-*) reads
  (premise = evidence, hypothesis = claim); the premise is cut (`only_first`); score = softmax P(entailment);
- a one-logit NLI model (HHEM-1.0: `input=nli`) reads (premise = evidence, hypothesis = claim) too,
  with the sigmoid.
`input=auto` (default) picks relevance for one logit and NLI for an entailment head. Only the evidence
is ever cut, and the cut is counted from the very features the model receives.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerOptionError, register
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.hfmodels import (
    hub_scorer_spec,
    refuse_hub_offline,
    refuse_remote_code,
    require,
    torch_device,
    torch_dtype,
)
from attrib_audit.scorers.pairclf import ModelConfigError, entailment_index
from attrib_audit.scorers.recipe import Recipe
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable

CROSS_ENCODER_HUB = "cross-encoder/ms-marco-MiniLM-L6-v2"
INPUTS = ("auto", "nli", "relevance")


def stored_keys(loc: str) -> set[str] | None:
    """Parameter names a local checkpoint folder stores (None when it cannot tell: a hub id not yet cached)."""
    folder = Path(loc)
    if not folder.is_dir():
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(loc, "config.json")
        except ImportError:  # pragma: no cover - ships with transformers
            return None
        if not isinstance(cached, str):
            return None
        folder = Path(cached).parent
    keys: set[str] = set()
    for f in sorted(folder.glob("*.safetensors")):
        from safetensors import safe_open

        with safe_open(str(f), "pt") as sf:
            keys.update(sf.keys())
    for f in sorted(folder.glob("pytorch_model*.bin")):
        import torch

        keys.update(torch.load(str(f), map_location="cpu", weights_only=True, mmap=True).keys())
    return keys or None


def refuse_untrained_head(model, loc: str, what: str) -> None:
    """The parameters outside the base encoder (the head) must come from the checkpoint, not initialisation."""
    keys = stored_keys(loc)
    if keys is None:
        return
    prefix = getattr(model, "base_model_prefix", "") + "."
    head = sorted(k for k in model.state_dict() if not k.startswith(prefix))
    missing = [k for k in head if k not in keys]
    if missing:
        raise ModelConfigError(f"{what}: {loc} has no trained weights for {', '.join(missing[:4])}; they would be "
                               f"freshly initialised and score noise (a base model without its fine-tuned head?)")


class CrossEncoderScorer(Scorer):
    name = "cross-encoder"
    batch_size = 64
    window: int  # set from the model when it loads (always a number here)

    def __init__(self, resolved: Resolved, *, device: str = "cpu", window: int | None = None,
                 model_batch: int = 32, input: str = "auto", trust_remote_code: bool = False, dtype: str = "float32",
                 install_hint: str = "") -> None:
        require("sentence-transformers", self.name)
        require("transformers", self.name)
        if input not in INPUTS:
            raise ScorerOptionError(f"{self.name}: input must be one of {', '.join(INPUTS)}, got {input!r}")
        import torch
        from sentence_transformers import CrossEncoder

        device = torch_device(device, self.name)
        weights_dtype = torch_dtype(dtype, self.name)
        refuse_hub_offline(resolved, self.name, install_hint)
        self.resolved, self.model_batch = resolved, int(model_batch)

        def load(loc: str):
            try:
                ce = CrossEncoder(loc, device=device, max_length=window, activation_fn=torch.nn.Identity(),
                                  trust_remote_code=trust_remote_code, model_kwargs={"dtype": weights_dtype})
            except ValueError as exc:
                refuse_remote_code(loc, self.name, exc)
                raise
            refuse_untrained_head(ce.model, loc, self.name)
            return ce

        self.model = load_or_unavailable(resolved, load, what=self.name, install_hint=install_hint)
        self.window = int(self.model.max_seq_length)
        self.tokenizer = self.model.tokenizer
        self.n_special = int(self.tokenizer.num_special_tokens_to_add(pair=True))
        config = self.model.model.config
        self.n_labels = int(self.model.num_labels)
        what = f"{self.name} ({resolved.location})"
        if self.n_labels == 1:
            self.index = None
            self.nli = input == "nli"
        else:
            if input == "relevance":
                raise ScorerOptionError(f"{what}: a {self.n_labels}-way head is not a one-logit relevance reranker")
            self.index, label = entailment_index(config, what)
            self.nli = True
        head = "sigmoid(logit)" if self.index is None else f"softmax(logits)[{self.index}] (entailment)"
        self.recipe = Recipe(
            input=("pair(premise=evidence, hypothesis=claim)" if self.nli else "pair(query=claim, passage=evidence)")
            + ", the tokenizer's pair template",
            window=self.window, cut="evidence (" + ("only_first" if self.nli else "only_second") + ")",
            chunk_unit="none", chunk_size=0, chunk_rule="none: the model's own cut", claim_split="none",
            sentences="none", aggregation="single input", precision=dtype, label=head,
            source="sentence-transformers CrossEncoder (v6 API); NLI heads premise first as trained")
        versions = library_versions('sentence-transformers', 'transformers', 'torch')
        self._fingerprint = f"{weights_fingerprint(resolved)}:{versions}"

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        return f"cross-encoder:model={base}:weights={self._fingerprint}:recipe={self.recipe.digest()}:v2"

    def _count(self, texts: Sequence[str]) -> np.ndarray:
        ids = self.tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        return np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))

    def pairs(self, claims: Sequence[str], evidences: Sequence[str]) -> list[tuple[str, str]]:
        """The (first, second) texts the model reads, in the order its head was trained on."""
        return [(e, c) if self.nli else (c, e) for c, e in zip(claims, evidences)]

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        import torch

        n = len(claims)
        n_claim, n_ev = self._count(claims), self._count(evidences)
        fits = n_claim + self.n_special < self.window
        failures = [None if ok else f"claim of {c} tokens leaves no room for evidence in the {self.window}-token window"
                    for ok, c in zip(fits, n_claim)]
        scores = np.full(n, np.nan)
        cut = np.zeros(n, dtype=np.int64)
        rows = np.flatnonzero(fits)
        if rows.size:
            pairs = self.pairs([claims[i] for i in rows.tolist()], [evidences[i] for i in rows.tolist()])
            processing = {"text": {"truncation": "only_first" if self.nli else "only_second"}}
            seen = self.model.preprocess(pairs, processing_kwargs=processing)["attention_mask"].sum(1).numpy()
            cut[rows] = n_claim[rows] + n_ev[rows] + self.n_special - seen
            logits = torch.as_tensor(self.model.predict(pairs, batch_size=self.model_batch, show_progress_bar=False,
                                                        processing_kwargs=processing, convert_to_tensor=True)).float()
            if self.index is None:
                scores[rows] = torch.sigmoid(logits.reshape(-1)).cpu().double().numpy()
            else:
                scores[rows] = torch.softmax(logits, dim=-1)[:, self.index].cpu().double().numpy()
        return ScoreBatch(scores=scores, truncated_tokens=cut, input_tokens=n_ev, chunks=np.ones(n, dtype=np.int64),
                          failures=failures)


register(hub_scorer_spec("cross-encoder", CROSS_ENCODER_HUB,
                         "CrossEncoder: sigmoid of a relevance logit (query=claim) or NLI P(entailment) "
                         "(premise=evidence)", "cross-encoder", CrossEncoderScorer))
