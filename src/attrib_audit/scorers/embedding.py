"""Cosine of sentence-transformer embeddings (all-MiniLM-L6-v2, all-mpnet-base-v2)."""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable


def count_tokens(tokenizer, texts: Sequence[str]) -> np.ndarray:
    """Token counts with special tokens and no truncation, so cuts at the window can be reported."""
    if not texts:
        return np.zeros(0, dtype=np.int64)
    enc = tokenizer(list(texts), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
    return np.fromiter((len(ids) for ids in enc), dtype=np.int64, count=len(enc))


@lru_cache(maxsize=4)
def load_sentence_transformer(location: str, device: str):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(location, device=device)


class EmbeddingScorer:
    """cos(embed(claim), embed(evidence)); texts beyond the encoder's window are cut and counted."""

    batch_size = 64

    def __init__(self, name: str, resolved: Resolved, *, device: str = "cpu", install_hint: str = "") -> None:
        self.name = name
        self.resolved = resolved
        self.device = device
        self.model = load_or_unavailable(resolved, lambda loc: load_sentence_transformer(loc, device),
                                         what=name, install_hint=install_hint)
        self.window = int(self.model.max_seq_length)
        self._fingerprint = (f"{weights_fingerprint(resolved)}:"
                             f"{library_versions('sentence-transformers', 'transformers', 'torch')}")

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        return f"{self.name}:cosine:model={base}:weights={self._fingerprint}:max_seq={self.window}:normalize:v1"

    def embed(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Unit embeddings of unique texts and the tokens each lost to the window."""
        emb = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                normalize_embeddings=True, show_progress_bar=False)
        n_tok = count_tokens(self.model.tokenizer, texts)
        return emb.astype(np.float64), np.maximum(n_tok - self.window, 0), n_tok

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        uniq = list(dict.fromkeys([*claims, *evidences]))
        pos = {t: i for i, t in enumerate(uniq)}
        emb, cut, n_tok = self.embed(uniq)
        ci = np.fromiter((pos[c] for c in claims), dtype=np.int64, count=len(claims))
        ei = np.fromiter((pos[e] for e in evidences), dtype=np.int64, count=len(evidences))
        cos = np.einsum("ij,ij->i", emb[ci], emb[ei])
        return ScoreBatch.plain(np.clip(cos, -1.0, 1.0), truncated=cut[ci] + cut[ei], input_tokens=n_tok[ci] + n_tok[ei])
