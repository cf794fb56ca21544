"""Does a metric's quality transfer across the datasets of one construct?

Everything reads a metric × dataset AUROC matrix with bootstrap replicates: within a
dataset all metrics share the resample draws (paired), across datasets the resamples are
independent, so replicate b of the whole matrix is column b of every dataset's bootstrap.
Each statistic is recomputed on every replicate at once (plug-in bootstrap).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attrib_audit.stats.rank import permuted_row_sums
from attrib_audit.stats.rng import as_generator

DEFAULT_EPS_GRID = tuple(round(0.01 * i, 2) for i in range(11)) + (0.15, 0.2, 0.3)


@dataclass(frozen=True)
class AurocMatrix:
    """Point AUROCs (m metrics × d datasets) and their replicates (m, d, B)."""

    metrics: tuple[str, ...]
    datasets: tuple[str, ...]
    point: np.ndarray
    replicates: np.ndarray

    def __post_init__(self) -> None:
        m, d = len(self.metrics), len(self.datasets)
        if self.point.shape != (m, d) or self.replicates.ndim != 3 or self.replicates.shape[:2] != (m, d):
            raise ValueError(f"AurocMatrix: point {self.point.shape} / replicates {self.replicates.shape} "
                             f"do not match {m} metrics × {d} datasets")
        if not np.isfinite(self.point).all():
            raise ValueError("AurocMatrix: point AUROCs must be finite (drop metrics undefined on a dataset first)")

    @classmethod
    def from_columns(cls, metrics: Sequence[str], datasets: Sequence[str], points: Sequence[np.ndarray],
                     replicates: Sequence[np.ndarray]) -> "AurocMatrix":
        """Stack per-dataset (m,) points and (m, B) replicates; every dataset needs the same B."""
        sizes = {np.shape(r)[-1] for r in replicates}
        if len(sizes) > 1:
            raise ValueError(f"datasets have different bootstrap sizes {sorted(sizes)}: rerun with one --n-boot")
        return cls(tuple(metrics), tuple(datasets), np.column_stack(points).astype(np.float64),
                   np.stack([np.asarray(r, dtype=np.float64) for r in replicates], axis=1))

    @property
    def n_boot(self) -> int:
        return int(self.replicates.shape[2])


def _ci(x: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval along the last axis over finite replicates (as stats.bootstrap.percentile_ci).

    An all-NaN row gives a NaN interval (numpy's warning about it is silenced; callers report drops).
    """
    alpha = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanquantile(x, [alpha, 1.0 - alpha], axis=-1)
    return lo, hi


@dataclass(frozen=True, kw_only=True)
class Portability:
    """Portable: on every dataset the metric's AUROC is not below the best metric's CI lower bound.

    Paired (stricter): on every dataset the paired-bootstrap CI of best − metric includes 0.
    """

    metric: str
    portable: bool
    breaks_on: tuple[str, ...]
    paired_portable: bool
    paired_breaks_on: tuple[str, ...]



@dataclass(frozen=True, kw_only=True)
class DatasetBest:
    dataset: str
    best: str
    auroc: float
    ci_low: float
    ci_high: float



def best_per_dataset(mat: AurocMatrix, level: float = 0.95) -> list[DatasetBest]:
    """The best metric on each dataset (highest point AUROC), with its AUROC's percentile interval.

    Args:
        mat: AUROCs of every metric on every dataset, with replicates.
        level: Coverage of the intervals.

    Returns:
        One entry per dataset, in the matrix's order.
    """
    best = mat.point.argmax(axis=0)
    cols = np.arange(len(mat.datasets))
    lo, hi = _ci(mat.replicates[best, cols], level)
    return [DatasetBest(dataset=ds, best=mat.metrics[best[j]], auroc=float(mat.point[best[j], j]), ci_low=float(lo[j]),
                        ci_high=float(hi[j]))
            for j, ds in enumerate(mat.datasets)]


