"""Is a score a probability? Reliability diagrams, expected calibration error (ECE) with a clustered bootstrap
CI, recalibration fitted on one part and judged on another, and whether a map learned on one slice holds on others.

A score is read as P(supported). ECE = Σ_bins (W_b / W) · |mean label_b − mean score_b| = Σ_b |Σ_{i∈b} w_i
(y_i − s_i)| / W, so a whole bootstrap is per-cluster sums per bin and one matrix product. Bins follow
scikit-learn's `calibration_curve` (a score on an inner edge falls in the lower bin; quantile edges from
the unweighted scores). ECE is biased upward in small bins: compare ECEs on the same pairs and bins,
as `recalibrate` and `calibration_transfer` do with paired draws.

Recalibration maps are plain numpy (pool-adjacent-violators isotonic regression; Platt's sigmoid with
his smoothed targets, fitted by Newton's method), pinned to scikit-learn's IsotonicRegression and
sigmoid calibration in the tests, so the package needs no scikit-learn at run time. Weights (1/π)
enter every fit and every ECE as Horvitz–Thompson weights.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from attrib_audit.stats.bootstrap import DEFAULT_B, cluster_sum_replicates, group_folds, percentile_ci, slice_rng
from attrib_audit.stats.rng import as_generator
from attrib_audit.stats.types import Estimate, LabelledScores

STRATEGIES = ("uniform", "quantile")
METHODS = ("isotonic", "platt")


def bin_edges(scores: np.ndarray, n_bins: int = 10, strategy: str = "uniform") -> np.ndarray:
    """n_bins + 1 edges on [0, 1] (uniform) or at the scores' quantiles (as sklearn's calibration_curve).

    Args:
        scores: The scores (read only for "quantile").
        n_bins: Bins, at least 1.
        strategy: "uniform" or "quantile".

    Returns:
        (n_bins + 1,) edges.

    Raises:
        ValueError: An unknown strategy or n_bins < 1.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    return np.percentile(np.asarray(scores, dtype=np.float64), np.linspace(0, 100, n_bins + 1))


