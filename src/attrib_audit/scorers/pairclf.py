"""Shared machinery of the (evidence, claim) classifiers: NLI, MiniCheck.

Premise = evidence (or one window of it), hypothesis = claim. Only the evidence side is
ever cut (`truncation="only_first"`), and the cut is counted exactly: untruncated
premise + claim + special tokens minus the length the model actually saw. A claim that
leaves no room for evidence is a reported failure, never a silently mangled input.
Batches are sorted by token length so padding is small; everything runs under
`torch.inference_mode`, in fp16 on a GPU.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch, ScorerLoadError
from attrib_audit.scorers.chunked import aggregate
from attrib_audit.scorers.hfmodels import refuse_hub_offline, torch_device
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable

# position ids of these families start after the padding index, so 514 positions hold 512 tokens
_POSITION_OFFSET = {"roberta": 2, "xlm-roberta": 2, "camembert": 2, "longformer": 2}
_RELATIVE = {"t5", "mt5", "umt5", "longt5"}
_NEGATED = re.compile(r"\b(not|non|no)\b|^(not|non)[_ -]?")


class ModelConfigError(ScorerLoadError):
    """The weights load but cannot be read as this scorer needs (e.g. no entailment label): an error, not absence."""


def entailment_index(config, what: str, keys: Sequence[str] = ("entail",)) -> tuple[int, str]:
    """The class index whose `id2label` name contains one of `keys` (case-insensitive), negations excluded.

    'not_entailment' is the other class of a 2-way head, not the entailment class; a
    config with no such label, or with two, is an error rather than a guess.
    """
    id2label = {int(i): str(l) for i, l in (getattr(config, "id2label", None) or {}).items()}
    hits = [(i, l) for i, l in sorted(id2label.items())
            if any(k in l.lower() for k in keys) and not _NEGATED.search(l.lower())]
    if len(hits) != 1:
        found = "none" if not hits else "several: " + ", ".join(l for _, l in hits)
        raise ModelConfigError(
            f"{what}: cannot tell the entailment class from config id2label {id2label} ({found} match "
            f"{'/'.join(keys)!r}); use a model whose id2label names it")
    return hits[0]


def model_window(tokenizer, config, requested: int | None = None) -> int:
    """Tokens the model can take: absolute position embeddings cap it; relative-position models take `requested`."""
    model_type = getattr(config, "model_type", "")
    relative = model_type in _RELATIVE or getattr(config, "position_biased_input", True) is False
    max_pos = getattr(config, "max_position_embeddings", None)
    pos_limit = None if relative or not max_pos else int(max_pos) - _POSITION_OFFSET.get(model_type, 0)
    tok_limit = int(tokenizer.model_max_length) if tokenizer.model_max_length < 1_000_000 else None
    if requested:
        return int(min(requested, pos_limit)) if pos_limit else int(requested)
    limits = [x for x in (pos_limit, tok_limit) if x]
    return min(limits) if limits else 512


def load_pair_model(resolved: Resolved, device: str, *, what: str, install_hint: str):
    """(tokenizer, model) from a local folder or cached hub id; seq2seq when the config is encoder-decoder."""
    import torch
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoModelForSequenceClassification, AutoTokenizer

    device = torch_device(device, what)
    refuse_hub_offline(resolved, what, install_hint)

    def load(loc: str):
        config = AutoConfig.from_pretrained(loc)
        cls = AutoModelForSeq2SeqLM if config.is_encoder_decoder else AutoModelForSequenceClassification
        dtype = torch.float16 if device != "cpu" else torch.float32
        model = cls.from_pretrained(loc, dtype=dtype).to(device).eval()
        return AutoTokenizer.from_pretrained(loc), model

    return load_or_unavailable(resolved, load, what=what, install_hint=install_hint)


@dataclass(frozen=True)
class Head:
    """How to read P(supported): a class of a classification head, or two label tokens at decoding step 1."""

    kind: str  # "seqcls" or "seq2seq"
    index: int = 0  # seqcls: the positive class
    token_ids: tuple[int, int] = (0, 0)  # seq2seq: (negative, positive) first-step token ids
    label: str = ""

    @property
    def tag(self) -> str:
        if self.kind == "seqcls":
            return f"cls{self.index}={self.label}"
        return f"tok{self.token_ids[1]}vs{self.token_ids[0]}"


def plan_batches(lengths: np.ndarray, batch_size: int, *, sort: bool = True,
                 max_tokens: int | None = None) -> list[np.ndarray]:
    """Row indices per forward pass: longest first when `sort` (little padding), else input order.

    With `max_tokens`, a batch grows while rows × its longest row fit the budget, so short
    rows travel in large batches and long ones in small; otherwise `batch_size` rows each.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable") if sort else np.arange(lengths.size)
    batches: list[np.ndarray] = []
    start, n = 0, order.size
    while start < n:
        if max_tokens:
            end, longest = start + 1, int(lengths[order[start]])
            while end < n and (end - start + 1) * max(longest, int(lengths[order[end]])) <= max_tokens:
                longest = max(longest, int(lengths[order[end]]))
                end += 1
        else:
            end = min(start + batch_size, n)
        batches.append(order[start:end])
        start = end
    return batches


