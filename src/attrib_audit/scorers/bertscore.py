"""BERTScore F1 (claim = candidate, evidence = reference) through `bert-score`, on a local encoder."""
from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch, ScorerUnavailable
from attrib_audit.scorers.embedding import count_tokens
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable


class BertScoreScorer:
    """Greedy token matching of contextual embeddings; both sides are cut at the encoder's window and counted.

    `idf=True` needs an `idf_corpus` (the reference texts idf weights are computed on);
    its hash enters the signature, since the weights change the scores.
    """

    name = "bertscore"
    batch_size = 32

    def __init__(self, resolved: Resolved, *, num_layers: int = 4, idf: bool = False,
                 idf_corpus: Sequence[str] | None = None, rescale_with_baseline: bool = False,
                 baseline_path: str | None = None, device: str = "cpu", install_hint: str = "") -> None:
        import bert_score

        if idf and not idf_corpus:
            raise ValueError("bertscore idf=True needs idf_corpus (the reference sentences idf is computed on)")
        if rescale_with_baseline and not baseline_path:
            raise ScorerUnavailable("bertscore: baseline rescaling needs baseline_path for a local model "
                                    "(bert-score ships baselines only for hub model names)")
        self.resolved, self.num_layers, self.idf, self.rescale = resolved, int(num_layers), bool(idf), bool(rescale_with_baseline)
        self._idf_hash = hashlib.sha256("\x1e".join(idf_corpus).encode()).hexdigest()[:12] if idf else "none"
        self.scorer = load_or_unavailable(
            resolved,
            lambda loc: bert_score.BERTScorer(model_type=loc, num_layers=self.num_layers, idf=self.idf,
                                              idf_sents=list(idf_corpus) if idf else None, device=device,
                                              rescale_with_baseline=self.rescale, baseline_path=baseline_path,
                                              lang="en" if self.rescale else None),
            what="bertscore", install_hint=install_hint)
        tok = self.scorer._tokenizer
        max_pos = getattr(self.scorer._model.config, "max_position_embeddings", tok.model_max_length)
        self.window = int(min(tok.model_max_length, max_pos))
        self._hash = self.scorer.hash
        self._fingerprint = (f"{weights_fingerprint(resolved)}:"
                             f"{library_versions('bert-score', 'transformers', 'torch')}")

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        return (f"bertscore:F1:model={base}:weights={self._fingerprint}:layers={self.num_layers}:idf={self._idf_hash}:"
                f"rescale={self.rescale}:window={self.window}:{self._hash.split('_')[-1] if '_' in self._hash else ''}:v1")

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        _, _, f1 = self.scorer.score(list(claims), list(evidences), batch_size=self.batch_size, verbose=False)
        tok = self.scorer._tokenizer
        n_c, n_e = count_tokens(tok, [c.strip() for c in claims]), count_tokens(tok, [e.strip() for e in evidences])
        cut = np.maximum(n_c - self.window, 0) + np.maximum(n_e - self.window, 0)
        return ScoreBatch.plain(f1.double().numpy(), truncated=cut, input_tokens=n_c + n_e)