def portability(mat: AurocMatrix, level: float = 0.95) -> list[Portability]:
    """Per metric: portable when on every dataset its AUROC is not below the best metric's CI lower bound.

    Also the paired version: the CI of (best − metric), on the shared draws, holds 0 on every dataset.

    Args:
        mat: AUROCs of every metric on every dataset, with replicates.
        level: Coverage of the intervals.

    Returns:
        One entry per metric, naming the datasets where it falls short.
    """
    best = mat.point.argmax(axis=0)
    cols = np.arange(len(mat.datasets))
    lo_best, _ = _ci(mat.replicates[best, cols], level)
    within = mat.point >= lo_best[None, :]
    diff = mat.replicates[best, cols][None] - mat.replicates  # (m, d, B): best − metric, paired draws
    d_lo, d_hi = _ci(diff, level)
    paired_ok = (d_lo <= 0) & (d_hi >= 0)
    out = []
    for i, name in enumerate(mat.metrics):
        out.append(Portability(metric=name, portable=bool(within[i].all()),
                               breaks_on=tuple(np.asarray(mat.datasets)[~within[i]].tolist()),
                               paired_portable=bool(paired_ok[i].all()),
                               paired_breaks_on=tuple(np.asarray(mat.datasets)[~paired_ok[i]].tolist())))
    return out


def _valid_replicates(mat: AurocMatrix) -> np.ndarray:
    """Replicates where every cell is defined (a resample can lose a class on one dataset)."""
    return np.isfinite(mat.replicates).all(axis=(0, 1))


@dataclass(frozen=True, kw_only=True)
class FixedRegret:
    """Regret of always using `metric`: per dataset best − metric; mean over held-out datasets with CI."""

    metric: str
    per_dataset: dict[str, float]
    mean: float
    ci_low: float
    ci_high: float
    max: float
    worst_dataset: str



@dataclass(frozen=True, kw_only=True)
class SelectorRegret:
    """The naive rule: on each held-out dataset use the metric with the best mean AUROC on the others."""

    picks: dict[str, str]
    per_dataset: dict[str, float]
    mean: float
    ci_low: float
    ci_high: float
    minus_best_fixed: float  # selector mean regret − lowest-regret fixed metric's (paired over replicates)
    minus_best_fixed_ci: tuple[float, float]



@dataclass(frozen=True, kw_only=True)
class LodoRegret:
    fixed: list[FixedRegret]
    selector: SelectorRegret
    lowest_regret_metric: str
    n_boot: int
    n_boot_dropped: int



def regret_matrix(point: np.ndarray) -> np.ndarray:
    """Per dataset, best AUROC − each metric's AUROC (m, d); works on (m, d, B) replicates too.

    Args:
        point: (m, d) AUROCs, or (m, d, B) replicates.

    Returns:
        Regrets of the same shape, 0 for each dataset's best.
    """
    return point.max(axis=0, keepdims=True) - point


