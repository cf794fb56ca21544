"""System-level agreement: does a metric order systems (generators) the way the human labels do?

Rows are answers of systems to inputs, each with a binary human label and metric scores. A
system's human pass rate, a metric's mean score and its pass rate at a given threshold are all
ratios of per-(variable, system, input) sums, so one bootstrap is one matrix: resampling inputs
gives a row of input multiplicities, and every system's every replicate is a product of that
matrix with the cell sums. Systems answer the same inputs, so the draws are shared across systems
(and metrics): differences between systems, rankings and metric-vs-metric comparisons are paired.

Resampling systems as well (`resample={"systems", "inputs"}`, as Deutsch et al. 2021 for
summarisation metrics) widens the claim to new systems from the same population; a system drawn
c times then weighs c in every statistic (pairs of distinct systems weigh c_i·c_j, which equals
computing on the duplicated rows as scipy would, except that a system never forms a pair with its
own copy). Differences between two given systems always use the input draws only.

What the intervals cover. Agreement between noisy system rates is attenuated whenever systems sit
within each other's sampling noise: a metric that ranks the population exactly still shows τ < 1,
and no bootstrap interval recovers the noise-free value (in simulation the percentile interval of
such a metric holds τ = 1 in 0–10% of samples). So every agreement statistic is stated as measured with these inputs:
its interval covers the expected value at this number of inputs per system, and `human_ceiling`
gives the same statistics for a metric that ranks the systems exactly by their true human rates —
the most any metric can be expected to show with these labels. τ-b, pairwise accuracy and acc_eq
use percentile intervals; Pearson r's bootstrap distribution is narrow and shifted by a second dose
of attenuation, so its percentile interval is re-centred on the estimate (recentred-percentile).
Simulated coverage of nominal 95% intervals: tests/test_stats_systems.py.
`significance_clusters` says which system differences the labels resolve at all.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterable, Iterator, Mapping, Sequence

import numpy as np

from attrib_audit.stats.bootstrap import DEFAULT_B, cluster_count_blocks, percentile_ci
from attrib_audit.stats.rng import as_generator, block_rows
from attrib_audit.stats.types import Estimate

DEFAULT_MIN_SHARED = 30  # fewer inputs answered by every system than this: resample within systems instead
RESAMPLE_OPTIONS = frozenset({"inputs", "systems"})
SUMMARIES = ("mean", "pass")
# A metric whose finite scores all lie within this relative distance of each other is constant: its system means are
# then exactly equal (ties everywhere), not orderings made of summation rounding (a column of 0.1 gave τ-b 0.061).
CONSTANT_RTOL = 1e-9


@dataclass(frozen=True, kw_only=True)
class InputDesign:
    """Which inputs the statistics use and how they are resampled.

    paired: inputs are resampled jointly across systems (every system answers every input used).
    Otherwise each system's inputs are resampled on their own and `caveat` says that input
    differences between systems confound the ranking.
    """

    paired: bool
    n_inputs: int  # distinct inputs in the data
    n_shared: int  # inputs answered by every system
    n_used: int  # inputs the statistics use
    rows_used: int
    rows_dropped: int  # rows on inputs that not every system answered, left out by the paired design
    min_shared: int
    caveat: str | None = None
    record_derived: ClassVar[tuple[str, ...]] = ("confounded",)

    @property
    def confounded(self) -> bool:
        return self.caveat is not None



@dataclass(frozen=True, kw_only=True)
class SystemBootstrap:
    """Per-system point values and replicates of the human pass rate and every metric summary.

    Variable v of `point` (V, S) / `replicates` (V, S, B): 0 = human pass rate, 1…m = metric means,
    m+1…2m = metric pass rates (score ≥ threshold; NaN for a metric given no threshold).
    `system_weights` (S, B) holds how often each system was drawn when systems are resampled.
    """

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    thresholds: tuple[float, ...]  # per metric; NaN where none was given
    point: np.ndarray
    replicates: np.ndarray
    n: np.ndarray  # (V, S) rows with a finite value
    n_inputs: np.ndarray  # (S,) inputs used that each system answered
    design: InputDesign
    resample: tuple[str, ...]
    n_boot: int
    system_weights: np.ndarray | None = None

    @property
    def method(self) -> str:
        inputs = "joint-inputs" if self.design.paired else "within-system-inputs"
        return f"{inputs}{'+systems' if 'systems' in self.resample else ''}-bootstrap-percentile"

    def row(self, metric: str | None = None, summary: str = "mean") -> int:
        """Index into `point`/`replicates`: the human rate for metric=None, else that metric's summary."""
        if metric is None:
            return 0
        if metric not in self.metrics:
            raise ValueError(f"unknown metric {metric!r}; have {', '.join(self.metrics)}")
        if summary not in SUMMARIES:
            raise ValueError(f"summary must be one of {SUMMARIES}, got {summary!r}")
        j = self.metrics.index(metric)
        if summary == "pass" and not np.isfinite(self.thresholds[j]):
            raise ValueError(f"metric {metric!r} has no threshold: its pass rate is undefined")
        return 1 + j + (len(self.metrics) if summary == "pass" else 0)


