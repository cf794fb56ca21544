"""NLI entailment scorers: P(entailment | premise = evidence, hypothesis = claim).

`nli-mnli` is a clean MNLI model (default roberta-large-mnli, the paper's clean NLI);
`nli-fever` the paper's FEVER NLI, an MNLI+FEVER+ANLI DeBERTa-v3 head (default
MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli). Any sequence classifier whose id2label names the
entailment class works, BART-MNLI included (a classifier, not a seq2seq LM). Input: the tokenizer's
own pair template, premise first (`<s> ev </s></s> claim </s>`, `[CLS] ev [SEP] claim [SEP]`), as the
models were trained. Long evidence: `mode="truncate"` (default) keeps the model's own cut of the
evidence side and counts it; `mode="chunk"` scores sentence-aligned windows that fit beside the claim
and takes the max (`chunk="mean"` averages).
"""
from __future__ import annotations

from typing import Sequence

from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerOptionError, ScorerSpec, register
from attrib_audit.scorers.chunked import check_aggregation
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.hfmodels import hub_scorer_spec
from attrib_audit.scorers.pairclf import Head, PairClassifier, entailment_index, load_pair_model, model_window
from attrib_audit.scorers.recipe import Recipe
from attrib_audit.scorers.resolve import Resolved
from attrib_audit.text.chunk import sentence_windows
from attrib_audit.text.sentences import SPLITTER

MODES = ("truncate", "chunk")


class NLIScorer(Scorer):
    batch_size = 64  # pairs per engine batch (cache commit); forward passes are sized by tokens
    window: int  # set from the model when it loads (always a number here)

    def __init__(self, name: str, resolved: Resolved, *, mode: str = "truncate", device: str = "cpu",
                 window: int | None = None, model_batch: int = 16, chunk: str = "max", trust_remote_code: bool = False,
                 dtype: str = "float32", install_hint: str = "") -> None:
        if mode not in MODES:
            raise ScorerOptionError(f"{name}: mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.name, self.resolved, self.mode = name, resolved, mode
        self.chunk = check_aggregation(chunk, name)  # how windows combine in mode=chunk
        tokenizer, model = load_pair_model(resolved, device, what=name, install_hint=install_hint, kind="seqcls",
                                           trust_remote_code=trust_remote_code, dtype=dtype)
        index, label = entailment_index(model.config, f"{name} ({resolved.location})")
        win = model_window(tokenizer, model.config, window)
        self.window = win  # tokens the model sees per input (the window option reruns it at another)
        self.clf = PairClassifier(tokenizer, model, Head("seqcls", index=index, label=label), window=win,
                                  device=device, batch_size=model_batch, max_batch_tokens=model_batch * win)
        self.n_labels = len(model.config.id2label)
        self.recipe = Recipe(
            input="pair(premise=evidence, hypothesis=claim), the tokenizer's pair template",
            window=win, cut="evidence (only_first)",
            chunk_unit="none" if mode == "truncate" else "tokens",
            chunk_size=0 if mode == "truncate" else win,
            chunk_rule="none: the model's own cut" if mode == "truncate"
            else "sentence windows that fit beside the claim (over-long sentences split by words)",
            claim_split="none", sentences="none" if mode == "truncate" else SPLITTER,
            aggregation="single input" if mode == "truncate" else f"{self.chunk} over windows", precision=dtype,
            label=f"softmax(logits)[{index}] ({label!r} of {self.n_labels}-way id2label)",
            source="MNLI convention: premise first (transformers pair encoding)")
        self._fingerprint = f"{weights_fingerprint(resolved)}:{library_versions('transformers', 'torch')}"

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        return (f"{self.name}:nli:model={base}:weights={self._fingerprint}:{self.n_labels}way:{self.clf.head.tag}:"
                f"window={self.clf.window}:mode={self.mode}:recipe={self.recipe.digest()}:v2"
                + (f":agg={self.chunk}" if self.mode == "chunk" and self.chunk != "max" else ""))

    def windows(self, claims: Sequence[str], evidences: Sequence[str]) -> list[list[str]]:
        """The evidence texts each pair is scored on: itself, or its sentence windows that fit beside the claim."""
        if self.mode == "truncate":
            return [[e] for e in evidences]
        budgets = self.clf.evidence_budget(self.clf.count(claims))
        return [sentence_windows(e, int(b), self.clf.count) if b >= 1 else [e] for e, b in zip(evidences, budgets)]

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        return self.clf.score_windows(claims, self.windows(claims, evidences), self.chunk)


def _spec(name: str, hub_id: str, description: str) -> ScorerSpec:
    return hub_scorer_spec(name, hub_id, description, "nli", lambda resolved, **kw: NLIScorer(name, resolved, **kw),
                           NLIScorer, sentences=f"none (mode=chunk: {SPLITTER})")


NLI_MNLI_HUB = "roberta-large-mnli"
# the paper's FEVER NLI: "an off-the-shelf DeBERTa-v3 MNLI/FEVER/ANLI entailment head" (Table 2, Table 1)
NLI_FEVER_HUB = "MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli"

register(_spec("nli-mnli", NLI_MNLI_HUB, "P(entailment), MNLI model (roberta-large-mnli); evidence=premise"))
register(_spec("nli-fever", NLI_FEVER_HUB, "P(entailment), DeBERTa-v3 MNLI/FEVER/ANLI model (the paper's FEVER NLI)"))
