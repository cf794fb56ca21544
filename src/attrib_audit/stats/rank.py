"""Rank agreement between datasets' metric rankings: Kendall τ-b, Kendall's W, Spearman ρ.

A metric × dataset AUROC matrix is read column-wise: each dataset ranks the metrics.
All pairs of datasets (τ) and all permutations (W) are computed as array operations.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import ndtr, stdtr  # not scipy.stats: its import is far slower

from attrib_audit.stats.auroc import average_ranks
from attrib_audit.stats.rng import as_generator

_BLOCK_CELLS = 1 << 13  # permutations × cells per block: the block's arrays stay in cache


def _finite_2d(matrix: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(matrix, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{what} must be 2-D (items × raters), got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{what} contains NaN/inf: drop the incomplete metric or dataset first")
    return a


def kendall_exact_p(n: int, concordant: int) -> float:
    """Two-sided exact p of Kendall's τ without ties (as scipy's 'exact' method).

    The number of concordant pairs of a random permutation follows the Mahonian
    distribution: the product of the polynomials (1 + x + … + x^(j−1)) / j.

    Args:
        n: Items ranked.
        concordant: Concordant pairs observed.

    Returns:
        The p-value, at most 1.
    """
    total = n * (n - 1) // 2
    c = min(concordant, total - concordant)
    return float(min(1.0, 2.0 * _mahonian(n)[: c + 1].sum()))


@lru_cache(maxsize=64)
def _mahonian(n: int) -> np.ndarray:
    dist = np.ones(1)
    for j in range(2, n + 1):
        dist = np.convolve(dist, np.full(j, 1.0 / j))
    return dist


@dataclass(frozen=True)
class KendallTau:
    """τ-b and two-sided p for every pair of columns; `method` says exact or asymptotic per pair."""

    tau: np.ndarray  # (d, d)
    pvalue: np.ndarray  # (d, d)
    method: np.ndarray  # (d, d) of str


def kendall_tau_matrix(matrix: np.ndarray) -> KendallTau:
    """Kendall τ-b between all column pairs of an (n items × d raters) matrix, matching scipy.stats.kendalltau.

    p-values follow scipy's method='auto': exact without ties when n ≤ 33 (or almost
    all pairs agree), otherwise the tie-corrected normal approximation.

    Args:
        matrix: (n, d) finite values, one column per rater (e.g. a metric's AUROC per dataset).

    Returns:
        (d, d) τ-b, p-values and the method used per pair.

    Raises:
        ValueError: `matrix` is not 2-D or holds NaN/inf.
    """
    a = _finite_2d(matrix, "matrix")
    n, d = a.shape
    sign = np.sign(a[None, :, :] - a[:, None, :])  # (n, n, d): sign of item pair per rater
    iu = np.triu_indices(n, 1)
    s = sign[iu]  # (pairs, d)
    tot = n * (n - 1) // 2
    cmd = s.T @ s  # concordant − discordant for every rater pair
    tied = (s == 0).astype(np.float64)
    xtie = tied.sum(axis=0)  # (d,)
    ntie = tied.T @ tied  # joint ties
    tie_sizes = (sign == 0).sum(axis=1).astype(np.float64)  # (n, d): size of the tie group each item sits in
    v0 = (tie_sizes - 1) * (tie_sizes - 2)  # Σ_groups t(t−1)(t−2) = Σ_items (t−1)(t−2)
    v1 = (tie_sizes - 1) * (2 * tie_sizes + 5)
    x0, x1 = v0.sum(axis=0), v1.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.clip(cmd / np.sqrt(np.outer(tot - xtie, tot - xtie)), -1.0, 1.0)
        m = n * (n - 1.0)
        var = ((m * (2 * n + 5) - x1[:, None] - x1[None, :]) / 18 + 2 * np.outer(xtie, xtie) / m
               + (np.outer(x0, x0) / (9 * m * (n - 2)) if n > 2 else 0.0))
        p_asym = 2 * ndtr(-np.abs(cmd / np.sqrt(var)))
    degenerate = (xtie[:, None] == tot) | (xtie[None, :] == tot)
    dis = (tot - xtie[:, None] - xtie[None, :] + ntie - cmd) / 2
    no_ties = (xtie[:, None] == 0) & (xtie[None, :] == 0)
    exact = no_ties & ((n <= 33) | (np.minimum(dis, tot - dis) <= 1))
    pvalue = np.where(exact, np.nan, p_asym)
    for i, j in zip(*np.nonzero(exact)):  # one Mahonian sum per distinct (n, c); d is small
        pvalue[i, j] = kendall_exact_p(n, int(round(tot - dis[i, j])))
    tau = np.where(degenerate, np.nan, tau)
    pvalue = np.where(degenerate, np.nan, pvalue)
    method = np.where(degenerate, "undefined", np.where(exact, "exact", "asymptotic"))
    return KendallTau(tau, pvalue, method)


def _tie_term(ranks: np.ndarray) -> float:
    """Σ over raters and tie groups of t³ − t, from average ranks."""
    total = 0.0
    for col in ranks.T:
        _, counts = np.unique(col, return_counts=True)
        total += float((counts ** 3 - counts).sum())
    return total


def column_ranks(matrix: np.ndarray) -> np.ndarray:
    """Average ranks of the items within each column (1 = lowest value).

    Args:
        matrix: (n items, k raters) finite values.

    Returns:
        (n, k) ranks, ties given their mean rank.

    Raises:
        ValueError: `matrix` is not 2-D or holds NaN/inf.
    """
    a = _finite_2d(matrix, "matrix")
    return np.column_stack([average_ranks(col) for col in a.T]) if a.size else a


def _w_from_row_sums(r: np.ndarray, k: int, tie: float) -> np.ndarray:
    """W from the items' rank sums over k raters, shaped (..., n); `tie` is the Σ(t³−t) term (permutation-invariant)."""
    n = r.shape[-1]
    s = ((r - r.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    return 12.0 * s / (k * k * (n ** 3 - n) - k * tie)


@dataclass(frozen=True, kw_only=True)
class KendallW:
    """Kendall's W with tie correction and rank-permutation p-values in both tails.

    p_concordance: share of within-rater rank permutations with W ≥ observed (rankings agree
    more than chance). p_discordance: share with W ≤ observed (they disagree more than chance;
    under the null E[W] = 1/k). Both use the (1 + hits) / (1 + n_perm) convention.
    """

    w: float
    n_items: int
    n_raters: int
    p_concordance: float
    p_discordance: float
    null_mean: float
    n_perm: int



def _w_and_tie(ranks: np.ndarray) -> tuple[float, float]:
    """W of a rank table and its tie term; W is NaN when undefined (fewer than 2 items, no rater, all tied)."""
    n, k = ranks.shape
    if n < 2 or k < 1:
        return float("nan"), 0.0
    tie = _tie_term(ranks)
    if k * k * (n ** 3 - n) - k * tie <= 0:
        return float("nan"), tie
    return float(_w_from_row_sums(ranks.sum(axis=1), k, tie)), tie


def kendall_w(matrix: np.ndarray) -> float:
    """Kendall's coefficient of concordance of n items ranked by k raters (columns), tie-corrected.

    Args:
        matrix: (n items, k raters) finite values.

    Returns:
        W in [0, 1], NaN when undefined (fewer than 2 items, no rater, all tied).

    Examples:
        >>> round(kendall_w(np.array([[1, 2, 3], [2, 1, 3], [3, 3, 1], [4, 4, 2]])), 4)
        0.1954
    """
    return _w_and_tie(column_ranks(matrix))[0]


# Bit generators whose random() is (next 64-bit output >> 11) · 2⁻⁵³: for them the raw outputs carry
# the same keys in their top 53 bits, without the float round trip.
_RAW53 = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)
_LOW = np.uint64((1 << 11) - 1)  # the 11 bits below a 53-bit key


def _key_orders(rng: np.random.Generator, index: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """argsort of the keys rng.random(index.shape) along the last axis, plus `offsets`, as one integer sort.

    Each key is a 53-bit integer (in units of 2⁻⁵³) placed in the top bits of a uint64 with the item
    index (`index`, arange(n) tiled) in the low 11: a plain sort orders by key and breaks exact ties
    by index, as the stable argsort of the floats does. Returned as int64, ready for np.take.
    """
    if index.shape[-1] > 2048:
        raise ValueError(f"permutation tests take at most 2048 items, got {index.shape[-1]}")
    if isinstance(rng.bit_generator, _RAW53):
        keys = rng.bit_generator.random_raw(index.shape)
        keys &= ~_LOW
    else:
        keys = (rng.random(index.shape) * 2.0 ** 53).astype(np.uint64) << np.uint64(11)
    keys |= index
    keys.sort(axis=-1)
    keys &= _LOW
    keys += offsets
    return keys.view(np.int64)


def permuted_row_sums(columns: np.ndarray, n_perm: int, rng: np.random.Generator) -> np.ndarray:
    """Row sums (n_perm, n) of tables whose k columns (given as a (k, n) array) are shuffled independently.

    Args:
        columns: (k, n) values, one row per column of the table.
        n_perm: Shuffled tables.
        rng: The generator to shuffle with.

    Returns:
        (n_perm, n) row sums.
    """
    k, n = columns.shape
    flat = np.ascontiguousarray(columns, dtype=np.float64).ravel()
    step = max(1, min(n_perm, _BLOCK_CELLS // max(n * k, 1)))
    # Full-size tiles: elementwise ops on them run much faster than broadcasting over a short last axis.
    index = np.tile(np.arange(n, dtype=np.uint64), (step, k, 1))
    offsets = np.tile((np.arange(k, dtype=np.uint64) * np.uint64(n))[:, None], (step, 1, n))  # column j: flat[j·n:]
    out = np.empty((n_perm, n))
    for start in range(0, n_perm, step):
        b = min(step, n_perm - start)
        values = np.take(flat, _key_orders(rng, index[:b], offsets[:b]))
        acc = out[start:start + b]
        np.copyto(acc, values[:, 0])
        for j in range(1, k):  # k strided adds beat one reduction over the middle axis
            acc += values[:, j]
    return out


def permuted_rank_w(ranks: np.ndarray, n_perm: int, rng: np.random.Generator, tie: float | None = None) -> np.ndarray:
    """W of `n_perm` tables whose columns are independently shuffled: only the row sums change.

    Args:
        ranks: (n, k) rank table (`column_ranks`).
        n_perm: Shuffled tables.
        rng: The generator to shuffle with.
        tie: The table's Σ(t³ − t) tie term (None: computed here).

    Returns:
        (n_perm,) W values.
    """
    tie = _tie_term(ranks) if tie is None else tie
    return _w_from_row_sums(permuted_row_sums(ranks.T, n_perm, rng), ranks.shape[1], tie)


def kendall_w_test(matrix: np.ndarray, n_perm: int = 10_000, rng: np.random.Generator | int = 0) -> KendallW:
    """W with a permutation test that shuffles item ranks within each rater (ties kept).

    Args:
        matrix: (n items, k raters) finite values.
        n_perm: Permutations.
        rng: A seed or a generator.

    Returns:
        W with the share of permutations at least as concordant (and at most), and the null mean.

    Raises:
        ValueError: `matrix` is not 2-D or holds NaN/inf.
    """
    gen = as_generator(rng)
    ranks = column_ranks(matrix)
    n, k = ranks.shape
    w, tie = _w_and_tie(ranks)
    if not np.isfinite(w):
        return KendallW(w=float("nan"), n_items=n, n_raters=k, p_concordance=float("nan"), p_discordance=float("nan"),
                        null_mean=float("nan"), n_perm=0)
    null = permuted_rank_w(ranks, n_perm, gen, tie)
    tol = 1e-12
    return KendallW(w=w, n_items=n, n_raters=k, p_concordance=float((1 + (null >= w - tol).sum()) / (1 + n_perm)),
                    p_discordance=float((1 + (null <= w + tol).sum()) / (1 + n_perm)), null_mean=float(null.mean()),
                    n_perm=n_perm)


def spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Spearman ρ and two-sided p (t approximation, n − 2 df), as scipy.stats.spearmanr.

    Args:
        x: 1-D values.
        y: 1-D values of the same length.

    Returns:
        (ρ, p); both NaN when a side is constant or non-finite, or with fewer than 3 values.

    Raises:
        ValueError: `x` and `y` are not 1-D of one length.

    Examples:
        >>> rho, p = spearman(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0]))
        >>> round(rho, 4), round(p, 4)
        (0.8, 0.2)
    """
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("spearman needs two 1-D arrays of the same length")
    if a.size < 3 or np.ptp(a) == 0 or np.ptp(b) == 0 or not (np.isfinite(a).all() and np.isfinite(b).all()):
        return float("nan"), float("nan")
    rho = float(np.corrcoef(average_ranks(a), average_ranks(b))[0, 1])
    dof = a.size - 2
    with np.errstate(divide="ignore"):
        tstat = rho * np.sqrt(max(dof / ((rho + 1.0) * (1.0 - rho)), 0.0)) if abs(rho) < 1 else np.sign(rho) * np.inf
    return rho, float(2 * stdtr(dof, -abs(tstat)))  # Student t's survival function, as scipy.stats.t.sf computes it