class PairClassifier:
    """P(claim supported by premise) for (premise, claim) pairs, with exact evidence-side truncation counts."""

    def __init__(self, tokenizer, model, head: Head, *, window: int, device: str, prefix: str = "",
                 batch_size: int = 16, max_batch_tokens: int | None = None) -> None:
        tokenizer.truncation_side = "right"
        self.tokenizer, self.model, self.head = tokenizer, model, head
        self.window, self.device, self.prefix = int(window), device, prefix
        self.batch_size, self.max_batch_tokens = int(batch_size), max_batch_tokens
        self.n_special = int(tokenizer.num_special_tokens_to_add(pair=True))
        self.prefix_tokens = int(self.count([prefix])[0]) if prefix else 0
        names = set(getattr(tokenizer, "model_input_names", ("input_ids", "attention_mask")))
        if head.kind == "seq2seq":
            names.discard("token_type_ids")
        self.input_names = names

    def count(self, texts: Sequence[str]) -> np.ndarray:
        """Tokens of each text without special tokens and without truncation."""
        if not texts:
            return np.zeros(0, dtype=np.int64)
        ids = self.tokenizer(list(texts), add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        return np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))

    def evidence_budget(self, claim_tokens: np.ndarray) -> np.ndarray:
        """Evidence tokens that fit beside each claim (<= 0: the claim alone fills the window)."""
        return self.window - self.n_special - self.prefix_tokens - np.asarray(claim_tokens, dtype=np.int64)

    def encode(self, premises: Sequence[str], claims: Sequence[str]):
        """Tokenised pairs cut on the premise side only, the premise's full token count and the tokens cut."""
        full = self.count(premises)
        claim_tok = self.count(claims)
        enc = self.tokenizer(list(premises), list(claims), truncation="only_first", max_length=self.window,
                             verbose=False)
        seen = np.fromiter((len(x) for x in enc["input_ids"]), dtype=np.int64, count=len(premises))
        cut = full + claim_tok + self.n_special - seen
        return enc, seen, full, cut

    def probabilities(self, enc, lengths: np.ndarray, *, sort: bool = True) -> np.ndarray:
        """P(positive) for every encoded pair, batch by batch (length-sorted unless sort=False)."""
        import torch

        out = np.empty(len(lengths), dtype=np.float64)
        keys = [k for k in enc.keys() if k in self.input_names]
        with torch.inference_mode():
            for idx in plan_batches(lengths, self.batch_size, sort=sort, max_tokens=self.max_batch_tokens):
                batch = self.tokenizer.pad({k: [enc[k][i] for i in idx] for k in keys}, return_tensors="pt")
                batch = {k: v.to(self.device) for k, v in batch.items()}
                out[idx] = self._forward(batch)
        return out

    def _forward(self, batch) -> np.ndarray:
        import torch

        if self.head.kind == "seq2seq":
            start = self.model.config.decoder_start_token_id
            dec = torch.full((batch["input_ids"].shape[0], 1), int(start or 0), dtype=torch.long, device=self.device)
            logits = self.model(**batch, decoder_input_ids=dec).logits[:, 0, list(self.head.token_ids)]
            return torch.softmax(logits.float(), dim=-1)[:, 1].cpu().double().numpy()
        logits = self.model(**batch).logits.float()
        return torch.softmax(logits, dim=-1)[:, self.head.index].cpu().double().numpy()

    def score_windows(self, claims: Sequence[str], windows: Sequence[Sequence[str]], how: str = "max") -> ScoreBatch:
        """Max (or mean) over each pair's evidence windows (one window = plain truncation); cuts and windows counted per pair.

        `input_tokens` counts evidence tokens given to the model and `truncated_tokens`
        those of them it never saw, so a slice's share of evidence cut is their ratio.
        """
        n = len(claims)
        claim_tokens = self.count(claims)
        budget = self.evidence_budget(claim_tokens)
        failures: list[str | None] = [None] * n
        owner, premises, hyps = [], [], []
        for i, (claim, wins) in enumerate(zip(claims, windows)):
            if budget[i] < 1:
                failures[i] = (f"claim of {claim_tokens[i]} tokens leaves no room for evidence "
                               f"in the {self.window}-token window")
                continue
            for w in wins:
                owner.append(i)
                premises.append(self.prefix + w)
                hyps.append(claim)
        owner_arr = np.asarray(owner, dtype=np.int64)
        scores = np.full(n, np.nan)
        cut = np.zeros(n, dtype=np.int64)
        ev_tokens = np.zeros(n, dtype=np.int64)
        if premises:
            enc, seen, full, cut_flat = self.encode(premises, hyps)
            probs = self.probabilities(enc, seen)
            scores = aggregate(probs, owner_arr, n, how)
            np.add.at(cut, owner_arr, cut_flat)
            np.add.at(ev_tokens, owner_arr, full - self.prefix_tokens)
        scores[[f is not None for f in failures]] = np.nan
        chunks = np.bincount(owner_arr, minlength=n).astype(np.int64)
        return ScoreBatch(scores=scores, truncated_tokens=cut, input_tokens=ev_tokens, chunks=chunks,
                          failures=failures)