def _as_names(values: Sequence, what: str, n: int) -> np.ndarray:
    a = np.asarray(values, dtype=object).astype(str)
    if a.shape != (n,):
        raise ValueError(f"{what} has {a.size} entries for {n} rows")
    return a


def _variables(labels: np.ndarray, scores: Mapping[str, Sequence[float]],
               thresholds: Mapping[str, float]) -> tuple[np.ndarray, tuple[str, ...], tuple[float, ...]]:
    """(V, n) values: the labels, each metric's scores, each metric's pass indicator (score ≥ threshold)."""
    metrics = tuple(scores)
    unknown = sorted(set(thresholds) - set(metrics))
    if unknown:
        raise ValueError(f"thresholds for unknown metrics: {', '.join(unknown)}")
    x = np.array([np.asarray(scores[m], dtype=np.float64) for m in metrics]).reshape(len(metrics), labels.size)
    t = np.array([float(thresholds.get(m, np.nan)) for m in metrics])
    with np.errstate(invalid="ignore"):
        passed = np.where(np.isfinite(x) & np.isfinite(t)[:, None], (x >= t[:, None]).astype(np.float64), np.nan)
    return np.vstack([labels[None, :], x, passed]), metrics, tuple(t.tolist())


def _centred(values: np.ndarray, rows: range) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, centres, exponents): each of `rows` as (x − c) / 2^e, its scores centred on the midpoint c of their
    range and scaled by a power of two into [−1, 1], so sums neither overflow (scores near ±1e308) nor carry rounding
    that orders a constant column; a mean m of the scaled values is c + m·2^e on the scores' own scale. A row constant
    to CONSTANT_RTOL becomes exactly 0."""
    out = values.copy()
    centres, exps = np.zeros(values.shape[0]), np.zeros(values.shape[0], dtype=np.int64)
    for v in rows:
        x = values[v]
        fin = np.isfinite(x)
        if not fin.any():
            continue
        lo, hi = float(x[fin].min()), float(x[fin].max())
        half = hi / 2 - lo / 2  # never overflows, unlike hi − lo
        c = lo / 2 + hi / 2
        if half <= CONSTANT_RTOL * max(abs(lo), abs(hi)) / 2:
            out[v, fin] = 0.0
            centres[v] = c
            continue
        e = int(np.frexp(half)[1])
        out[v, fin] = np.ldexp(x[fin] - c, -e)
        centres[v], exps[v] = c, e
    return out, centres, exps


def _cell_sums(values: np.ndarray, sys_codes: np.ndarray, grp_codes: np.ndarray, s: int,
               k: int) -> tuple[np.ndarray, np.ndarray]:
    """Sums and counts of the finite values per (variable, system, input): two (V, S, K) arrays, one bincount each."""
    v = values.shape[0]
    finite = np.isfinite(values)
    flat = (np.arange(v)[:, None] * s + sys_codes[None, :]) * k + grp_codes[None, :]
    size = v * s * k
    sums = np.bincount(flat[finite], weights=values[finite], minlength=size).reshape(v, s, k)
    counts = np.bincount(flat[finite], minlength=size).astype(np.float64).reshape(v, s, k)
    return sums, counts


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _within_system_count_blocks(present: np.ndarray, n_boot: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield (b, S, K) input multiplicities, each system drawing its own inputs (K_s of them) with replacement.

    Draw d of system s in resample r is rng.integers(0, K_s) at [r, s, d] of one (b, S, max K_s) call;
    draws past K_s are discarded. Input j of system s is its j-th answered input in code order.
    """
    s, k = present.shape
    ks = present.sum(axis=1)
    kmax = int(ks.max())
    pos = np.argsort(~present, axis=1, kind="stable")[:, :kmax]  # (S, kmax): answered inputs first, in code order
    keep = np.arange(kmax)[None, :] < ks[:, None]  # (S, kmax)
    step = block_rows(s * max(k, kmax))
    for start in range(0, n_boot, step):
        b = min(step, n_boot - start)
        draws = rng.integers(0, ks[None, :, None], size=(b, s, kmax))
        inputs = np.take_along_axis(np.broadcast_to(pos, (b, s, kmax)), draws, axis=2)
        flat = (np.arange(b)[:, None, None] * s + np.arange(s)[None, :, None]) * k + inputs
        yield np.bincount(flat[np.broadcast_to(keep, flat.shape)], minlength=b * s * k).reshape(b, s, k).astype(
            np.float64)


