"""Chunk-and-aggregate for the encoder scorers (minilm-chunk, mpnet-chunk, bertscore-chunk).

Evidence longer than the encoder's window is split into sentence windows that fit it
(text.chunk.sentence_windows), the claim is scored against every window, and the window
scores are aggregated per pair by max (MiniCheck's rule: one window that supports the
claim is enough) or mean. The flat (claim, window) lists go to the encoder in ONE call,
so deduplication and length-sorted batching cover every window of every pair.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScorerOptionError
from attrib_audit.text.chunk import Cost, sentence_windows

AGGREGATIONS = ("max", "mean")


def check_aggregation(how: str, what: str) -> str:
    if how not in AGGREGATIONS:
        raise ScorerOptionError(f"{what}: chunk must be one of {', '.join(AGGREGATIONS)}, got {how!r}")
    return how


@dataclass(frozen=True)
class PairWindows:
    """Every evidence window of every pair, flat: window k belongs to pair owner[k]."""

    owner: np.ndarray  # (W,) int64
    texts: list[str]  # (W,)
    n_pairs: int

    @property
    def chunks(self) -> np.ndarray:
        return np.bincount(self.owner, minlength=self.n_pairs).astype(np.int64)


def pair_windows(evidences: Sequence[str], budget: int, cost: Cost) -> PairWindows:
    """Sentence windows of each evidence (each distinct evidence is split once)."""
    split = {e: sentence_windows(e, budget, cost) for e in dict.fromkeys(evidences)}
    owner = np.fromiter((i for i, e in enumerate(evidences) for _ in split[e]), dtype=np.int64)
    return PairWindows(owner, [w for e in evidences for w in split[e]], len(evidences))


def aggregate(values: np.ndarray, owner: np.ndarray, n: int, how: str) -> np.ndarray:
    """Per-pair max or mean of the window values; a pair with no window gets NaN."""
    v = np.asarray(values, dtype=np.float64)
    counts = np.bincount(owner, minlength=n)
    if how == "max":
        out = np.full(n, -np.inf)
        np.maximum.at(out, owner, v)
    else:
        out = np.bincount(owner, weights=v, minlength=n) / np.maximum(counts, 1)
    return np.where(counts > 0, out, np.nan)


def per_pair_sum(values: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(owner, weights=np.asarray(values, dtype=np.float64), minlength=n).astype(np.int64)
