"""AUROC by ranks (Mann–Whitney U, ties counted half), for one sample or a whole bootstrap at once."""
from __future__ import annotations

import numpy as np


def _check(scores: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels)
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError(f"scores {s.shape} and labels {y.shape} must be 1-D and the same length")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN: drop (and count) failed rows before computing AUROC")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0/1")
    return s, y.astype(bool)


def average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given their mean rank (as scipy.stats.rankdata(method='average'))."""
    _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[inv]


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(score_pos > score_neg) + ½ P(tie); NaN when a class is absent (AUROC undefined)."""
    s, y = _check(scores, labels)
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    r = average_ranks(s)
    u = r[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def weighted_auroc(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUROC for each row of a (B, n) weight matrix, in one pass of array operations.

    A bootstrap resample is a vector of multiplicities, so every resample shares the
    same sort of the scores: tie-bins are formed once, then positive and negative
    weight per bin are summed with `np.add.reduceat`. AUC_b = Σ_g P_bg (N_b,<g + ½ N_bg) / (P_b N_b).
    Rows whose resample holds only one class give NaN.
    """
    s, y = _check(scores, labels)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    if w.shape[1] != s.size:
        raise ValueError(f"weights have {w.shape[1]} columns for {s.size} scores")
    order = np.argsort(s, kind="mergesort")
    s_sorted = s[order]
    starts = np.flatnonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1]])
    ws = w[:, order]
    ys = y[order]
    pos = np.add.reduceat(ws * ys, starts, axis=1)
    neg = np.add.reduceat(ws * ~ys, starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    num = (pos * (below + 0.5 * neg)).sum(axis=1)
    den = pos.sum(axis=1) * neg.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