def _weighted(cells: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(V, S, b) sums of the (V, S, K) cells under input multiplicities (b, K) shared by all systems, or (b, S, K)."""
    if counts.ndim == 2:  # one matrix product for the whole block
        v, s, k = cells.shape
        return (cells.reshape(v * s, k) @ counts.T).reshape(v, s, counts.shape[0])
    return np.einsum("vsk,bsk->vsb", cells, counts)


def system_bootstrap(labels: Sequence[int], scores: Mapping[str, Sequence[float]], systems: Sequence,
                     groups: Sequence, *, thresholds: Mapping[str, float] | None = None,
                     resample: Iterable[str] = ("inputs",), n_boot: int = DEFAULT_B,
                     rng: np.random.Generator | int = 0, min_shared: int = DEFAULT_MIN_SHARED) -> SystemBootstrap:
    """Bootstrap every system's human pass rate, metric means and metric pass rates on shared draws.

    `groups` names the input each row answers. Inputs answered by every system are used and
    resampled jointly when there are at least `min_shared` of them (rows on other inputs are left
    out and counted); otherwise all rows are used, each system's inputs are resampled on their
    own, and the design carries a caveat. NaN scores are left out of that metric only.
    Draws: the input multiplicities of all resamples first (as `cluster_count_blocks` on the used
    inputs in sorted-id order), then, when systems are resampled, one (B, S) draw of system indices.

    Args:
        labels: (n,) 0/1 human labels (1 = supported) of each answer.
        scores: Metric name → (n,) scores (NaN = failed).
        systems: (n,) the system (generator) that gave each answer; at least 2 systems.
        groups: (n,) the input each answer responds to.
        thresholds: Metric → t for a pass-rate summary (pass = score ≥ t), chosen on other rows;
            metrics without one get mean scores only.
        resample: {"inputs"} (claims about these systems) or {"systems", "inputs"} (about new systems
            from the same population).
        n_boot: Resamples, at least 1.
        rng: A seed or a generator.
        min_shared: Fewest inputs answered by every system for the joint (paired) design.

    Returns:
        Points (V, S) and replicates (V, S, B) of every variable, the design and the draws' weights.

    Raises:
        ValueError: Labels not 0/1, an unknown resample set, n_boot < 1, fewer than 2 systems, or
            inputs of unequal length.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> systems, inputs = np.repeat(["s1", "s2", "s3", "s4"], 40), np.tile(np.arange(40), 4)
        >>> quality = np.repeat([0.2, 0.4, 0.6, 0.8], 40)
        >>> labels = (rng.random(160) < quality).astype(int)
        >>> res = system_bootstrap(labels, {"m": quality + rng.normal(0, 0.3, 160)}, systems, inputs, n_boot=200)
        >>> res.design.n_used, res.point[0].round(3).tolist()  # inputs shared by all; human pass rates
        (40, [0.2, 0.425, 0.425, 0.725])
    """
    y = np.asarray(labels, dtype=np.float64)
    if y.ndim != 1 or not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("labels must be a 1-D array of 0/1 (1 = supported)")
    res_set = frozenset(resample)
    if "inputs" not in res_set or not res_set <= RESAMPLE_OPTIONS:
        raise ValueError(f"resample must be {{'inputs'}} or {{'systems', 'inputs'}}, got {sorted(res_set)}")
    if n_boot < 1:
        raise ValueError("n_boot must be at least 1")
    values, metrics, thr = _variables(y, scores, dict(thresholds or {}))
    values, centres, exps = _centred(values, range(1, 1 + len(metrics)))
    sys_names, sys_codes = np.unique(_as_names(systems, "systems", y.size), return_inverse=True)
    grp_names, grp_codes = np.unique(_as_names(groups, "groups", y.size), return_inverse=True)
    s, k = sys_names.size, grp_names.size
    if s < 2:
        raise ValueError(f"system-level statistics need at least 2 systems, got {s}")
    gen = as_generator(rng)
    sums, counts = _cell_sums(values, sys_codes, grp_codes, s, k)
    present = counts[0] > 0  # (S, K): the system answered the input
    shared = present.all(axis=0)
    n_shared = int(shared.sum())
    if n_shared == k or n_shared >= min_shared:
        sums, counts, present = sums[:, :, shared], counts[:, :, shared], present[:, shared]
        rows_used = int(counts[0].sum())
        design = InputDesign(paired=True, n_inputs=k, n_shared=n_shared, n_used=n_shared, rows_used=rows_used,
                             rows_dropped=int(y.size - rows_used), min_shared=min_shared)
        blocks = cluster_count_blocks(n_shared, n_boot, gen, width=values.shape[0] * s)
    else:
        caveat = (f"only {n_shared} of {k} inputs are answered by every system (fewer than {min_shared}): each "
                  f"system's inputs are resampled on their own, so differences between the inputs the systems "
                  f"answered confound the ranking")
        design = InputDesign(paired=False, n_inputs=k, n_shared=n_shared, n_used=k, rows_used=int(y.size),
                             rows_dropped=0, min_shared=min_shared, caveat=caveat)
        blocks = _within_system_count_blocks(present, n_boot, gen)
    point = _ratio(sums.sum(axis=2), counts.sum(axis=2))
    reps = [_ratio(_weighted(sums, c), _weighted(counts, c)) for c in blocks]
    replicates = np.concatenate(reps, axis=2)
    point = centres[:, None] + np.ldexp(point, exps[:, None])  # back to the scores' scale (rows not centred: as is)
    replicates = centres[:, None, None] + np.ldexp(replicates, exps[:, None, None])
    weights = None
    if "systems" in res_set:
        draws = gen.integers(0, s, size=(n_boot, s))
        weights = np.bincount((draws + s * np.arange(n_boot)[:, None]).ravel(),
                              minlength=n_boot * s).reshape(n_boot, s).T.astype(np.float64)
    return SystemBootstrap(systems=tuple(sys_names.tolist()), metrics=metrics, thresholds=thr, point=point,
                           replicates=replicates, n=counts.sum(axis=2), n_inputs=present.sum(axis=1), design=design,
                           resample=tuple(sorted(res_set)), n_boot=int(n_boot), system_weights=weights)


def percentile_cis(replicates: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, dropped) percentile intervals along the last axis, as `percentile_ci` row by row.

    Rows without a NaN go through one np.quantile call; rows with some are done one by one (rare:
    a resample that drew none of a system's finite values, or an undefined statistic).

    Args:
        replicates: (..., B) replicates.
        level: Coverage of the intervals.

    Returns:
        Three arrays shaped as the leading axes.
    """
    x = np.asarray(replicates, dtype=np.float64)
    shape = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])
    finite = np.isfinite(flat)
    dropped = (~finite).sum(axis=1)
    lo, hi = np.full(flat.shape[0], np.nan), np.full(flat.shape[0], np.nan)
    full = dropped == 0
    if full.any() and flat.shape[1]:
        alpha = (1.0 - level) / 2.0
        lo[full], hi[full] = np.quantile(flat[full], [alpha, 1.0 - alpha], axis=1)
    for q in np.flatnonzero(~full):
        lo[q], hi[q], _ = percentile_ci(flat[q], level)
    return lo.reshape(shape), hi.reshape(shape), dropped.reshape(shape)