def _selector(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Picks (d, ...) and realised regret (d, ...) of the leave-one-dataset-out best-on-average rule.

    `a` is (m, d) or (m, d, B); the mean over the other datasets is (column sum − own) / (d − 1).
    """
    d = a.shape[1]
    others = (a.sum(axis=1, keepdims=True) - a) / (d - 1)
    picks = others.argmax(axis=0)
    chosen = np.take_along_axis(a, picks[None], axis=0)[0]
    return picks, a.max(axis=0) - chosen


def lodo_regret(mat: AurocMatrix, level: float = 0.95) -> LodoRegret:
    """Leave-one-dataset-out regret of always using each metric, and of picking the best on the other datasets.

    Regret on a dataset is the best AUROC there minus the chosen metric's. Intervals are percentile
    intervals over the replicates where every cell is defined.

    Args:
        mat: AUROCs of every metric on every dataset, with replicates.
        level: Coverage of the intervals.

    Returns:
        Each metric's fixed-choice regret, the selector's, and the metric with the lowest mean regret.

    Raises:
        ValueError: Fewer than two datasets.
    """
    m, d = mat.point.shape
    if d < 2:
        raise ValueError("leave-one-dataset-out needs at least two datasets")
    ok = _valid_replicates(mat)
    reps = mat.replicates[:, :, ok]
    reg = regret_matrix(mat.point)
    reg_b = regret_matrix(reps).mean(axis=1)  # (m, B')
    lo, hi = _ci(reg_b, level)
    fixed = []
    for i, name in enumerate(mat.metrics):
        j = int(reg[i].argmax())
        fixed.append(FixedRegret(metric=name, per_dataset=dict(zip(mat.datasets, reg[i].tolist())),
                                 mean=float(reg[i].mean()), ci_low=float(lo[i]), ci_high=float(hi[i]),
                                 max=float(reg[i, j]), worst_dataset=mat.datasets[j]))
    best_fixed = int(reg.mean(axis=1).argmin())
    picks, sel = _selector(mat.point)
    _, sel_b = _selector(reps)
    sel_mean_b = sel_b.mean(axis=0)
    s_lo, s_hi = _ci(sel_mean_b, level)
    g_lo, g_hi = _ci(sel_mean_b - reg_b[best_fixed], level)
    selector = SelectorRegret(picks={ds: mat.metrics[p] for ds, p in zip(mat.datasets, picks)},
                              per_dataset=dict(zip(mat.datasets, sel.tolist())), mean=float(sel.mean()),
                              ci_low=float(s_lo), ci_high=float(s_hi),
                              minus_best_fixed=float(sel.mean() - reg[best_fixed].mean()),
                              minus_best_fixed_ci=(float(g_lo), float(g_hi)))
    return LodoRegret(fixed=fixed, selector=selector, lowest_regret_metric=mat.metrics[best_fixed], n_boot=mat.n_boot,
                      n_boot_dropped=int((~ok).sum()))


def eps_regret_sweep(mat: AurocMatrix, grid: Sequence[float] = DEFAULT_EPS_GRID) -> list[dict]:
    """For each ε: the metrics whose regret is ≤ ε on every dataset (point estimates).

    Args:
        mat: AUROCs of every metric on every dataset.
        grid: The ε values.

    Returns:
        One {"eps", "metrics"} entry per ε, in grid order.
    """
    worst = regret_matrix(mat.point).max(axis=1)
    return [{"eps": float(e), "metrics": [mat.metrics[i] for i in np.flatnonzero(worst <= e + 1e-12)]} for e in grid]


@dataclass(frozen=True, kw_only=True)
class PairedDiff:
    """AUROC_a − AUROC_b on one dataset, with the paired-bootstrap CI; sign is 0 when the CI holds 0."""

    dataset: str
    metric_a: str
    metric_b: str
    diff: float
    ci_low: float
    ci_high: float
    sign: int



def _pair_cis(mat: AurocMatrix, a: int, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point difference and CI of metric a minus every metric, on every dataset: (m, d) each."""
    diff_b = mat.replicates[a][None] - mat.replicates
    lo, hi = _ci(diff_b, level)
    return mat.point[a][None] - mat.point, lo, hi


def _sign(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.where(lo > 0, 1, np.where(hi < 0, -1, 0))


def paired_best_vs_rest(mat: AurocMatrix, level: float = 0.95) -> list[PairedDiff]:
    """On each dataset, its best metric minus every other metric, with paired-bootstrap CIs.

    Args:
        mat: AUROCs of every metric on every dataset, with replicates on shared draws.
        level: Coverage of the intervals.

    Returns:
        One difference per dataset and other metric; `sign` is 0 when the CI holds 0.
    """
    out = []
    best = mat.point.argmax(axis=0)
    for j, ds in enumerate(mat.datasets):
        diff, lo, hi = _pair_cis(mat, int(best[j]), level)
        sign = _sign(lo[:, j], hi[:, j])
        out += [PairedDiff(dataset=ds, metric_a=mat.metrics[best[j]], metric_b=mat.metrics[i], diff=float(diff[i, j]),
                           ci_low=float(lo[i, j]), ci_high=float(hi[i, j]),
                           sign=int(sign[i])) for i in range(len(mat.metrics)) if i != best[j]]
    return out


@dataclass(frozen=True)
class SignFlip:
    """A pair whose paired difference CI excludes 0 in opposite directions on two datasets."""

    metric_a: str
    metric_b: str
    a_better_on: dict[str, float]  # dataset → a − b
    b_better_on: dict[str, float]



def sign_flips(mat: AurocMatrix, level: float = 0.95) -> list[SignFlip]:
    """Metric pairs whose paired difference is significant in opposite directions on two datasets.

    Args:
        mat: AUROCs of every metric on every dataset, with replicates on shared draws.
        level: Coverage of the intervals.

    Returns:
        One entry per such pair, with the datasets where each is better.
    """
    out = []
    for a in range(len(mat.metrics)):
        diff, lo, hi = _pair_cis(mat, a, level)
        sign = _sign(lo, hi)
        for b in range(a + 1, len(mat.metrics)):
            pos, neg = np.flatnonzero(sign[b] > 0), np.flatnonzero(sign[b] < 0)
            if pos.size and neg.size:
                out.append(SignFlip(mat.metrics[a], mat.metrics[b],
                                    {mat.datasets[j]: float(diff[b, j]) for j in pos},
                                    {mat.datasets[j]: float(diff[b, j]) for j in neg}))
    return out


@dataclass(frozen=True, kw_only=True)
class Decomposition:
    """AUROC = grand mean + dataset effect + metric effect + interaction residual, with variance shares.

    p_interaction: share of within-dataset relabellings of the metrics (each dataset's
    difficulty held fixed) whose interaction sum of squares is ≥ the observed one; small
    means metric effects agree across datasets less than arbitrary relabelling would.
    p_metric: share whose metric-effect sum of squares is ≥ observed (a consistent metric effect).
    With one AUROC per cell the residual also holds each cell's sampling noise.
    """

    grand_mean: float
    dataset_effect: dict[str, float]
    metric_effect: dict[str, float]
    residual: list[list[float]]
    ss_total: float
    share_dataset: float
    share_metric: float
    share_interaction: float
    p_interaction: float
    p_metric: float
    n_perm: int



def decompose(mat: AurocMatrix, n_perm: int = 10_000, rng: np.random.Generator | int = 0) -> Decomposition:
    """Two-way decomposition of the AUROC table with permutation p-values for the metric and interaction effects.

    Args:
        mat: AUROCs of every metric on every dataset.
        n_perm: Within-dataset relabellings of the metrics.
        rng: A seed or a generator.

    Returns:
        Grand mean, effects, residuals, variance shares and p-values.
    """
    gen = as_generator(rng)
    a = mat.point
    m, d = a.shape
    mu = float(a.mean())
    col = a.mean(axis=0) - mu
    row = a.mean(axis=1) - mu
    resid = a - mu - col[None, :] - row[:, None]
    ss_total = float(((a - mu) ** 2).sum())
    ss_dataset, ss_metric, ss_int = float(m * (col ** 2).sum()), float(d * (row ** 2).sum()), float((resid ** 2).sum())
    centred = a - a.mean(axis=0, keepdims=True)
    ss_within = float((centred ** 2).sum())  # = ss_metric + ss_int, unchanged by within-dataset relabelling
    rows = permuted_row_sums(centred.T, n_perm, gen) / d  # metric means after relabelling within each dataset
    null_metric = d * ((rows - rows.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    tol = 1e-12 * max(ss_total, 1e-300)
    p_int = float((1 + ((ss_within - null_metric) >= ss_int - tol).sum()) / (1 + n_perm))
    p_met = float((1 + (null_metric >= ss_metric - tol).sum()) / (1 + n_perm))
    share = (lambda x: x / ss_total) if ss_total > 0 else (lambda x: float("nan"))
    return Decomposition(grand_mean=mu, dataset_effect=dict(zip(mat.datasets, col.tolist())),
                         metric_effect=dict(zip(mat.metrics, row.tolist())), residual=resid.tolist(), ss_total=ss_total,
                         share_dataset=share(ss_dataset), share_metric=share(ss_metric),
                         share_interaction=share(ss_int), p_interaction=p_int, p_metric=p_met, n_perm=n_perm)
