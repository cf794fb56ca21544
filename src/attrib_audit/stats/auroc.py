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


def average_ranks(x: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """1-based ranks with ties given their mean rank (as scipy.stats.rankdata(method='average')).

    With `weights`, the ranks in the pool where row i stands for weights[i] copies of itself:
    W(below) + (W(tied) + 1) / 2 (integer weights: the ranks of the rows repeated).

    Args:
        x: 1-D values to rank.
        weights: Optional non-negative weight per value (None: each counts once).

    Returns:
        The float ranks, one per value, in the order of `x`.

    Examples:
        >>> average_ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist()
        [3.5, 1.0, 3.5, 2.0]
    """
    _, inv, counts = np.unique(x, return_inverse=True, return_counts=True)
    if weights is not None:
        counts = np.bincount(inv, weights=np.asarray(weights, dtype=np.float64), minlength=counts.size)
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[inv]


def auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(score_pos > score_neg) + ½ P(tie): the Mann–Whitney AUROC of one sample.

    Args:
        scores: 1-D scores, higher meaning "supported"; no NaN (drop and count failed rows first).
        labels: 0/1 labels of the same length (1 = supported).

    Returns:
        The AUROC in [0, 1], or NaN when a class is absent (AUROC undefined).

    Raises:
        ValueError: Shapes differ, a score is NaN or a label is not 0/1.

    Examples:
        >>> auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
        0.75
    """
    s, y = _check(scores, labels)
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    r = average_ranks(s)
    u = r[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


_BLOCK_CELLS = 1 << 16  # bins x resamples per block of cluster_auroc: 512 KB per array, within a core's L2 cache
_MIN_WIDTH = 256  # resamples per block at least, so a block's row-wise cumsum stays whole-row adds


def _cumsum_down(a: np.ndarray) -> np.ndarray:
    """np.cumsum(a, axis=0) of a C-contiguous (G, B) array, as a loop of whole-row adds: the same additions in the
    same order, faster than numpy's strided accumulate once rows are long (B resamples); short rows use numpy."""
    if a.shape[1] < 64:
        return np.cumsum(a, axis=0)
    out = a.copy()
    for g in range(1, out.shape[0]):
        np.add(out[g - 1], out[g], out=out[g])
    return out


def cluster_auroc(scores: np.ndarray, labels: np.ndarray, codes: np.ndarray, counts: np.ndarray,
                  row_weights: np.ndarray | None = None) -> np.ndarray:
    """AUROC for each resample given as cluster multiplicities `counts` (B, K); row i belongs to cluster codes[i].

    Every resample shares one sort of the scores: tie-bins are formed once and a sparse
    (K, G) matrix holds each cluster's positives (negatives) per bin, so the per-resample
    bin weights are one sparse-dense product and no (B, n) matrix is ever built.
    AUC_b = Σ_g P_bg (N_b,<g + ½ N_bg) / (P_b N_b). `row_weights` (e.g. inverse inclusion
    probabilities) multiply each row's count, so the Horvitz–Thompson weighted AUROC and its
    weighted clustered bootstrap are the same product.

    Args:
        scores: 1-D scores without NaN.
        labels: 0/1 labels, one per score.
        codes: Cluster index (0..K−1) of each score.
        counts: (B, K) multiplicity of each cluster in each resample, or one (K,) resample.
        row_weights: Optional positive finite weight per score.

    Returns:
        (B,) AUROCs; NaN for a resample that holds one class only.

    Raises:
        ValueError: Shapes disagree, a code exceeds K − 1, or a weight is not positive and finite.

    Examples:
        >>> s, y, codes = np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1]), np.array([0, 0, 1, 1])
        >>> cluster_auroc(s, y, codes, np.array([[1.0, 1.0], [2.0, 0.0]])).tolist()  # the sample; cluster 0 twice
        [0.75, nan]
    """
    from scipy import sparse

    s, y = _check(scores, labels)
    c = np.asarray(counts, dtype=np.float64)
    c = c[None, :] if c.ndim == 1 else c
    codes = np.asarray(codes, dtype=np.int64)
    if codes.shape != s.shape:
        raise ValueError("codes must give one cluster per score")
    if codes.size and codes.max() >= c.shape[1]:
        raise ValueError(f"counts have {c.shape[1]} clusters but codes reach {codes.max()}")
    _, bins = np.unique(s, return_inverse=True)
    n_bins = int(bins.max()) + 1 if bins.size else 0
    shape = (c.shape[1], n_bins)
    w = np.ones(s.size) if row_weights is None else np.asarray(row_weights, dtype=np.float64)
    if w.shape != s.shape or not (np.isfinite(w).all() and (w > 0).all()):
        raise ValueError("row_weights must be one positive finite weight per score")
    w = w / w.max() if w.size else w  # AUROC is scale-free in w; 1/π = 1e200 must not overflow w_i·w_j to inf
    # (G, K) row-major times the (K, B) counts made contiguous: the same sums in the same order as the (K, G)
    # matrix's transpose gave, without scipy copying the counts per product; cumsum runs down the contiguous axis.
    # Resamples are independent columns, taken a cache-sized block at a time (G x width floats) rather than as
    # whole (G, B) arrays that every step would stream from memory again.
    ct = c.T
    pos_m = sparse.csr_matrix((w[y], (bins[y], codes[y])), shape=shape[::-1])
    neg_m = sparse.csr_matrix((w[~y], (bins[~y], codes[~y])), shape=shape[::-1])
    n_boot = ct.shape[1]
    out = np.empty(n_boot)
    width = max(_MIN_WIDTH, _BLOCK_CELLS // max(n_bins, 1))
    start = 0
    while start < n_boot:
        stop = min(start + width, n_boot)
        stop += 1 if n_boot - stop == 1 else 0  # never a block of one resample: numpy would sum its bins pairwise
        part = np.ascontiguousarray(ct[:, start:stop])
        pos_t, neg_t = pos_m @ part, neg_m @ part
        pos, neg = pos_t.T, neg_t.T
        below = _cumsum_down(neg_t)
        below -= neg_t
        below += 0.5 * neg_t
        num = np.einsum("bg,bg->b", pos, below.T)
        den = pos.sum(axis=1) * neg.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:stop] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        start = stop
    return out


def weighted_auroc(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUROC for each row of a (B, n) matrix of row multiplicities (each row its own cluster).

    Args:
        scores: 1-D scores without NaN.
        labels: 0/1 labels, one per score.
        weights: (B, n) multiplicity of each row in each resample, or one (n,) row.

    Returns:
        (B,) AUROCs, NaN where a resample holds one class only.

    Raises:
        ValueError: `weights` has another number of columns than there are scores.
    """
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    if w.shape[1] != np.asarray(scores).size:
        raise ValueError(f"weights have {w.shape[1]} columns for {np.asarray(scores).size} scores")
    return cluster_auroc(scores, labels, np.arange(w.shape[1]), w)


def ht_auroc(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> float:
    """Horvitz–Thompson (inverse-probability) weighted AUROC: each (pos, neg) pair counts w_i·w_j.

    With w = 1/π (inclusion probability) it estimates the AUROC of the whole pool a sample was drawn from.

    Args:
        scores: 1-D scores without NaN.
        labels: 0/1 labels, one per score.
        weights: Positive finite weight per score (1/π).

    Returns:
        The weighted AUROC, NaN when a class is absent.

    Examples:
        >>> round(ht_auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1], [1, 1, 1, 3]), 6)  # the 0.8 stands for three pairs
        0.875
    """
    s = np.asarray(scores, dtype=np.float64)
    return float(cluster_auroc(s, labels, np.zeros(s.size, dtype=np.int64), np.ones(1), weights)[0])
