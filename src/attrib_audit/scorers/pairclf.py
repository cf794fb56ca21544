"""Shared machinery of the (evidence, claim) classifiers: NLI, MiniCheck, AlignScore, HHEM.

Two input templates, named by each scorer's Recipe:
- "pair": the tokenizer's own pair template with premise = evidence (or one chunk of it) first and
  hypothesis = claim second (NLI heads, AlignScore); only the evidence side is cut (`only_first`);
- "joined": one text `prefix + evidence + eos + claim` (MiniCheck's `doc + eos_token + claim`, with
  "predict: " for Flan-T5). When it is over the window the evidence tokens before the eos are cut,
  never the claim.
Every cut is counted exactly: untruncated evidence + claim + special tokens minus what the model saw.
A claim that leaves no room for evidence is a reported failure, never a silently mangled input.
Batches are sorted by token length so padding is small; everything runs under
`torch.inference_mode`, in float32 on every device unless the scorer's `dtype` option asks for half precision.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch, ScorerLoadError
from attrib_audit.scorers.chunked import aggregate
from attrib_audit.scorers.hfmodels import refuse_hub_offline, refuse_remote_code, require, torch_device, torch_dtype
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable

# position ids of these families start after the padding index, so 514 positions hold 512 tokens
_POSITION_OFFSET = {"roberta": 2, "xlm-roberta": 2, "xlm-roberta-xl": 2, "camembert": 2, "longformer": 2,
                    "mpnet": 2, "data2vec-text": 2}
_RELATIVE = {"t5", "mt5", "umt5", "longt5"}
_NEGATED = re.compile(r"\b(not|non|no)\b|^(not|non)[_ -]?")


class ModelConfigError(ScorerLoadError):
    """The weights load but cannot be read as this scorer needs (e.g. no entailment label): an error, not absence."""


def entailment_index(config, what: str, keys: Sequence[str] = ("entail",)) -> tuple[int, str]:
    """The class index whose `id2label` name contains one of `keys` (case-insensitive), negations excluded.

    'not_entailment' is the other class of a 2-way head, not the entailment class; a
    config with no such label, or with two, is an error rather than a guess.
    """
    id2label = {int(i): str(lab) for i, lab in (getattr(config, "id2label", None) or {}).items()}
    hits = [(i, lab) for i, lab in sorted(id2label.items())
            if any(k in lab.lower() for k in keys) and not _NEGATED.search(lab.lower())]
    if len(hits) != 1:
        found = "none" if not hits else "several: " + ", ".join(lab for _, lab in hits)
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


def is_seq2seq_lm(config) -> bool:
    """An encoder-decoder read at decoding step 1 (T5); a BART/T5 *sequence classifier* is not one."""
    archs = getattr(config, "architectures", None) or []
    return bool(config.is_encoder_decoder) and not any(a.endswith("ForSequenceClassification") for a in archs)


def refuse_headless(info: dict, loc: str, what: str) -> None:
    """Weights missing from a checkpoint would be freshly initialised (a base encoder has no trained
    classification head) and score noise behind a library warning: refuse in one line instead."""
    missing = sorted(k for k in info.get("missing_keys") or () if not k.endswith("position_ids"))
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise ModelConfigError(f"{what}: {loc} has no trained weights for {shown}; they would be freshly "
                               f"initialised and score noise (a base model without its fine-tuned head?)")


def load_pair_model(resolved: Resolved, device: str, *, what: str, install_hint: str, kind: str = "auto",
                    trust_remote_code: bool = False, dtype: str = "float32"):
    """(tokenizer, model) from a local folder or cached hub id.

    kind="seqcls" loads a sequence classifier (NLI heads, BART-MNLI included); "auto" also takes a
    seq2seq LM (MiniCheck-Flan-T5). A checkpoint that would need code from its repository is refused
    unless `trust_remote_code`; one with untrained (missing) weights is refused. The weights load in
    `dtype` (float32 unless asked) through `from_pretrained`, so a model's float32 guard (T5's `wo`) holds.
    """
    require("transformers", what)
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoModelForSequenceClassification, AutoTokenizer

    device = torch_device(device, what)
    weights_dtype = torch_dtype(dtype, what)
    refuse_hub_offline(resolved, what, install_hint)

    def load(loc: str):
        try:
            config = AutoConfig.from_pretrained(loc, trust_remote_code=trust_remote_code)
        except ValueError as exc:
            refuse_remote_code(loc, what, exc)
            raise
        seq2seq = is_seq2seq_lm(config)
        if seq2seq and kind == "seqcls":
            raise ModelConfigError(f"{what}: {loc} is a sequence-to-sequence LM "
                                   f"({', '.join(config.architectures or [])}), not a classifier")
        cls = AutoModelForSeq2SeqLM if seq2seq else AutoModelForSequenceClassification
        model, info = cls.from_pretrained(loc, dtype=weights_dtype, output_loading_info=True,
                                          trust_remote_code=trust_remote_code)
        refuse_headless(info, loc, what)
        return AutoTokenizer.from_pretrained(loc, trust_remote_code=trust_remote_code), model.to(device).eval()

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
    """P(claim supported by premise) for (premise, claim) inputs built by one template, with exact cut counts.

    template="pair": the tokenizer's pair encoding, premise first, cut `only_first`;
    template="joined": one text `prefix + premise + eos + claim`, the premise tokens cut from their end.
    """

    def __init__(self, tokenizer, model, head: Head, *, window: int, device: str, template: str = "pair",
                 prefix: str = "", batch_size: int = 16, max_batch_tokens: int | None = None) -> None:
        if template not in ("pair", "joined"):
            raise ValueError(f"unknown input template {template!r}")
        tokenizer.truncation_side = "right"
        self.tokenizer, self.model, self.head = tokenizer, model, head
        self.window, self.device, self.template, self.prefix = int(window), device, template, prefix
        self.batch_size, self.max_batch_tokens = int(batch_size), max_batch_tokens
        self.n_special = int(tokenizer.num_special_tokens_to_add(pair=template == "pair"))
        if template == "joined":
            self.n_special += 1  # the eos between evidence and claim
            # the special tokens a single text starts with (<s>, [CLS]; none for T5)
            probe = tokenizer("a", add_special_tokens=False)["input_ids"]
            full = tokenizer("a")["input_ids"]
            self.lead = next(i for i in range(len(full)) if full[i:i + len(probe)] == probe)
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
        """The model inputs, each premise's full token count (prefix included) and the premise tokens cut."""
        full = self.count(premises)
        if self.template == "pair":
            claim_tok = self.count(claims)
            enc = self.tokenizer(list(premises), list(claims), truncation="only_first", max_length=self.window,
                                 verbose=False)
            seen = np.fromiter((len(x) for x in enc["input_ids"]), dtype=np.int64, count=len(premises))
            return {k: list(v) for k, v in enc.items()}, full, full + claim_tok + self.n_special - seen
        return self._encode_joined(premises, claims, full)

    def _encode_joined(self, premises: Sequence[str], claims: Sequence[str], full: np.ndarray):
        """`prefix + premise + eos + claim` tokenised as one text (the authors' input, byte for byte when it
        fits); over the window, the last premise tokens before the eos are dropped, never the claim."""
        tok = self.tokenizer
        eos = tok.eos_token
        ids_all = tok([p + eos + c for p, c in zip(premises, claims)], truncation=False, verbose=False)["input_ids"]
        eos_id = tok.convert_tokens_to_ids(eos)
        wants_types = "token_type_ids" in self.input_names
        out: dict[str, list] = {"input_ids": [], "attention_mask": [],
                                **({"token_type_ids": []} if wants_types else {})}
        cut = np.zeros(len(premises), dtype=np.int64)
        for i, ids in enumerate(ids_all):
            split = self.lead + int(full[i])  # the eos after the premise
            if ids[split] != eos_id:
                raise ModelConfigError(f"tokenizer {type(tok).__name__} merges evidence and claim across its eos "
                                       f"token; the joined input cannot be cut on the evidence side")
            over = min(max(len(ids) - self.window, 0), int(full[i]) - self.prefix_tokens)
            cut[i] = over
            ids = ids[:split - over] + ids[split:] if over else list(ids)
            out["input_ids"].append(ids)
            out["attention_mask"].append([1] * len(ids))
            if wants_types:
                out["token_type_ids"].append([0] * len(ids))
        return out, full, cut

    def probabilities(self, enc, lengths: np.ndarray, *, sort: bool = True) -> np.ndarray:
        """P(positive) for every encoded input, batch by batch (length-sorted unless sort=False)."""
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
        if logits.dim() == 3:  # a token classifier read at its first position (HHEM's T5ForTokenClassification)
            logits = logits[:, 0, :]
        return torch.softmax(logits, dim=-1)[:, self.head.index].cpu().double().numpy()

    def score_windows(self, claims: Sequence[str], windows: Sequence[Sequence[str]], how: str = "max") -> ScoreBatch:
        """Max (or mean) over each pair's evidence windows (one window = plain truncation); cuts and windows counted
        per pair.

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
            enc, full, cut_flat = self.encode(premises, hyps)
            lengths = np.fromiter((len(x) for x in enc["input_ids"]), dtype=np.int64, count=len(premises))
            probs = self.probabilities(enc, lengths)
            scores = aggregate(probs, owner_arr, n, how)
            np.add.at(cut, owner_arr, cut_flat)
            np.add.at(ev_tokens, owner_arr, full - self.prefix_tokens)
        scores[[f is not None for f in failures]] = np.nan
        chunks = np.bincount(owner_arr, minlength=n).astype(np.int64)
        return ScoreBatch(scores=scores, truncated_tokens=cut, input_tokens=ev_tokens, chunks=chunks,
                          failures=failures)
