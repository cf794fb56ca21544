"""MiniCheck (Tang et al., 2024): evidence cut into ~400-word sentence-aligned chunks, claim checked
against each, max over chunks.

Two model shapes, told apart by the config:
- encoder sequence classifiers (MiniCheck-RoBERTa-Large, MiniCheck-DeBERTa-v3-Large): pair input
  (chunk, claim), P(supported) = softmax(logits)[supported]; the supported class is the id2label entry
  naming 'support'/'entail', or class 1 of a generic LABEL_0/LABEL_1 head (MiniCheck's published layout);
- Flan-T5 (MiniCheck-Flan-T5-Large): input "predict: " + chunk, eos, claim; one decoding step from the
  decoder start token, P(supported) = softmax over the logits of the first tokens of "0" and "1"
  (for the T5 vocabulary these are ids 3 and 209, as in MiniCheck's own code).
The window is up to 2048 tokens where the model allows it (T5, DeBERTa-v3); absolute-position models
(RoBERTa) are capped at their position table, and any cut is counted.
"""
from __future__ import annotations

import re
from typing import Sequence

from attrib_audit.scorers.base import ScoreBatch, register
from attrib_audit.scorers.chunked import check_aggregation
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.hfmodels import hub_scorer_spec
from attrib_audit.scorers.pairclf import (
    Head, ModelConfigError, PairClassifier, entailment_index, load_pair_model, model_window,
)
from attrib_audit.scorers.resolve import Resolved
from attrib_audit.text.chunk import word_windows

MINICHECK_HUB = "lytang/MiniCheck-Flan-T5-Large"
T5_PREFIX = "predict: "
_GENERIC = re.compile(r"label_\d+")


def minicheck_head(tokenizer, config, what: str) -> Head:
    if config.is_encoder_decoder:
        ids = []
        for label in ("0", "1"):
            toks = tokenizer(label, add_special_tokens=False)["input_ids"]
            if not toks:
                raise ModelConfigError(f"{what}: the tokenizer has no token for label {label!r}")
            ids.append(int(toks[0]))
        if ids[0] == ids[1]:
            raise ModelConfigError(f"{what}: labels '0' and '1' share their first token {ids[0]}")
        return Head("seq2seq", token_ids=(ids[0], ids[1]), label="1")
    labels = {int(i): str(l).lower() for i, l in config.id2label.items()}
    if len(labels) == 2 and all(_GENERIC.fullmatch(l) for l in labels.values()):
        return Head("seqcls", index=1, label="LABEL_1")
    index, label = entailment_index(config, what, keys=("support", "entail"))
    return Head("seqcls", index=index, label=label)


class MiniCheckScorer:
    name = "minicheck"
    batch_size = 32

    def __init__(self, resolved: Resolved, *, device: str = "cpu", chunk_words: int = 400, window: int = 2048,
                 model_batch: int = 8, chunk: str = "max", install_hint: str = "") -> None:
        self.resolved, self.chunk_words = resolved, int(chunk_words)
        self.chunk = check_aggregation(chunk, self.name)
        tokenizer, model = load_pair_model(resolved, device, what=self.name, install_hint=install_hint)
        head = minicheck_head(tokenizer, model.config, f"{self.name} ({resolved.location})")
        win = model_window(tokenizer, model.config, window)
        self.clf = PairClassifier(tokenizer, model, head, window=win, device=device,
                                  prefix=T5_PREFIX if head.kind == "seq2seq" else "",
                                  batch_size=model_batch, max_batch_tokens=model_batch * win)
        self._fingerprint = f"{weights_fingerprint(resolved)}:{library_versions('transformers', 'torch')}"

    @property
    def window(self) -> int:
        """Tokens the model sees per input (the window option reruns it at another)."""
        return self.clf.window

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        return (f"minicheck:{self.clf.head.kind}:model={base}:weights={self._fingerprint}:{self.clf.head.tag}:"
                f"window={self.clf.window}:chunk_words={self.chunk_words}:agg={self.chunk}:v1")

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        return self.clf.score_windows(claims, [word_windows(e, self.chunk_words) for e in evidences], self.chunk)


register(hub_scorer_spec("minicheck", MINICHECK_HUB,
                         "MiniCheck P(supported), max over ~400-word chunks (Flan-T5 or encoder)", "fact-check",
                         MiniCheckScorer))
