"""Robustness statistics: is a metric's ranking an artefact of evidence length or of one dataset?

- AUROC on row subsets (length bins, short/long halves) from ONE clustered bootstrap of the
  slice, so every subset and every metric shares the cluster draws (`subset_bootstrap`);
- length bins shared across the datasets of a construct, from quantiles of the pooled lengths;
- Spearman ρ of score with evidence length inside each label class (AUROC-free);
- a cluster-respecting exchangeability permutation of dataset assignment, for reference
  beside the residual permutation of `stats.transfer.decompose`;
- a metric × dataset matrix with one dataset dropped (leave-one-dataset-out verdicts).
All pure numpy over arrays; every random draw comes from the caller's generator.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attrib_audit.stats.auroc import auroc, cluster_auroc
from attrib_audit.stats.bootstrap import cluster_count_blocks, group_codes
from attrib_audit.stats.rank import spearman
from attrib_audit.stats.rng import block_rows
from attrib_audit.stats.transfer import AurocMatrix


def quantile_edges(lengths: np.ndarray, n_bins: int) -> np.ndarray:
    """Bin edges at the 0, 1/k, …, 1 quantiles of `lengths` (pooled over a construct); tied edges merge.

    Args:
        lengths: Evidence lengths (e.g. tokens), pooled over the datasets compared.
        n_bins: Bins wanted, at least 1 (fewer result when quantiles tie).

    Returns:
        The distinct edges (empty without lengths).

    Raises:
        ValueError: n_bins < 1.

    Examples:
        >>> quantile_edges(np.array([10, 20, 30, 40, 50]), 2).tolist()
        [10.0, 30.0, 50.0]
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    x = np.asarray(lengths, dtype=np.float64)
    if x.size == 0:
        return np.zeros(0)
    return np.unique(np.quantile(x, np.linspace(0.0, 1.0, n_bins + 1)))