# ---- per-system summaries -------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class SystemRow:
    """One system: its human pass rate and each metric's mean score and pass rate, with CIs (over inputs)."""

    system: str
    n_inputs: int
    human: Estimate
    mean: dict[str, Estimate]
    pass_rate: dict[str, Estimate]  # only metrics given a threshold



def system_rows(res: SystemBootstrap, level: float = 0.95) -> list[SystemRow]:
    """Per-system estimates; their CIs resample inputs only (a given system's value does not depend on the others).

    Args:
        res: The slice's system bootstrap.
        level: Coverage of the intervals.

    Returns:
        One row per system: human pass rate and each metric's summaries.
    """
    lo, hi, dropped = percentile_cis(res.replicates, level)  # (V, S) each
    method = res.method.replace("+systems", "")

    def est(v: int, s: int) -> Estimate:
        return Estimate(estimate=float(res.point[v, s]), ci_low=float(lo[v, s]), ci_high=float(hi[v, s]),
                        n=int(res.n[v, s]), n_groups=int(res.n_inputs[s]), method=method, n_boot=res.n_boot,
                        n_boot_dropped=int(dropped[v, s]))

    m = len(res.metrics)
    with_t = [j for j in range(m) if np.isfinite(res.thresholds[j])]
    return [SystemRow(system=name, n_inputs=int(res.n_inputs[s]), human=est(0, s),
                      mean={res.metrics[j]: est(1 + j, s) for j in range(m)},
                      pass_rate={res.metrics[j]: est(1 + m + j, s) for j in with_t})
            for s, name in enumerate(res.systems)]


# ---- ranking agreement ----------------------------------------------------------------------------------------

AGREEMENT_STATS = ("tau", "pairwise_accuracy", "acc_eq", "pearson")
RANK_STATS = AGREEMENT_STATS[:3]  # the sign-based ones: stated at this number of inputs, with a ceiling


def _b_blocks(n_boot: int, per_resample: int) -> Iterator[slice]:
    step = block_rows(8 * max(per_resample, 1))  # metrics × system pairs per resample, ~8 arrays of them at once
    for start in range(0, n_boot, step):
        yield slice(start, min(n_boot, start + step))


