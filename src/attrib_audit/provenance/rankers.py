"""Rankers over a pool: Eq. 1, its single terms, fixed blends and any registered scorer; argmax per unit.

Terms are computed once per pool and shared: lexical Jaccard from the sparse token
matrices, cosine from embeddings computed once per unique text and encoder.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from attrib_audit.engine.cache import ScoreCache
from attrib_audit.engine.runner import score_pairs
from attrib_audit.provenance.corpus import Corpus, Pool
from attrib_audit.scorers.base import Scorer
from attrib_audit.scorers.embedding import EmbeddingScorer
from attrib_audit.scorers.lexical import SIGNATURE as LEXICAL_SIGNATURE


class EmbeddingStore:
    """Unit embeddings of one encoder, each distinct text encoded once per run (keyed by content hash)."""

    def __init__(self, scorer: EmbeddingScorer) -> None:
        self.scorer = scorer
        self._vec: dict[str, np.ndarray] = {}
        self._cut: dict[str, int] = {}

    @property
    def signature(self) -> str:
        return self.scorer.signature

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def matrix(self, texts: list[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        todo = dict((k, t) for k, t in zip(keys, texts) if k not in self._vec)
        if todo:
            emb, cut, _ = self.scorer.embed(list(todo.values()))
            for i, k in enumerate(todo):
                self._vec[k], self._cut[k] = emb[i], int(cut[i])
        return np.stack([self._vec[k] for k in keys]) if keys else np.zeros((0, 0))

    def truncation(self) -> dict[str, int]:
        """Texts embedded so far, how many were cut at the encoder's window and the tokens lost."""
        cuts = np.fromiter(self._cut.values(), dtype=np.int64, count=len(self._cut))
        return {"texts": int(cuts.size), "texts_truncated": int((cuts > 0).sum()), "tokens_truncated": int(cuts.sum()),
                "window": self.scorer.window}


@dataclass
class PoolTerms:
    """Per-entry term values of one pool, each computed at most once."""

    corpus: Corpus
    pool: Pool
    _lex: np.ndarray | None = None
    _sem: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def lex(self) -> np.ndarray:
        """Token Jaccard (the foundation's `token_set`), as a row-wise product of the 0/1 token matrices."""
        if self._lex is None:
            c, p = self.corpus, self.pool
            inter = np.asarray(c.unit_tokens[p.unit].multiply(c.text_tokens[p.text]).sum(axis=1), np.float64).ravel()
            union = np.diff(c.unit_tokens.indptr)[p.unit] + np.diff(c.text_tokens.indptr)[p.text] - inter
            self._lex = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        return self._lex

    def sem(self, store: EmbeddingStore) -> np.ndarray:
        """Cosine of unit and passage embeddings, clipped to [-1, 1] as the foundation's EmbeddingScorer does."""
        if store.signature not in self._sem:
            u = store.matrix(self.corpus.unit_texts)
            t = store.matrix(self.corpus.texts)
            cos = np.einsum("ij,ij->i", u[self.pool.unit], t[self.pool.text])
            self._sem[store.signature] = np.clip(cos, -1.0, 1.0)
        return self._sem[store.signature]


