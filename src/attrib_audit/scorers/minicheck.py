"""MiniCheck (Tang et al., 2024) exactly as its authors run it (Liyan06/MiniCheck, minicheck/inference.py).

- Chunks: the document is split into newline blocks and sentences (`nltk.sent_tokenize`: NLTK's Punkt, run
  offline by text.punkt), packed greedily into chunks of at
  most 500 words (Flan-T5) or 400 model tokens (RoBERTa, DeBERTa-v3); a sentence is never split.
- Input: ONE text, `doc_chunk + eos_token + claim` (Flan-T5: "predict: " in front), tokenised as a single
  sequence: `<s> chunk </s> claim </s>` for RoBERTa, `[CLS] chunk [SEP] claim [SEP]` for DeBERTa-v3,
  `predict: chunk </s> claim </s>` for T5. Window: 2048 tokens (RoBERTa: its 512 positions).
- Label: encoders, softmax(logits)[1] of the 2-way head (the published configs name the classes
  "0"/"1"); Flan-T5, one decoding step from token 0 and a softmax over the logits of "▁" and "▁1"
  (T5 ids 3 and 209, the ids the authors' code hard-codes), P(supported) = the second.
- Aggregation: max over chunks. The claim is not split (the authors leave that to the caller).
One deviation, only when an input is over the window: the authors' tokenizer cuts the end of the text
(the claim); we cut the chunk's last tokens instead, and count them.
"""
from __future__ import annotations

import re
from typing import Sequence

from attrib_audit.scorers.base import ScoreBatch, Scorer, register
from attrib_audit.scorers.chunked import check_aggregation
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.hfmodels import hub_scorer_spec, require_punkt
from attrib_audit.scorers.pairclf import (
    Head,
    ModelConfigError,
    PairClassifier,
    entailment_index,
    load_pair_model,
    model_window,
)
from attrib_audit.scorers.recipe import Recipe
from attrib_audit.scorers.resolve import Resolved
from attrib_audit.text.chunk import minicheck_chunks
from attrib_audit.text.punkt import PUNKT

MINICHECK_HUB = "lytang/MiniCheck-Flan-T5-Large"
SOURCE = "Liyan06/MiniCheck minicheck/inference.py + minicheck.py (Inferencer)"
T5_PREFIX = "predict: "
T5_LABEL_PIECES = ("▁", "▁1")  # ids 3 and 209 in the T5 vocabulary
CHUNK_WORDS_T5 = 500
CHUNK_TOKENS_ENCODER = 400
_GENERIC = re.compile(r"(label_)?\d+")  # "0"/"1" (MiniCheck's configs) or LABEL_0/LABEL_1


def minicheck_head(tokenizer, config, what: str) -> Head:
    if config.is_encoder_decoder:
        ids = tokenizer.convert_tokens_to_ids(list(T5_LABEL_PIECES))
        if tokenizer.unk_token_id in ids or None in ids:
            raise ModelConfigError(f"{what}: the tokenizer has no piece {T5_LABEL_PIECES[0]!r} or "
                                   f"{T5_LABEL_PIECES[1]!r} (not a T5 vocabulary)")
        return Head("seq2seq", token_ids=(int(ids[0]), int(ids[1])), label="1")
    labels = {int(i): str(lab).lower() for i, lab in config.id2label.items()}
    if len(labels) != 2:
        raise ModelConfigError(f"{what}: MiniCheck heads are 2-way; config id2label has {len(labels)} classes "
                               f"{config.id2label}")
    if all(_GENERIC.fullmatch(lab) for lab in labels.values()):
        return Head("seqcls", index=1, label=str(config.id2label[1]))
    index, label = entailment_index(config, what, keys=("support", "entail"))
    return Head("seqcls", index=index, label=label)


class MiniCheckScorer(Scorer):
    name = "minicheck"
    batch_size = 32
    window: int  # set from the model when it loads (always a number here)

    def __init__(self, resolved: Resolved, *, device: str = "cpu", chunk_size: int | None = None,
                 window: int = 2048, model_batch: int = 8, chunk: str = "max", trust_remote_code: bool = False,
                 dtype: str = "float32", install_hint: str = "") -> None:
        self.resolved = resolved
        self.chunk = check_aggregation(chunk, self.name)
        splitter = require_punkt(self.name)
        tokenizer, model = load_pair_model(resolved, device, what=self.name, install_hint=install_hint,
                                           trust_remote_code=trust_remote_code, dtype=dtype)
        head = minicheck_head(tokenizer, model.config, f"{self.name} ({resolved.location})")
        t5 = head.kind == "seq2seq"
        self.chunk_size = int(chunk_size or (CHUNK_WORDS_T5 if t5 else CHUNK_TOKENS_ENCODER))
        win = model_window(tokenizer, model.config, window)
        self.window = win  # tokens the model sees per input (the window option reruns it at another)
        self.clf = PairClassifier(tokenizer, model, head, window=win, device=device, template="joined",
                                  prefix=T5_PREFIX if t5 else "", batch_size=model_batch,
                                  max_batch_tokens=model_batch * win)
        if t5:
            label = (f"softmax over the step-1 logits of {T5_LABEL_PIECES[0]!r},{T5_LABEL_PIECES[1]!r} "
                     f"(ids {head.token_ids[0]},{head.token_ids[1]}) from decoder start; P = the second")
        else:
            label = f"softmax(logits)[{head.index}] of the 2-way head (id2label {head.label!r})"
        self.recipe = Recipe(
            input=("text('predict: ' + chunk + eos + claim), one sequence" if t5
                   else "text(chunk + eos + claim), one sequence"),
            window=win, cut="evidence (chunk tail; the claim is never cut)",
            chunk_unit="words" if t5 else "tokens", chunk_size=self.chunk_size,
            chunk_rule="newline blocks, then sentences; greedy whole-sentence packing (no sentence split)",
            claim_split="none", sentences=PUNKT, aggregation=f"{self.chunk} over chunks", precision=dtype, label=label,
            source=SOURCE)
        self._fingerprint = f"{weights_fingerprint(resolved)}:{library_versions('transformers', 'torch')},{splitter}"

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        return f"minicheck:model={base}:weights={self._fingerprint}:recipe={self.recipe.digest()}:v2"

    def chunks(self, evidence: str) -> list[str]:
        """The authors' chunks of one evidence text (words for Flan-T5, model tokens for the encoders)."""
        if self.clf.head.kind == "seq2seq":
            return minicheck_chunks(evidence, self.chunk_size)
        tok, cap = self.clf.tokenizer, self.clf.window

        def cost(units: list[str]) -> list[int]:  # as the authors count: each sentence alone, capped at the window
            ids = tok(units, add_special_tokens=False, truncation=True, max_length=cap, verbose=False)["input_ids"]
            return [len(x) for x in ids]
        return minicheck_chunks(evidence, self.chunk_size, cost)

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        split = {e: self.chunks(e) for e in dict.fromkeys(evidences)}
        return self.clf.score_windows(claims, [split[e] for e in evidences], self.chunk)


register(hub_scorer_spec("minicheck", MINICHECK_HUB,
                         "MiniCheck P(supported), max over 500-word (Flan-T5) / 400-token chunks", "fact-check",
                         MiniCheckScorer, sentences=PUNKT))