def agreement_stats(human: np.ndarray, metric: np.ndarray,
                    weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """τ-b, pairwise accuracy, acc_eq and Pearson r of human (S, B) against metric (k, S, B) values, per column.

    Pairs are the S(S−1)/2 pairs of distinct systems; with `weights` (S, B) system multiplicities a
    pair weighs w_i·w_j and Pearson r weighs each system w_i. Ties are exact equalities.
    - tau: Kendall τ-b = Σ sgn(Δh)·sgn(Δx) / √(Σ sgn(Δh)² · Σ sgn(Δx)²), as scipy.stats.kendalltau.
    - pairwise_accuracy: among pairs the humans order (Δh ≠ 0), the share the metric orders the same
      way (Kocmi et al. 2021); pairs humans tie are left out (they carry no order to agree with), and
      a metric tie on a pair humans order counts ½: choosing by the metric, its tie is a coin flip.
    - acc_eq: Deutsch et al. (2023)'s tie-aware accuracy over all pairs: agreement iff sgn(Δx) = sgn(Δh),
      so a pair tied by both counts as right. No tie calibration (an ε fitted on these systems would
      be optimistic); a continuous metric's means hardly ever tie, so it loses every human-tied pair.
    - pearson: Pearson r of the human rates and the metric summaries.
    A column where any system is NaN, or where the statistic's denominator is 0, gives NaN.
    Returns arrays of shape (k, B).
    """
    h = np.asarray(human, dtype=np.float64)
    x = np.asarray(metric, dtype=np.float64)
    k, s, n_boot = x.shape
    i, j = np.triu_indices(s, 1)
    out = {name: np.full((k, n_boot), np.nan) for name in AGREEMENT_STATS}
    for sl in _b_blocks(n_boot, k * i.size):
        hb, xb = h[:, sl], x[:, :, sl]
        w = np.ones_like(hb) if weights is None else np.asarray(weights, dtype=np.float64)[:, sl]
        wp = w[i] * w[j]  # (P, b)
        sh = np.sign(hb[i] - hb[j])  # (P, b)
        sx = np.sign(xb[:, i] - xb[:, j])  # (k, P, b)
        ax = np.abs(sx)
        wtie = wp * (sh == 0)
        # Sums over pairs, weighted by wp: n = Σ sh·sx; dh = Σ sh² (pairs humans order); dx = Σ sx²;
        # both = Σ [sh = 0][sx = 0] (tied by both). On a pair humans order, [sx = sh] + ½[sx = 0] = (1 + sh·sx)/2.
        n = np.einsum("pb,kpb->kb", wp * sh, sx)
        dh = (wp - wtie).sum(axis=0)
        dx = np.einsum("pb,kpb->kb", wp, ax)
        both = wtie.sum(axis=0) - np.einsum("pb,kpb->kb", wtie, ax)
        total = wp.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = n / np.sqrt(dh * dx)
            acc = 0.5 * (1.0 + n / dh)
            # [sx = sh] summed: ordered pairs give (dh + n)/2 minus ½ per metric tie among them, plus the joint ties
            acc_eq = ((dh + n) / 2 - ((total - dx) - both) / 2 + both) / total
            wsum = w.sum(axis=0)
            hc = hb - (w * hb).sum(axis=0) / wsum
            scale = np.max(np.abs(xb), axis=1, keepdims=True)  # r is scale-free: summaries near ±1e308 overflow
            xs = xb / np.where((scale > 0) & np.isfinite(scale), scale, 1.0)
            xc = xs - (w * xs).sum(axis=1, keepdims=True) / wsum
            r = (w * hc * xc).sum(axis=1) / np.sqrt((w * hc * hc).sum(axis=0) * (w * xc * xc).sum(axis=1))
        r[(dh == 0) | (dx == 0)] = np.nan  # a constant side (exactly: no pair ordered), whatever rounding left in hc
        bad = np.isnan(xb).any(axis=1) | np.isnan(hb).any(axis=0, keepdims=True)
        for name, val in zip(AGREEMENT_STATS, (tau, acc, acc_eq, r)):
            out[name][:, sl] = np.where(bad | ~np.isfinite(val), np.nan, np.clip(val, -1.0, 1.0))
    return out


def _ties(values: np.ndarray) -> int:
    i, j = np.triu_indices(values.size, 1)
    return int((values[i] == values[j]).sum())


@dataclass(frozen=True, kw_only=True)
class AgreementReplicates:
    """Every agreement statistic of k metrics' system summaries with the human rates, point and replicates.

    Computed once on the bootstrap's draws; `rank_agreement`, `agreement_differences` and
    `human_ceiling` read it, and it is what a results store keeps to reproduce them. `ceiling` holds,
    per resample, the agreement of the resampled human rates with the observed ones: the bootstrap
    analogue of a metric that ranks systems exactly by their true human rates.
    """

    metrics: tuple[str, ...]
    summary: str
    point: dict[str, np.ndarray]  # statistic → (k,)
    replicates: dict[str, np.ndarray]  # statistic → (k, B)
    ceiling: dict[str, np.ndarray]  # statistic → (B,)
    human_ties: int
    metric_ties: tuple[int, ...]
    n_systems: int
    n_inputs: int
    n_boot: int
    method: str


def agreement_replicates(res: SystemBootstrap, summary: str = "mean",
                         metrics: Sequence[str] | None = None) -> AgreementReplicates:
    """Every agreement statistic of the metrics' system summaries with the human rates, point and replicates.

    Args:
        res: The slice's system bootstrap.
        summary: "mean" score or "pass" rate (needs the metric's threshold).
        metrics: The metrics (None: all of `res`).

    Returns:
        The points, (k, B) replicates and the human ceiling's replicates, on `res`'s draws.
    """
    names = res.metrics if metrics is None else tuple(metrics)
    rows = [res.row(m, summary) for m in names]
    pts = agreement_stats(res.point[0][:, None], res.point[rows][:, :, None])
    reps = agreement_stats(res.replicates[0], res.replicates[rows], res.system_weights)
    observed = np.broadcast_to(res.point[0][None, :, None], (1, *res.replicates.shape[1:]))
    ceiling = agreement_stats(res.replicates[0], observed, res.system_weights)
    return AgreementReplicates(metrics=names, summary=summary, point={key: v[:, 0] for key, v in pts.items()},
                               replicates=reps, ceiling={key: ceiling[key][0] for key in RANK_STATS},
                               human_ties=_ties(res.point[0]), metric_ties=tuple(_ties(res.point[v]) for v in rows),
                               n_systems=len(res.systems), n_inputs=res.design.n_used, n_boot=res.n_boot,
                               method=res.method)


@dataclass(frozen=True, kw_only=True)
class RankAgreement:
    """How one metric's ordering of the systems agrees with the human pass rates (see `agreement_stats`).

    All four are as measured with these inputs (see the module docstring): percentile CIs, re-centred
    on the estimate for pearson. Each Estimate's n is the number of systems and n_groups the inputs used.
    """

    metric: str
    summary: str  # "mean" score or "pass" rate at the metric's threshold
    tau: Estimate
    pairwise_accuracy: Estimate
    acc_eq: Estimate
    pearson: Estimate
    n_pairs: int
    human_ties: int  # system pairs with equal human pass rates (left out of pairwise_accuracy)
    metric_ties: int



def _estimates(agr: AgreementReplicates, point: np.ndarray, reps: np.ndarray, level: float, method: str,
               recentre: bool = False) -> list[Estimate]:
    lo, hi, dropped = percentile_cis(reps, level)
    if recentre:  # move the percentile interval by estimate − median of the replicates
        median = np.array([np.median(r[np.isfinite(r)]) if np.isfinite(r).any() else np.nan for r in reps])
        lo, hi = np.clip(lo + point - median, -1.0, 1.0), np.clip(hi + point - median, -1.0, 1.0)
        method = method.replace("-percentile", "-recentred-percentile")
    return [Estimate(estimate=float(point[q]), ci_low=float(lo[q]), ci_high=float(hi[q]), n=agr.n_systems,
                     n_groups=agr.n_inputs, method=method, n_boot=agr.n_boot,
                     n_boot_dropped=int(dropped[q])) for q in range(point.size)]


def rank_agreement(agr: AgreementReplicates, level: float = 0.95) -> list[RankAgreement]:
    """τ-b, pairwise accuracy, acc_eq and Pearson r of each metric against the human rates, with CIs.

    Args:
        agr: The agreement replicates (`agreement_replicates`).
        level: Coverage of the intervals (Pearson's re-centred on its estimate).

    Returns:
        One record per metric, in `agr`'s order.
    """
    cols = [_estimates(agr, agr.point[key], agr.replicates[key], level, agr.method, recentre=key == "pearson")
            for key in AGREEMENT_STATS]
    n_pairs = agr.n_systems * (agr.n_systems - 1) // 2
    tau, pairwise, acc_eq, pearson = cols
    return [RankAgreement(metric=name, summary=agr.summary, tau=tau[q], pairwise_accuracy=pairwise[q], acc_eq=acc_eq[q],
                          pearson=pearson[q], n_pairs=n_pairs,
                          human_ties=agr.human_ties, metric_ties=agr.metric_ties[q])
            for q, name in enumerate(agr.metrics)]


def human_ceiling(agr: AgreementReplicates, level: float = 0.95) -> dict[str, Estimate]:
    """τ-b, pairwise accuracy and acc_eq a metric ranking systems exactly by their true human rates would show.

    The estimate is the mean over resamples of the statistic between resampled and observed human
    rates, the interval its percentile interval. A metric whose interval reaches the ceiling's is as
    good a ranker as these labels can tell.
    """
    def one(reps: np.ndarray) -> Estimate:
        ok = reps[np.isfinite(reps)]
        mean = np.array([ok.mean() if ok.size else np.nan])
        return _estimates(agr, mean, reps[None, :], level, "ceiling-" + agr.method)[0]

    return {key: one(agr.ceiling[key]) for key in RANK_STATS}


@dataclass(frozen=True, kw_only=True)
class AgreementDifference:
    """metric_a − metric_b in τ-b and in pairwise accuracy, with CIs from the same draws (paired bootstrap)."""

    metric_a: str
    metric_b: str
    summary: str
    tau: Estimate
    pairwise_accuracy: Estimate



def agreement_differences(agr: AgreementReplicates, level: float = 0.95,
                          pairs: Sequence[tuple[str, str]] | None = None) -> list[AgreementDifference]:
    """a − b for each pair of metrics (default: every pair, in metric order), all on the same draws.

    Args:
        agr: The agreement replicates.
        level: Coverage of the intervals.
        pairs: (a, b) metric names to compare (None: every pair).

    Returns:
        One record per pair and statistic set.
    """
    pairs = list(pairs) if pairs is not None else [(a, b) for q, a in enumerate(agr.metrics)
                                                   for b in agr.metrics[q + 1:]]
    ia = [agr.metrics.index(a) for a, _ in pairs]
    ib = [agr.metrics.index(b) for _, b in pairs]
    method = "paired-" + agr.method
    cols = [_estimates(agr, agr.point[key][ia] - agr.point[key][ib],
                       agr.replicates[key][ia] - agr.replicates[key][ib], level, method)
            for key in ("tau", "pairwise_accuracy")]
    return [AgreementDifference(metric_a=a, metric_b=b, summary=agr.summary, tau=cols[0][q],
                                pairwise_accuracy=cols[1][q]) for q, (a, b) in enumerate(pairs)]


# ---- pairs of systems: reversals and significance clusters ----------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class PairDifferences:
    """value_i − value_j for every system pair i < j (np.triu_indices order), with CIs from the input draws."""

    i: np.ndarray
    j: np.ndarray
    point: np.ndarray
    low: np.ndarray
    high: np.ndarray
    dropped: np.ndarray

    @property
    def sign(self) -> np.ndarray:
        """+1 where the CI is above 0 (i higher), −1 where below, 0 where it holds 0."""
        return np.where(self.low > 0, 1, np.where(self.high < 0, -1, 0))


def pair_differences(res: SystemBootstrap, metric: str | None = None, summary: str = "mean",
                     level: float = 0.95) -> PairDifferences:
    """Paired differences between systems of the human rate (metric=None) or of a metric summary.

    Args:
        res: The slice's system bootstrap.
        metric: A metric name, or None for the human pass rate.
        summary: "mean" or "pass".
        level: Coverage of the intervals.

    Returns:
        Every system pair's difference with its interval (input draws only).
    """
    v = res.row(metric, summary)
    i, j = np.triu_indices(len(res.systems), 1)
    lo, hi, dropped = percentile_cis(res.replicates[v, i] - res.replicates[v, j], level)
    return PairDifferences(i=i, j=j, point=res.point[v, i] - res.point[v, j], low=lo, high=hi, dropped=dropped)


def _oriented(res: SystemBootstrap, d: PairDifferences, q: int, sign: int, v: int) -> Estimate:
    """Estimate of (winner − loser) from pair q's i − j difference; sign −1 flips it."""
    lo, hi = (d.low[q], d.high[q]) if sign > 0 else (-d.high[q], -d.low[q])
    return Estimate(estimate=float(sign * d.point[q]), ci_low=float(lo), ci_high=float(hi),
                    n=int(res.n[v, d.i[q]] + res.n[v, d.j[q]]), n_groups=res.design.n_used,
                    method="paired-" + res.method.replace("+systems", ""), n_boot=res.n_boot,
                    n_boot_dropped=int(d.dropped[q]))


@dataclass(frozen=True, kw_only=True)
class Reversal:
    """Humans prefer `human_prefers` (rate difference CI above 0) but the metric significantly prefers the other."""

    metric: str
    summary: str
    human_prefers: str
    metric_prefers: str
    human_difference: Estimate  # human rate of human_prefers − metric_prefers (> 0)
    metric_difference: Estimate  # metric summary of human_prefers − metric_prefers (< 0)



def reversals(res: SystemBootstrap, metric: str, summary: str = "mean", level: float = 0.95,
              human: PairDifferences | None = None) -> list[Reversal]:
    """System pairs whose paired-difference CIs exclude 0 in opposite directions for humans and the metric.

    Args:
        res: The slice's system bootstrap.
        metric: The metric.
        summary: "mean" or "pass".
        level: Coverage of the intervals.
        human: The human pair differences, if already computed.

    Returns:
        One record per reversed pair.
    """
    v = res.row(metric, summary)
    hd = human if human is not None else pair_differences(res, None, level=level)
    md = pair_differences(res, metric, summary, level)
    hs, ms = hd.sign, md.sign
    out = []
    for q in np.flatnonzero((hs != 0) & (ms == -hs)).tolist():
        sign = int(hs[q])
        a, b = (hd.i[q], hd.j[q]) if sign > 0 else (hd.j[q], hd.i[q])
        out.append(Reversal(metric=metric, summary=summary, human_prefers=res.systems[a], metric_prefers=res.systems[b],
                            human_difference=_oriented(res, hd, q, sign, 0),
                            metric_difference=_oriented(res, md, q, sign, v)))
    return sorted(out, key=lambda r: r.human_difference.estimate, reverse=True)


@dataclass(frozen=True, kw_only=True)
class SignificanceClusters:
    """Systems ordered best first and cut where every system above beats every system below (CI above 0).

    As WMT's human-ranking clusters: within a cluster the data cannot order the systems. `resolved`
    lists every pair (better, worse) whose paired difference CI excludes 0.
    """

    variable: str  # "human" or "<metric>:<summary>"
    order: tuple[str, ...]
    values: tuple[float, ...]
    clusters: tuple[tuple[str, ...], ...]
    resolved: tuple[tuple[str, str], ...]
    n_pairs: int
    record_derived: ClassVar[tuple[str, ...]] = ("share_resolved",)

    @property
    def share_resolved(self) -> float:
        return len(self.resolved) / self.n_pairs if self.n_pairs else float("nan")



def significance_clusters(res: SystemBootstrap, metric: str | None = None, summary: str = "mean",
                          level: float = 0.95) -> SignificanceClusters:
    """Clusters of the human pass rates (metric=None) or of a metric's summary; see `SignificanceClusters`.

    Args:
        res: The slice's system bootstrap.
        metric: A metric name, or None for the human pass rate.
        summary: "mean" or "pass".
        level: Coverage of the intervals.

    Returns:
        The systems grouped where the labels do not resolve their differences.
    """
    v = res.row(metric, summary)
    s = len(res.systems)
    d = pair_differences(res, metric, summary, level)
    beats = np.zeros((s, s), dtype=bool)  # beats[a, b]: a is significantly above b
    beats[d.i[d.sign > 0], d.j[d.sign > 0]] = True
    beats[d.j[d.sign < 0], d.i[d.sign < 0]] = True
    order = np.argsort(-np.nan_to_num(res.point[v], nan=-np.inf), kind="stable")
    ranked = beats[np.ix_(order, order)]
    cuts = [c for c in range(1, s) if ranked[:c, c:].all()]  # everything above position c beats everything below
    bounds = [0, *cuts, s]
    names = [res.systems[q] for q in order]
    rank = {name: q for q, name in enumerate(names)}
    resolved = sorted(((res.systems[a], res.systems[b]) for a, b in zip(*np.nonzero(beats))),
                      key=lambda p: (rank[p[0]], rank[p[1]]))
    return SignificanceClusters(variable="human" if metric is None else f"{metric}:{summary}", order=tuple(names),
                                values=tuple(float(res.point[v, q]) for q in order),
                                clusters=tuple(tuple(names[a:b]) for a, b in zip(bounds[:-1], bounds[1:])),
                                resolved=tuple(resolved), n_pairs=s * (s - 1) // 2)


# ---- everything for one slice ---------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class SystemLevel:
    """The system-level audit of one slice: design, per-system table, agreement, comparisons, reversals, clusters."""

    design: InputDesign
    resample: tuple[str, ...]
    level: float
    n_boot: int
    systems: list[SystemRow]
    agreement: list[RankAgreement]  # per summary, per metric
    ceiling: dict[str, Estimate]  # what a metric ranking by the true human rates would show (`human_ceiling`)
    differences: list[AgreementDifference]  # every pair of metrics, per summary
    reversals: list[Reversal]
    human_clusters: SignificanceClusters



def summarise_systems(res: SystemBootstrap, level: float = 0.95) -> SystemLevel:
    """The system-level agreement of one slice: every statistic of `res`, for each summary the metrics support.

    "pass" summaries need a metric threshold; "mean" is always there. Intervals are as measured with
    these inputs: see the module docstring and `human_ceiling` for what they cover.

    Args:
        res: The slice's system bootstrap (`system_bootstrap`).
        level: Coverage of every interval.

    Returns:
        Design, per-system table, agreement with the human ranking, metric-vs-metric differences,
        reversals and the human significance clusters.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> systems, inputs = np.repeat(["s1", "s2", "s3", "s4"], 40), np.tile(np.arange(40), 4)
        >>> quality = np.repeat([0.2, 0.4, 0.6, 0.8], 40)
        >>> labels = (rng.random(160) < quality).astype(int)
        >>> res = system_bootstrap(labels, {"m": quality + rng.normal(0, 0.3, 160)}, systems, inputs, n_boot=200)
        >>> a = summarise_systems(res).agreement[0]
        >>> a.metric, a.summary, round(a.tau.estimate, 3), round(a.tau.ci_low, 3), a.tau.ci_high
        ('m', 'mean', 0.913, 0.542, 1.0)
    """
    agreement, differences, revs = [], [], []
    ceiling = None
    human = pair_differences(res, None, level=level)
    for summary in SUMMARIES:
        names = [m for j, m in enumerate(res.metrics) if summary == "mean" or np.isfinite(res.thresholds[j])]
        if summary == "pass" and not names:
            continue
        agr = agreement_replicates(res, summary, names)
        if ceiling is None:  # it involves no metric: the same for every summary
            ceiling = human_ceiling(agr, level)
        agreement += rank_agreement(agr, level)
        differences += agreement_differences(agr, level)
        for name in names:
            revs += reversals(res, name, summary, level, human)
    clusters = significance_clusters(res, None, level=level)
    assert ceiling is not None  # the "mean" summary always runs and sets it
    return SystemLevel(design=res.design, resample=res.resample, level=level, n_boot=res.n_boot,
                       systems=system_rows(res, level), agreement=agreement, ceiling=ceiling, differences=differences,
                       reversals=revs, human_clusters=clusters)