def assign_bins(lengths: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin j holds edges[j] <= x < edges[j+1]; the last bin is closed on the right (it holds the maximum).

    Args:
        lengths: Values to bin.
        edges: Edges from `quantile_edges`.

    Returns:
        (n,) bin index of each value.

    Examples:
        >>> assign_bins(np.array([10, 29, 30, 50]), np.array([10.0, 30.0, 50.0])).tolist()
        [0, 0, 1, 1]
    """
    return np.searchsorted(np.asarray(edges)[1:-1], np.asarray(lengths, dtype=np.float64), side="right")


def median_halves(lengths: np.ndarray) -> np.ndarray:
    """(2, n) masks: short = length <= the median, long = above it.

    Args:
        lengths: Evidence lengths of the slice's rows.

    Returns:
        Two boolean rows, short then long.
    """
    x = np.asarray(lengths, dtype=np.float64)
    short = x <= np.median(x) if x.size else np.zeros(0, dtype=bool)
    return np.vstack([short, ~short])


@dataclass(frozen=True)
class SubsetAUROC:
    """AUROC of m scorers on k row subsets of one slice, all from the same cluster draws.

    `replicates[i, j, b]` is scorer i on subset j in resample b (NaN where the resample's
    subset holds one class); differences between subsets or scorers are paired on b.
    """

    point: np.ndarray  # (m, k)
    replicates: np.ndarray  # (m, k, B)
    n: np.ndarray  # (m, k) rows with a finite score
    n_pos: np.ndarray  # (m, k)


def subset_bootstrap(score_matrix: np.ndarray, labels: np.ndarray, groups: Sequence, masks: np.ndarray, *,
                     n_boot: int, rng: np.random.Generator) -> SubsetAUROC:
    """Clustered bootstrap of every scorer's AUROC on every subset (rows of `masks`), sharing the draws.

    The draws are those of `stats.bootstrap.bootstrap_aurocs` on the same slice and generator state.

    Args:
        score_matrix: (m, n) scores; NaN = failed (left out of that scorer).
        labels: (n,) 0/1 labels.
        groups: (n,) cluster id of each row.
        masks: (k, n) boolean subsets (e.g. length bins).
        n_boot: Resamples.
        rng: The generator to draw clusters from.

    Returns:
        (m, k) points and (m, k, B) replicates, with rows and positives per cell.
    """
    sm = np.atleast_2d(np.asarray(score_matrix, dtype=np.float64))
    y = np.asarray(labels).astype(np.int64)
    mk = np.atleast_2d(np.asarray(masks, dtype=bool))
    codes = group_codes(groups)
    m, k = sm.shape[0], mk.shape[0]
    use = np.isfinite(sm)[:, None, :] & mk[None, :, :]  # (m, k, n)
    n_pos = (use & (y == 1)[None, None, :]).sum(axis=2)
    point = np.full((m, k), np.nan)
    for i, j in zip(*np.nonzero(use.any(axis=2))):
        point[i, j] = auroc(sm[i, use[i, j]], y[use[i, j]])
    blocks = []
    n_clusters = int(codes.max()) + 1 if codes.size else 0
    for counts in cluster_count_blocks(n_clusters, n_boot, rng, width=sm.shape[1]):
        counts = np.asfortranarray(counts)  # cluster_auroc multiplies its (K, B) transpose: made once, not per cell
        block = np.full((m, k, counts.shape[0]), np.nan)
        for i, j in zip(*np.nonzero(use.any(axis=2))):  # m × k cells; the resamples are one array operation
            r = use[i, j]
            block[i, j] = cluster_auroc(sm[i, r], y[r], codes[r], counts)
        blocks.append(block)
    reps = np.concatenate(blocks, axis=2) if blocks else np.zeros((m, k, 0))
    return SubsetAUROC(point, reps, use.sum(axis=2), n_pos)


def class_spearman(score_matrix: np.ndarray, lengths: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, ...]:
    """Spearman ρ (and p, n) of each scorer's score with length inside each label class: (m, 2) arrays, class 0 then 1.

    Args:
        score_matrix: (m, n) scores; NaN rows are left out.
        lengths: (n,) evidence lengths.
        labels: (n,) 0/1 labels.

    Returns:
        (ρ, p, n), each (m, 2); ρ is NaN where a class has fewer than 3 rows or a constant side.
    """
    sm = np.atleast_2d(np.asarray(score_matrix, dtype=np.float64))
    x = np.asarray(lengths, dtype=np.float64)
    y = np.asarray(labels).astype(np.int64)
    rho, p, n = (np.full((sm.shape[0], 2), np.nan) for _ in range(3))
    for i in range(sm.shape[0]):
        for c in (0, 1):
            r = (y == c) & np.isfinite(sm[i])
            rho[i, c], p[i, c] = spearman(sm[i, r], x[r])
            n[i, c] = r.sum()
    return rho, p, n.astype(np.int64)


def two_way_ss(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(SS_dataset, SS_metric, SS_interaction) of (..., m metrics, d datasets) AUROC tables, as `decompose` splits
    them."""
    a = np.asarray(a, dtype=np.float64)
    m, d = a.shape[-2:]
    mu = a.mean(axis=(-2, -1), keepdims=True)
    col = a.mean(axis=-2, keepdims=True) - mu
    row = a.mean(axis=-1, keepdims=True) - mu
    resid = a - mu - col - row
    return m * (col ** 2).sum(axis=(-2, -1)), d * (row ** 2).sum(axis=(-2, -1)), (resid ** 2).sum(axis=(-2, -1))


def cluster_permutations(cluster_dataset: np.ndarray, n_perm: int, rng: np.random.Generator) -> np.ndarray:
    """(n_perm, K) dataset index of each cluster under random relabelling; each dataset keeps its number of clusters."""
    lab = np.asarray(cluster_dataset, dtype=np.int64)
    order = np.argsort(rng.random((n_perm, lab.size)), axis=1)
    return lab[order]


def permuted_aurocs(score_matrix: np.ndarray, labels: np.ndarray, row_cluster: np.ndarray, assignments: np.ndarray,
                    n_datasets: int) -> np.ndarray:
    """(P, m, d) AUROC of every scorer on every dataset when clusters are assigned as in `assignments` (P, K)."""
    sm = np.atleast_2d(np.asarray(score_matrix, dtype=np.float64))
    y = np.asarray(labels).astype(np.int64)
    codes = np.asarray(row_cluster, dtype=np.int64)
    assign_t = np.ascontiguousarray(np.atleast_2d(assignments).T)  # (K, P): cluster_auroc's product wants it so
    out = np.full((assign_t.shape[1], sm.shape[0], n_datasets), np.nan)
    finite = np.isfinite(sm)
    for j in range(n_datasets):
        counts = (assign_t == j).astype(np.float64).T  # multiplicity 1 inside dataset j, 0 outside; (P, K), no copy
        for i in range(sm.shape[0]):
            r = finite[i]
            out[:, i, j] = cluster_auroc(sm[i, r], y[r], codes[r], counts)
    return out


@dataclass(frozen=True, kw_only=True)
class Exchangeability:
    """Clusters (not rows) shuffled across the construct's datasets, dataset cluster counts kept.

    p_interaction / p_dataset: share of relabellings whose interaction / dataset sum of squares
    is ≥ the observed one ((1 + hits) / (1 + valid)). The null makes datasets exchangeable, so
    it breaks dataset difficulty and metric × dataset interaction at once: a small p here says
    the datasets differ, not specifically that the metrics' order depends on the dataset.
    """

    ss_dataset: float
    ss_metric: float
    ss_interaction: float
    p_interaction: float
    p_dataset: float
    null_mean_interaction: float
    n_perm: int
    n_perm_dropped: int  # relabellings in which some dataset held one class (AUROC undefined)



def exchangeability_test(score_matrix: np.ndarray, labels: np.ndarray, row_cluster: np.ndarray,
                         cluster_dataset: np.ndarray, n_perm: int, rng: np.random.Generator) -> Exchangeability:
    """Observed two-way sums of squares of the metric × dataset AUROC table against dataset relabellings of clusters.

    Args:
        score_matrix: (m, n) scores without NaN.
        labels: (n,) 0/1 labels.
        row_cluster: (n,) cluster (0..K−1) of each row.
        cluster_dataset: (K,) dataset (0..d−1) each cluster belongs to.
        n_perm: Relabellings.
        rng: The generator to relabel with.

    Returns:
        The observed sums of squares and their permutation p-values.
    """
    lab = np.asarray(cluster_dataset, dtype=np.int64)
    d = int(lab.max()) + 1
    observed = permuted_aurocs(score_matrix, labels, row_cluster, lab[None, :], d)[0]
    obs = [float(v) for v in two_way_ss(observed)]
    step = block_rows(8 * max(lab.size, np.asarray(labels).size, 1))  # cluster_auroc's temporaries: ~8 per cell
    null_int, null_ds = [], []
    for start in range(0, n_perm, step):
        tables = permuted_aurocs(score_matrix, labels, row_cluster,
                                 cluster_permutations(lab, min(step, n_perm - start), rng), d)
        tables = tables[np.isfinite(tables).all(axis=(1, 2))]
        ss_d, _, ss_i = two_way_ss(tables)
        null_ds.append(ss_d)
        null_int.append(ss_i)
    ni, nd = np.concatenate(null_int), np.concatenate(null_ds)
    tol = 1e-12 * max(obs[0] + obs[1] + obs[2], 1e-300)
    valid = ni.size
    return Exchangeability(ss_dataset=obs[0], ss_metric=obs[1], ss_interaction=obs[2],
                           p_interaction=float((1 + (ni >= obs[2] - tol).sum()) / (1 + valid)),
                           p_dataset=float((1 + (nd >= obs[0] - tol).sum()) / (1 + valid)),
                           null_mean_interaction=float(ni.mean()) if valid else float("nan"), n_perm=n_perm,
                           n_perm_dropped=n_perm - valid)


def drop_dataset(mat: AurocMatrix, dataset: str) -> AurocMatrix:
    """The same matrix without one dataset (for leave-one-dataset-out verdicts).

    Args:
        mat: AUROCs of every metric on every dataset.
        dataset: The dataset to leave out.

    Returns:
        A new matrix.

    Raises:
        ValueError: `dataset` is not in the matrix.
    """
    keep = [j for j, d in enumerate(mat.datasets) if d != dataset]
    if len(keep) == len(mat.datasets):
        raise ValueError(f"dataset {dataset!r} is not in the matrix ({', '.join(mat.datasets)})")
    return AurocMatrix(mat.metrics, tuple(mat.datasets[j] for j in keep), mat.point[:, keep], mat.replicates[:, keep])


def ranking(names: Sequence[str], values: np.ndarray) -> list[str]:
    """Names ordered by value, best first (ties keep input order); NaN values last.

    Args:
        names: One name per value.
        values: The values (higher is better).

    Returns:
        The names in order.

    Examples:
        >>> ranking(["a", "b", "c"], np.array([0.7, np.nan, 0.9]))
        ['c', 'a', 'b']
    """
    v = np.asarray(values, dtype=np.float64)
    order = np.argsort(-np.where(np.isfinite(v), v, -np.inf), kind="stable")
    return [names[i] for i in order]