class Ranker(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def signature(self) -> str: ...

    def scores(self, terms: PoolTerms) -> np.ndarray: ...


class LexicalRanker:
    name = "lexical"
    signature = LEXICAL_SIGNATURE

    def scores(self, terms: PoolTerms) -> np.ndarray:
        return terms.lex


@dataclass
class LinearRanker:
    """w_lex·lex + w_sem·sem: semantic-only (0, 1), the fixed blend (0.47, 0.53), or an α-sweep point."""

    name: str
    store: EmbeddingStore
    w_lex: float
    w_sem: float

    @property
    def signature(self) -> str:
        return f"{self.w_lex:g}*lexical+{self.w_sem:g}*[{self.store.signature}]"

    def scores(self, terms: PoolTerms) -> np.ndarray:
        sem = terms.sem(self.store)
        return sem if self.w_lex == 0 and self.w_sem == 1 else self.w_lex * terms.lex + self.w_sem * sem


@dataclass(frozen=True)
class Eq1Weights:
    lex: float = 0.40
    sem: float = 0.45
    hint: float = 0.10
    cite: float = 0.05

    @classmethod
    def parse(cls, text: str) -> "Eq1Weights":
        """'0.4,0.45,0.1,0.05' (lex, sem, hint, cite) or 'lex=0.5,sem=0.5,hint=0,cite=0'."""
        parts = [p.strip() for p in text.split(",") if p.strip()]
        try:
            if all("=" in p for p in parts):
                return cls(**{k.strip(): float(v) for k, v in (p.split("=", 1) for p in parts)})
            if len(parts) == 4:
                return cls(*map(float, parts))
        except (TypeError, ValueError):
            pass
        raise ValueError(f"Eq. 1 weights {text!r}: give four numbers lex,sem,hint,cite or "
                         "lex=..,sem=..,hint=..,cite=..")


@dataclass
class Eq1Ranker:
    """s(u,p) = w_lex·lex + w_sem·sem + w_hint·h(u) + w_cite·c(u,p) (Eq. 1; h is constant within a unit)."""

    store: EmbeddingStore
    weights: Eq1Weights = Eq1Weights()
    name: str = "eq1"

    @property
    def signature(self) -> str:
        w = self.weights
        return f"eq1:{w.lex:g}*lexical+{w.sem:g}*[{self.store.signature}]+{w.hint:g}*hint+{w.cite:g}*cite"

    def scores(self, terms: PoolTerms) -> np.ndarray:
        w, p = self.weights, terms.pool
        return (w.lex * terms.lex + w.sem * terms.sem(self.store) + w.hint * terms.corpus.unit_hint[p.unit]
                + w.cite * p.cited)


@dataclass(kw_only=True)
class ScorerRanker:
    """Any registered scorer (e.g. an NLI head) scoring (unit, passage) pairs through the engine and its cache."""

    scorer: Scorer
    cache: ScoreCache | None
    batch_size: int | None = None
    quiet: bool = True
    failures: int = 0
    truncated_pairs: int = 0

    @property
    def name(self) -> str:
        return self.scorer.name

    @property
    def signature(self) -> str:
        return self.scorer.signature

    def scores(self, terms: PoolTerms) -> np.ndarray:
        c, p = terms.corpus, terms.pool
        batch, _ = score_pairs(self.scorer, [c.unit_texts[u] for u in p.unit], [c.texts[t] for t in p.text],
                               cache=self.cache, batch_size=self.batch_size, quiet=self.quiet)
        self.failures += sum(f is not None for f in batch.failures)
        self.truncated_pairs += int((batch.truncated_tokens > 0).sum())
        return batch.scores


@dataclass(frozen=True)
class Top1:
    entry: np.ndarray  # (U,) pool entry ranked first for each unit
    tied: np.ndarray  # (U,) the runner-up had exactly the same score
    undefined: np.ndarray  # (U,) every score of the unit is NaN (the scorer failed on all its pairs)


def top1(pool: Pool, scores: np.ndarray, tiebreak: np.ndarray, n_units: int) -> Top1:
    """argmax_p s(u,p) per unit; ties go to the smaller text CRC-32, then the earlier entry. NaN ranks last."""
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != pool.unit.shape:
        raise ValueError(f"{s.size} scores for {len(pool)} pool entries")
    key = np.where(np.isnan(s), np.inf, -s)
    order = np.lexsort((np.arange(s.size), tiebreak[pool.text], key, pool.unit))
    su = pool.unit[order]
    starts = np.flatnonzero(np.r_[True, su[1:] != su[:-1]])
    if starts.size != n_units:
        raise ValueError(f"pool covers {starts.size} of {n_units} units")
    first = order[starts]
    has_second = np.r_[starts[1:], s.size] - starts > 1
    second = order[np.minimum(starts + 1, s.size - 1)]
    tied = has_second & (s[first] == s[second])
    return Top1(first, tied, np.isnan(s[first]))
