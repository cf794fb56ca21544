"""BERTScore F1 (claim = candidate, evidence = reference) through `bert-score`.

- `bertscore`, `bertscore-chunk`: MiniLM-L6 layer 4, the encoder installed with attrib-audit: an offline stand-in,
  not the BERTScore papers report.
- `bertscore-roberta`: bert_score's English default (`bert_score.score(..., lang="en")`): roberta-large, layer 17
  (bert_score's `model2layers`), F1, no idf, no baseline rescaling; runs when roberta-large's weights are here
  (--model-path, $ATTRIB_AUDIT_BERTSCORE_ROBERTA, or the Hugging Face cache; no PyPI package ships them).
"""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import (
    ScoreBatch,
    Scorer,
    ScorerOptionError,
    ScorerSpec,
    ScorerUnavailable,
    register,
    resolver_check,
)
from attrib_audit.scorers.chunked import PairWindows, aggregate, check_aggregation, pair_windows, per_pair_sum
from attrib_audit.scorers.embedding import MINILM_INSTALL, chunk_option, count_tokens, local_identity, resolve_minilm
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.hfmodels import hub_install_hint, hub_resolver
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable
from attrib_audit.text.sentences import SPLITTER


class BertScoreScorer(Scorer):
    """Greedy token matching of contextual embeddings; both sides are cut at the encoder's window and counted.

    `idf=True` needs an `idf_corpus` (the reference texts idf weights are computed on);
    its hash enters the signature, since the weights change the scores. `window` lowers the
    encoder's window (window-sensitivity reruns); `chunk="max"|"mean"` scores the claim against
    sentence windows of the evidence that fit and aggregates their F1 (scorers.chunked).
    """

    batch_size = 32
    window: int  # set from the model when it loads (always a number here)

    def __init__(self, resolved: Resolved, *, num_layers: int = 4, idf: bool = False,
                 idf_corpus: Sequence[str] | None = None, rescale_with_baseline: bool = False,
                 baseline_path: str | None = None, device: str = "cpu", install_hint: str = "",
                 window: int | None = None, chunk: str | None = None, name: str = "bertscore") -> None:
        import bert_score

        self.name = name
        self.chunk = check_aggregation(chunk, name) if chunk is not None else None

        if idf and not idf_corpus:
            raise ValueError("bertscore idf=True needs idf_corpus (the reference sentences idf is computed on)")
        if rescale_with_baseline and not baseline_path:
            raise ScorerUnavailable("bertscore: baseline rescaling needs baseline_path for a local model "
                                    "(bert-score ships baselines only for hub model names)")
        self.resolved, self.num_layers = resolved, int(num_layers)
        self.idf, self.rescale = bool(idf), bool(rescale_with_baseline)
        self._idf_hash = hashlib.sha256("\x1e".join(idf_corpus or ()).encode()).hexdigest()[:12] if idf else "none"
        self.scorer = load_or_unavailable(
            resolved,
            lambda loc: bert_score.BERTScorer(model_type=loc, num_layers=self.num_layers, idf=self.idf,
                                              idf_sents=list(idf_corpus or ()) if idf else None, device=device,
                                              rescale_with_baseline=self.rescale, baseline_path=baseline_path,
                                              lang="en" if self.rescale else None),
            what="bertscore", install_hint=install_hint)
        tok = self.scorer._tokenizer
        max_pos = getattr(self.scorer._model.config, "max_position_embeddings", tok.model_max_length)
        self.window = int(min(tok.model_max_length, max_pos))
        if window:
            if not 8 <= int(window) <= self.window:
                raise ScorerOptionError(f"{name}: window must be between 8 and the encoder's {self.window} "
                                        f"tokens, got {window}")
            self.window = tok.model_max_length = int(window)  # bert_score cuts at tokenizer.model_max_length
        self._hash = self.scorer.hash
        self._fingerprint = (f"{weights_fingerprint(resolved)}:"
                             f"{library_versions('bert-score', 'transformers', 'torch')}")

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        tail = self._hash.split('_')[-1] if '_' in self._hash else ''
        sig = (f"{self.name}:F1:model={base}:weights={self._fingerprint}:layers={self.num_layers}:idf={self._idf_hash}:"
               f"rescale={self.rescale}:window={self.window}:{tail}:v1")
        return sig + (f":chunk={self.chunk}:sentence-windows" if self.chunk else "")

    def _f1(self, claims: Sequence[str], references: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """F1 per (claim, reference) in one bert_score call (it dedupes and length-sorts), and each side's token
        count."""
        _, _, f1 = self.scorer.score(list(claims), list(references), batch_size=self.batch_size, verbose=False)
        tok = self.scorer._tokenizer
        return (f1.double().numpy(), count_tokens(tok, [c.strip() for c in claims]),
                count_tokens(tok, [r.strip() for r in references]))

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        if self.chunk:
            return self.score_chunked(claims, evidences)
        f1, n_c, n_e = self._f1(claims, evidences)
        cut = np.maximum(n_c - self.window, 0) + np.maximum(n_e - self.window, 0)
        return ScoreBatch.plain(f1, truncated=cut, input_tokens=n_c + n_e)

    def windows(self, evidences: Sequence[str]) -> PairWindows:
        tok = self.scorer._tokenizer
        return pair_windows(evidences, self.window - tok.num_special_tokens_to_add(pair=False),
                            lambda texts: count_tokens(tok, texts, special=False))

    def score_chunked(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        """F1 of the claim against every window of every pair in one call, aggregated per pair."""
        assert self.chunk is not None  # score() comes here only with a chunk rule
        n = len(claims)
        win = self.windows(evidences)
        f1, n_c, n_w = self._f1([claims[i] for i in win.owner], win.texts)
        claim_tok = np.zeros(n, dtype=np.int64)
        claim_tok[win.owner] = n_c  # a claim is counted (and any cut of it) once per pair, not once per window
        cut = np.maximum(claim_tok - self.window, 0) + per_pair_sum(np.maximum(n_w - self.window, 0), win.owner, n)
        return ScoreBatch(scores=aggregate(f1, win.owner, n, self.chunk), truncated_tokens=cut,
                          input_tokens=claim_tok + per_pair_sum(n_w, win.owner, n), chunks=win.chunks,
                          failures=[None] * n)


def _bertscore(chunked: bool = False):
    def build(path: str | None = None, device: str = "cpu", num_layers: int = 4, idf: bool = False,
              idf_corpus=None, rescale_with_baseline: bool = False, baseline_path: str | None = None,
              window: int | None = None, chunk: str | None = None) -> Scorer:
        return BertScoreScorer(resolve_minilm(path), num_layers=num_layers, idf=idf, idf_corpus=idf_corpus,
                               rescale_with_baseline=rescale_with_baseline, baseline_path=baseline_path,
                               device=device, install_hint=MINILM_INSTALL, window=window,
                               chunk=chunk_option("bertscore", chunk, chunked),
                               name="bertscore-chunk" if chunked else "bertscore")
    return build


_IDENTITY = local_identity(resolve_minilm, "bert-score", "transformers", "torch")


def _bertscore_identity(path: str | None = None, baseline_path: str | None = None, **_options) -> str | None:
    """A custom rescaling baseline is a file the signature does not hash: with one, only loading tells."""
    return None if baseline_path else _IDENTITY(path)


register(ScorerSpec(name="bertscore", factory=_bertscore(),
                    description="BERTScore F1 on MiniLM-L6 layer 4: an offline stand-in, not bert_score's default "
                    "(roberta-large layer 17: bertscore-roberta)", family="embedding",
                    check=lambda: resolver_check(resolve_minilm), install=MINILM_INSTALL, identity=_bertscore_identity,
                    sentences="none"))
register(ScorerSpec(name="bertscore-chunk", factory=_bertscore(chunked=True),
                    description="BERTScore F1 on MiniLM-L6 layer 4, max over sentence windows of the evidence",
                    family="embedding",
                    check=lambda: resolver_check(resolve_minilm), install=MINILM_INSTALL, identity=_bertscore_identity,
                    sentences=SPLITTER))

BERTSCORE_ROBERTA_HUB = "roberta-large"  # bert_score's lang2model["en"]
BERTSCORE_ROBERTA_LAYER = 17  # bert_score's model2layers["roberta-large"]
resolve_bertscore_roberta = hub_resolver("bertscore-roberta", BERTSCORE_ROBERTA_HUB)
BERTSCORE_ROBERTA_INSTALL = hub_install_hint("bertscore-roberta", BERTSCORE_ROBERTA_HUB)


def _bertscore_roberta(path: str | None = None, device: str = "cpu", window: int | None = None) -> Scorer:
    """bert_score's English default, as `bert_score.score(cands, refs, lang="en")` computes it: roberta-large,
    layer 17, F1, no idf, no baseline rescaling (the BERTScore a paper reports unless it says otherwise)."""
    return BertScoreScorer(resolve_bertscore_roberta(path), num_layers=BERTSCORE_ROBERTA_LAYER, device=device,
                           install_hint=BERTSCORE_ROBERTA_INSTALL, window=window, name="bertscore-roberta")


register(ScorerSpec(name="bertscore-roberta", factory=_bertscore_roberta,
                    description="BERTScore F1, bert_score's English default: roberta-large layer 17, no idf, "
                                "no rescaling",
                    family="embedding", check=lambda: resolver_check(resolve_bertscore_roberta),
                    install=BERTSCORE_ROBERTA_INSTALL,
                    needs=("needs roberta-large's weights (about 1.4 GB)",),
                    identity=local_identity(resolve_bertscore_roberta, "bert-score", "transformers", "torch"),
                    sentences="none"))