def _bins(scores: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.searchsorted(edges[1:-1], scores)


def _check_probabilities(scores: np.ndarray) -> None:
    if scores.size and (scores.min() < 0.0 or scores.max() > 1.0):
        raise ValueError(f"scores span [{scores.min():.4g}, {scores.max():.4g}], "
                         "not [0, 1]: they are not probabilities; "
                         "recalibrate them (fit_calibration) before reading a reliability diagram")


def expected_calibration_error(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None, *,
                               n_bins: int = 10, strategy: str = "uniform") -> float:
    """Expected calibration error: Σ over bins of |Σ w·(label − score)| / Σ w (as the reliability diagram's gaps).

    Args:
        scores: Scores read as probabilities of "supported", in [0, 1].
        labels: 0/1 labels.
        weights: Optional 1/π weight per pair.
        n_bins: Bins.
        strategy: "uniform" or "quantile" bin edges.

    Returns:
        The ECE in [0, 1].

    Raises:
        ValueError: A score outside [0, 1] (not a probability: recalibrate first), or bad bins.

    Examples:
        >>> expected_calibration_error([0.1, 0.2, 0.8, 0.9], [0, 1, 1, 1], n_bins=2)
        0.25
    """
    data = LabelledScores(scores, labels, weights=weights)
    _check_probabilities(data.scores)
    edges = bin_edges(data.scores, n_bins, strategy)
    gap = np.bincount(_bins(data.scores, edges), weights=data.w * (data.labels - data.scores), minlength=n_bins)
    return float(np.abs(gap).sum() / data.w.sum())


def _ece_replicates(rows: np.ndarray, data: LabelledScores, n_bins: int, strategy: str, n_boot: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(point (m,), replicates (B, m)) of the ECE of m score vectors on `data`'s labels, on the same cluster draws."""
    m, n = rows.shape
    w, y = data.w, data.labels
    cols = np.zeros((n, m * n_bins + 1))
    for j in range(m):  # each score vector's own bins (quantile edges differ between vectors)
        idx = _bins(rows[j], bin_edges(rows[j], n_bins, strategy))
        cols[np.arange(n), j * n_bins + idx] = w * (y - rows[j])
    cols[:, -1] = w
    point = np.abs(cols[:, :-1].sum(axis=0).reshape(m, n_bins)).sum(axis=1) / w.sum()
    reps = cluster_sum_replicates(cols, data.codes, n_boot, rng)
    return point, np.abs(reps[:, :-1].reshape(-1, m, n_bins)).sum(axis=2) / reps[:, -1:]


@dataclass(frozen=True, eq=False, kw_only=True)
class Reliability:
    """A reliability diagram (per bin: weighted pairs, mean score, share supported) and its ECE with a CI."""

    strategy: str
    edges: np.ndarray
    count: np.ndarray  # pairs per bin
    weight: np.ndarray  # weighted pairs per bin (= count without weights)
    mean_score: np.ndarray  # NaN in an empty bin
    frac_supported: np.ndarray
    ece: Estimate


def _reliability(data: LabelledScores, scores: np.ndarray, point: float, reps: np.ndarray, n_bins: int,
                 strategy: str, level: float, n_boot: int) -> Reliability:
    edges = bin_edges(scores, n_bins, strategy)
    idx = _bins(scores, edges)
    w = data.w
    weight = np.bincount(idx, weights=w, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_score = np.bincount(idx, weights=w * scores, minlength=n_bins) / weight
        frac = np.bincount(idx, weights=w * data.labels, minlength=n_bins) / weight
    lo, hi, dropped = percentile_ci(reps, level)
    est = Estimate(estimate=float(point), ci_low=lo, ci_high=hi, n=data.n, n_groups=int(np.unique(data.codes).size),
                   method="clustered-bootstrap-percentile", n_boot=n_boot, n_boot_dropped=dropped)
    return Reliability(strategy=strategy, edges=edges, count=np.bincount(idx, minlength=n_bins), weight=weight,
                       mean_score=mean_score, frac_supported=frac, ece=est)


def reliability(data: LabelledScores, *, n_bins: int = 10, strategy: str = "uniform", level: float = 0.95,
                n_boot: int = DEFAULT_B, rng: np.random.Generator | int = 0) -> Reliability:
    """Reliability diagram and ECE of the slice's scores, the CI from resampling its groups (weighted if weighted).

    Args:
        data: The slice's labelled scores, read as probabilities.
        n_bins: Bins.
        strategy: "uniform" or "quantile" bin edges.
        level: Coverage of the ECE's interval.
        n_boot: Resamples.
        rng: A seed or a generator.

    Returns:
        Per bin the weighted pairs, mean score and share supported, and the ECE with its interval.

    Raises:
        ValueError: A score outside [0, 1], or bad bins.
    """
    _check_probabilities(data.scores)
    point, reps = _ece_replicates(data.scores[None, :], data, n_bins, strategy, n_boot, as_generator(rng))
    return _reliability(data, data.scores, point[0], reps[:, 0], n_bins, strategy, level, n_boot)


# --- recalibration maps ------------------------------------------------------------------------------------------

def _pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted least-squares non-decreasing fit (pool adjacent violators): one pass, blocks merged on a stack."""
    means, weights, sizes = [], [], []
    for v, u in zip(y.tolist(), w.tolist()):
        means.append(v)
        weights.append(u)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            u2, v2, s2 = weights.pop(), means.pop(), sizes.pop()
            total = weights[-1] + u2
            means[-1] = (means[-1] * weights[-1] + v2 * u2) / total
            weights[-1] = total
            sizes[-1] += s2
    return np.repeat(np.asarray(means), sizes)


def _platt(s: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """(A, B) of P(supported | s) = 1 / (1 + exp(A·s + B)), Platt's smoothed targets, weighted Newton steps.

    Targets (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2) (weighted counts) keep the fit finite when the classes
    separate; Newton with step halving on the weighted cross-entropy (Lin, Lin & Weng 2007).
    """
    n_pos, n_neg = float(w[y == 1].sum()), float(w[y == 0].sum())
    target = np.where(y == 1, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    scale = max(1.0, float(np.abs(s).max()))  # Newton is scale-free; this only keeps exp() in range
    x = s / scale

    def loss(ab: np.ndarray) -> float:
        f = ab[0] * x + ab[1]
        return float((w * (np.logaddexp(0.0, f) - (1.0 - target) * f)).sum())

    ab = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])
    current = loss(ab)
    for _ in range(100):
        p = 0.5 * (1.0 + np.tanh(0.5 * (ab[0] * x + ab[1])))  # σ(f), stable
        g = w * (p - (1.0 - target))
        h = w * p * (1.0 - p)
        grad = np.array([(g * x).sum(), g.sum()])
        hess = np.array([[(h * x * x).sum(), (h * x).sum()], [(h * x).sum(), h.sum()]]) + 1e-12 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:  # halve the Newton step until the loss falls enough (Armijo)
            trial = ab - t * step
            new = loss(trial)
            if new <= current - 1e-4 * t * float(grad @ step) or t < 1e-10:
                break
            t /= 2.0
        if new > current:
            break
        done = current - new <= 1e-14 * max(1.0, abs(current))
        ab, current = trial, new
        if done:
            break
    return float(ab[0] / scale), float(ab[1])


@dataclass(frozen=True, kw_only=True)
class CalibrationMap:
    """A fitted map from a score to P(supported): isotonic knots (linear between, flat outside) or Platt's (A, B)."""

    method: str  # the JSON holds x, y for isotonic and a, b for platt
    x: tuple[float, ...] = field(default=(), metadata={"skip_default": True})
    y: tuple[float, ...] = field(default=(), metadata={"skip_default": True})
    a: float = field(default=float("nan"), metadata={"skip_default": True})
    b: float = field(default=float("nan"), metadata={"skip_default": True})

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        s = np.asarray(scores, dtype=np.float64)
        if self.method == "platt":
            return 1.0 / (1.0 + np.exp(self.a * s + self.b))
        if len(self.x) == 1:
            return np.full(s.shape, self.y[0])
        return np.interp(s, self.x, self.y)


def fit_calibration(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None, *,
                    method: str = "isotonic") -> CalibrationMap:
    """Isotonic regression (as sklearn's IsotonicRegression(out_of_bounds="clip")) or Platt's sigmoid, weighted.

    Args:
        scores: Raw scores (any scale).
        labels: 0/1 labels.
        weights: Optional 1/π weight per pair.
        method: "isotonic" or "platt".

    Returns:
        The fitted map from a score to P(supported).

    Raises:
        ValueError: An unknown method or no pairs.

    Examples:
        >>> m = fit_calibration(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 1, 0, 1]))
        >>> m.x, m.y
        ((0.1, 0.2, 0.3, 0.4), (0.0, 0.5, 0.5, 1.0))
    """
    data = LabelledScores(scores, labels, weights=weights)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    if data.n == 0:
        raise ValueError("a calibration map needs labelled pairs")
    if method == "platt":
        a, b = _platt(data.scores, data.labels, data.w)
        return CalibrationMap(method="platt", a=a, b=b)
    x, inv = np.unique(data.scores, return_inverse=True)
    wx = np.bincount(inv, weights=data.w)
    fit = _pava(np.bincount(inv, weights=data.w * data.labels) / wx, wx)
    return CalibrationMap(method="isotonic", x=tuple(x.tolist()), y=tuple(fit.tolist()))


def _cross_fitted(data: LabelledScores, method: str, folds: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Each pair's score through the map fitted without its fold (whole groups per fold); (scores, folds used)."""
    k = int(data.codes.max()) + 1
    if k < 2:
        raise ValueError("cross-fitting a calibration map needs at least two groups")
    fold = group_folds(data.codes, min(folds, k), rng)
    out = np.empty(data.n)
    for f in range(int(fold.max()) + 1):
        train = fold != f
        part = data.subset(train)
        if part.labels.min() == part.labels.max():
            raise ValueError("a training fold holds one class only: too few groups of one label to cross-fit")
        out[~train] = fit_calibration(part.scores, part.labels, part.weights, method=method)(data.scores[~train])
    return out, int(fold.max()) + 1


@dataclass(frozen=True, eq=False, kw_only=True)
class Recalibration:
    """A map fitted on the whole slice (the one to deploy or transfer) and the slice's calibration before and after.

    `held_out` judges maps fitted without each fold's groups on that fold, never on their own pairs;
    `improvement` is raw ECE − held-out ECE with a paired CI (same draws), None when the raw scores
    are not in [0, 1].
    """

    method: str
    folds: int
    calibration_map: CalibrationMap = field(metadata={"json": "map"})
    raw: Reliability | None
    held_out: Reliability
    improvement: Estimate | None
    held_out_scores: np.ndarray = field(default_factory=lambda: np.zeros(0), metadata={"omit": True})


def recalibrate(data: LabelledScores, *, method: str = "isotonic", folds: int = 5, n_bins: int = 10,
                strategy: str = "uniform", level: float = 0.95, n_boot: int = DEFAULT_B,
                rng: np.random.Generator | int = 0) -> Recalibration:
    """A calibration map fitted on the whole slice, and the slice's calibration before and after (cross-fitted).

    The "after" diagram judges each pair through a map fitted without its fold (whole groups per
    fold), so the improvement is not measured on the pairs that chose the map.

    Args:
        data: The slice's labelled scores.
        method: "isotonic" or "platt".
        folds: Cross-fitting folds (fewer with fewer groups).
        n_bins: Reliability bins.
        strategy: "uniform" or "quantile" bin edges.
        level: Coverage of the ECE intervals.
        n_boot: Resamples.
        rng: A seed or a generator.

    Returns:
        The map to deploy and both reliability diagrams.

    Raises:
        ValueError: One class only in the slice.
    """
    gen = as_generator(rng)
    if data.labels.min() == data.labels.max():
        raise ValueError("recalibration needs both classes in the slice")
    held, used = _cross_fitted(data, method, folds, gen)
    raw_ok = bool(data.scores.min() >= 0.0 and data.scores.max() <= 1.0)
    rows = np.vstack([held, data.scores]) if raw_ok else held[None, :]
    point, reps = _ece_replicates(rows, data, n_bins, strategy, n_boot, gen)
    held_rel = _reliability(data, held, point[0], reps[:, 0], n_bins, strategy, level, n_boot)
    raw_rel = improvement = None
    if raw_ok:
        raw_rel = _reliability(data, data.scores, point[1], reps[:, 1], n_bins, strategy, level, n_boot)
        lo, hi, dropped = percentile_ci(reps[:, 1] - reps[:, 0], level)
        improvement = Estimate(estimate=float(point[1] - point[0]), ci_low=lo, ci_high=hi, n=data.n,
                               n_groups=held_rel.ece.n_groups, method="paired-clustered-bootstrap-percentile",
                               n_boot=n_boot, n_boot_dropped=dropped)
    cmap = fit_calibration(data.scores, data.labels, data.weights, method=method)
    return Recalibration(method=method, folds=used, calibration_map=cmap, raw=raw_rel, held_out=held_rel,
                         improvement=improvement, held_out_scores=held)


# --- does a map transfer? ------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class CalibrationCell:
    """The map fitted on `fitted_on` applied to `applied_to`: its ECE there, and the excess over that slice's own
    held-out map (paired CI); `holds` unless the excess CI lies above 0. The diagonal is the slice's own held-out
    ECE."""

    fitted_on: str
    applied_to: str
    ece: Estimate
    excess: Estimate
    holds: bool
    held_out: bool



@dataclass(frozen=True)
class CalibrationTransfer:
    method: str
    slices: tuple[str, ...]
    maps: dict[str, CalibrationMap]
    cells: tuple[CalibrationCell, ...]

    def cell(self, fitted_on: str, applied_to: str) -> CalibrationCell | None:
        return next((c for c in self.cells if (c.fitted_on, c.applied_to) == (fitted_on, applied_to)), None)

    def estimates(self) -> np.ndarray:
        """(d, d) ECE: rows fitted on, columns applied to."""
        pos = {s: i for i, s in enumerate(self.slices)}
        out = np.full((len(self.slices), len(self.slices)), np.nan)
        for c in self.cells:
            out[pos[c.fitted_on], pos[c.applied_to]] = c.ece.estimate
        return out



def calibration_transfer(slices: Mapping[str, LabelledScores], *, method: str = "isotonic", folds: int = 5,
                         n_bins: int = 10, strategy: str = "uniform", level: float = 0.95, n_boot: int = DEFAULT_B,
                         seed: int = 0) -> CalibrationTransfer:
    """Each slice's map (fitted on all of it) applied to every other slice, against that slice's own held-out map.

    Per applied slice, folds and draws come from `slice_rng(seed, name)`, shared by every map judged
    there, so each excess is paired and no cell depends on which other slices are present.

    Args:
        slices: Slice name → its labelled scores.
        method: "isotonic" or "platt".
        folds: Cross-fitting folds for each slice's own map.
        n_bins: Reliability bins.
        strategy: "uniform" or "quantile" bin edges.
        level: Coverage of the intervals.
        n_boot: Resamples.
        seed: The run's seed.

    Returns:
        Every (fitted on, applied to) cell with its ECE and excess over the slice's own map.
    """
    slices = {str(k): v for k, v in slices.items()}
    names = tuple(slices)
    maps = {a: fit_calibration(slices[a].scores, slices[a].labels, slices[a].weights, method=method) for a in names}
    cells = []
    for b in names:
        data, gen = slices[b], slice_rng(seed, b)
        own, _ = _cross_fitted(data, method, folds, gen)
        others = [a for a in names if a != b]
        rows = np.vstack([own] + [maps[a](data.scores) for a in others])
        point, reps = _ece_replicates(rows, data, n_bins, strategy, n_boot, gen)
        n_groups = int(np.unique(data.codes).size)
        for j, a in enumerate([b] + others):
            lo, hi, dropped = percentile_ci(reps[:, j], level)
            ece = Estimate(estimate=float(point[j]), ci_low=lo, ci_high=hi, n=data.n, n_groups=n_groups,
                           method="clustered-bootstrap-percentile", n_boot=n_boot, n_boot_dropped=dropped)
            d_lo, d_hi, d_dropped = percentile_ci(reps[:, j] - reps[:, 0], level)
            excess = Estimate(estimate=float(point[j] - point[0]), ci_low=d_lo, ci_high=d_hi, n=data.n,
                              n_groups=n_groups, method="paired-clustered-bootstrap-percentile", n_boot=n_boot,
                              n_boot_dropped=d_dropped)
            cells.append(CalibrationCell(fitted_on=a, applied_to=b, ece=ece, excess=excess, holds=not excess.ci_low > 0,
                                         held_out=a == b))
    order = {s: i for i, s in enumerate(names)}
    cells.sort(key=lambda c: (order[c.fitted_on], order[c.applied_to]))
    return CalibrationTransfer(method, names, maps, tuple(cells))
