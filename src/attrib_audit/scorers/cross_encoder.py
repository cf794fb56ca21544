"""Cross-encoder relevance (sentence-transformers `CrossEncoder`, default ms-marco-MiniLM-L6-v2).

Input (query = claim, passage = evidence). A one-logit head is mapped to [0, 1] by a sigmoid
applied here to the raw logit (not whatever activation a saved config names); a multi-class
head gives softmax P(entailment) by id2label. Only the evidence is cut (`only_second`) and
the cut is counted from the very features the model receives.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch, register
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.hfmodels import (
    hub_scorer_spec, refuse_hub_offline, torch_device,
)
from attrib_audit.scorers.pairclf import entailment_index
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable

CROSS_ENCODER_HUB = "cross-encoder/ms-marco-MiniLM-L6-v2"
_PROCESSING = {"text": {"truncation": "only_second"}}


class CrossEncoderScorer:
    name = "cross-encoder"
    batch_size = 64

    def __init__(self, resolved: Resolved, *, device: str = "cpu", window: int | None = None,
                 model_batch: int = 32, install_hint: str = "") -> None:
        import torch
        from sentence_transformers import CrossEncoder

        device = torch_device(device, self.name)
        refuse_hub_offline(resolved, self.name, install_hint)
        self.resolved, self.model_batch = resolved, int(model_batch)

        def load(loc: str):
            ce = CrossEncoder(loc, device=device, max_length=window, activation_fn=torch.nn.Identity())
            return ce.half() if device != "cpu" else ce

        self.model = load_or_unavailable(resolved, load, what=self.name, install_hint=install_hint)
        self.window = int(self.model.max_seq_length)
        self.tokenizer = self.model.tokenizer
        self.n_special = int(self.tokenizer.num_special_tokens_to_add(pair=True))
        config = self.model.model.config
        self.n_labels = int(self.model.num_labels)
        self.index = None if self.n_labels == 1 else entailment_index(config, f"{self.name} ({resolved.location})")[0]
        self._fingerprint = f"{weights_fingerprint(resolved)}:{library_versions('sentence-transformers', 'transformers', 'torch')}"

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        head = "sigmoid" if self.index is None else f"softmax[{self.index}]"
        return (f"cross-encoder:model={base}:weights={self._fingerprint}:{head}:window={self.window}:"
                f"query=claim:cut=evidence:v1")

    def _count(self, texts: Sequence[str]) -> np.ndarray:
        ids = self.tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        return np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))

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
            pairs = [(claims[i], evidences[i]) for i in rows]
            seen = self.model.preprocess(pairs, processing_kwargs=_PROCESSING)["attention_mask"].sum(1).numpy()
            cut[rows] = n_claim[rows] + n_ev[rows] + self.n_special - seen
            logits = torch.as_tensor(self.model.predict(pairs, batch_size=self.model_batch, show_progress_bar=False,
                                                        processing_kwargs=_PROCESSING, convert_to_tensor=True)).float()
            if self.index is None:
                scores[rows] = torch.sigmoid(logits.reshape(-1)).cpu().double().numpy()
            else:
                scores[rows] = torch.softmax(logits, dim=-1)[:, self.index].cpu().double().numpy()
        return ScoreBatch(scores=scores, truncated_tokens=cut, input_tokens=n_ev, chunks=np.ones(n, dtype=np.int64),
                          failures=failures)


register(hub_scorer_spec("cross-encoder", CROSS_ENCODER_HUB,
                         "sigmoid of a CrossEncoder relevance logit (ms-marco-MiniLM-L6-v2)", "cross-encoder",
                         CrossEncoderScorer))
