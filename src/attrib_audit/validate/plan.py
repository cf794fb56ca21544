"""`plan`: how many human labels a target dataset needs, by simulation with the audit's own bootstrap.

A population model draws labelled samples of n pairs in clusters of m; each simulated sample
gets the clustered bootstrap the audit runs (`bootstrap_aurocs`, vectorised over resamples),
and the plan reports the expected 95% CI half-width of the best metric's AUROC and the power
of the paired CI of best − runner-up to exclude zero (the audit's `excludes_zero`).

Population models:
- `EmpiricalPopulation` (from an earlier audit): a simulated pair is a whole row of the audited
  slice, so the joint distribution of the metrics' scores within each class is kept. Pairs of one
  cluster share a latent quantile (intra-cluster correlation `icc`) that picks rows by mean rank.
- `BinormalPopulation` (assumed AUROCs): score_k = d_k·y + noise, d_k = √2·Φ⁻¹(AUROC_k).

A gate target (`--max-false-pass` etc.) asks instead how many labels certify a threshold (`gate_plans`): the count
`threshold` reports, with the share of simulated samples of that size that do certify.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from attrib_audit.audit.saved import read_results
from attrib_audit.audit.thresholds import scored_from_results, slice_data
from attrib_audit.errors import UsageError
from attrib_audit.stats.auroc import auroc, average_ranks, ht_auroc
from attrib_audit.stats.bootstrap import bootstrap_aurocs, paired_difference, percentile_ci
from attrib_audit.stats.threshold import (
    MAX_UNITS,
    LabelNeed,
    Target,
    certify,
    fewest_labels,
    label_need,
    risk_upper_bound,
)
from attrib_audit.stats.types import LabelledScores

DEFAULT_GRID = (50, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000)
# Sample sizes a grid may hold: fewer than 10 pairs rarely holds both classes; each simulated sample is bootstrapped in
# one (n_boot, n) array, so n is capped where that stays a few hundred MB.
GRID_RANGE = (10, 20_000)
TARGET_POWER = 0.8


def cluster_effects(n: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(N(0,1) effect of each pair's cluster, cluster id per pair) for n pairs in clusters of m."""
    groups = np.arange(n) // max(1, m)
    return rng.standard_normal(int(groups[-1]) + 1 if n else 0)[groups], groups


@dataclass
class BinormalPopulation:
    """Metric k scores N(d_k·y, 1); metrics correlate by `corr`, and by `icc` within a cluster."""

    aurocs: tuple[float, ...]
    prevalence: float
    corr: float = 0.5

    def true_aurocs(self) -> np.ndarray:
        return np.asarray(self.aurocs, dtype=np.float64)

    def draw(self, n: int, m: int, icc: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        from scipy.special import ndtri  # deferred: `plan --help` must not import scipy
        d = np.sqrt(2.0) * ndtri(self.true_aurocs())
        y = (rng.random(n) < self.prevalence).astype(np.int64)
        shared, groups = cluster_effects(n, m, rng)
        own = np.sqrt(self.corr) * rng.standard_normal(n) + np.sqrt(1.0 - self.corr) * rng.standard_normal((d.size, n))
        return d[:, None] * y + np.sqrt(icc) * shared + np.sqrt(1.0 - icc) * own, y, groups


@dataclass
class EmpiricalPopulation:
    """Rows (metric score vectors) of an audited slice; `prevalence` may differ from the slice's.

    `weights` (1/inclusion probability, from a sampled and weighted audit) make each row stand for
    that many pool pairs: draws, true AUROCs and the prevalence then describe the pool, not the sample.
    """

    scores: np.ndarray  # (k, N)
    labels: np.ndarray  # (N,)
    prevalence: float
    weights: np.ndarray | None = None  # (N,)

    def __post_init__(self) -> None:
        y = self.labels.astype(bool)
        w = np.ones(y.size) if self.weights is None else np.asarray(self.weights, dtype=np.float64)
        composite = np.mean([average_ranks(row, w) for row in self.scores], axis=0)
        # rows of each class ordered by mean rank; a latent quantile u picks the row whose cumulative
        # weight share first exceeds u (with equal weights: order[floor(u·N_c)])
        self._order = {c: np.flatnonzero(y == c)[np.argsort(composite[y == c], kind="stable")] for c in (False, True)}
        self._cum = {c: np.cumsum(w[o]) / w[o].sum() for c, o in self._order.items()}

    def true_aurocs(self) -> np.ndarray:
        return np.array([pop_auroc(row, self.labels, self.weights) for row in self.scores])

    def draw(self, n: int, m: int, icc: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        y = (rng.random(n) < self.prevalence).astype(np.int64)
        shared, groups = cluster_effects(n, m, rng)
        from scipy.special import ndtr  # deferred: `plan --help` must not import scipy
        u = ndtr(np.sqrt(icc) * shared + np.sqrt(1.0 - icc) * rng.standard_normal(n))
        pick = np.empty(n, dtype=np.int64)
        for c in (0, 1):
            order, cum = self._order[bool(c)], self._cum[bool(c)]
            pick[y == c] = order[np.minimum(np.searchsorted(cum, u[y == c], side="right"), order.size - 1)]
        return self.scores[:, pick], y, groups

    def with_difference(self, best: int, runner: int, delta: float) -> "EmpiricalPopulation":
        """The same population with the runner-up's scores shifted so AUROC(best) − AUROC(runner) is delta on it,
        or as near as the slice allows: its AUROC moves in steps (1/(n_pos·n_neg) unweighted), so the gap lands on
        the reachable value nearest delta (`auroc_step` bounds the miss; the caller reports the gap actually used).

        The runner-up's normal scores Φ⁻¹(rank) get c added to the positives; c is found by
        bisection (AUROC rises monotonically with c), keeping its correlation with the others.
        """
        target = self.true_aurocs()[best] - delta
        if not 0.0 < target < 1.0:
            raise UsageError(f"a difference of {delta} puts the runner-up's AUROC at {target:.3f}")
        w = np.ones(self.labels.size) if self.weights is None else np.asarray(self.weights, dtype=np.float64)
        from scipy.special import ndtri  # deferred: `plan --help` must not import scipy
        z = ndtri((average_ranks(self.scores[runner], w) - 0.5) / w.sum())
        lo, hi = -10.0, 10.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if pop_auroc(z + mid * self.labels, self.labels, self.weights) < target else (lo, mid)
        # AUROC(lo) < target ≤ AUROC(hi) and nothing in between is reachable: keep the midpoint when it is within
        # the old 1e-3 (so the plans that always worked stay identical), else the nearer bracket end
        shifts = [(lo + hi) / 2, lo, hi]
        reached = [pop_auroc(z + c * self.labels, self.labels, self.weights) for c in shifts]
        pick = 0 if abs(reached[0] - target) <= 1e-3 else min((1, 2), key=lambda i: abs(reached[i] - target))
        scores = self.scores.copy()
        scores[runner] = z + shifts[pick] * self.labels
        constant = [i for i in (best, runner) if np.ptp(self.scores[i]) == 0]
        tolerance = max(1e-3, self.auroc_step()) + 1e-12
        # a tied metric cannot be shifted: "power" would be fiction
        if constant or abs(reached[pick] - target) > tolerance:
            raise UsageError(f"--detect {delta}: cannot set the runner-up's AUROC to {target:.3f} (reached "
                             f"{reached[pick]:.3f}){': a metric gives one constant score' if constant else ''}")
        return EmpiricalPopulation(scores, self.labels, self.prevalence, self.weights)

    def auroc_step(self) -> float:
        """The largest AUROC change one positive–negative pair can make: 1/(n_pos·n_neg), or with weights
        max w_pos · max w_neg / (W_pos · W_neg)."""
        y = self.labels.astype(bool)
        w = np.ones(y.size) if self.weights is None else np.asarray(self.weights, dtype=np.float64)
        return float(w[y].max() * w[~y].max() / (w[y].sum() * w[~y].sum()))


def estimate_icc(scores: np.ndarray, labels: np.ndarray, groups: np.ndarray) -> float | None:
    """One-way ANOVA intra-cluster correlation of the metrics' mean normal score (class means removed); None without
    clusters."""
    _, g = np.unique(np.asarray(groups).astype(str), return_inverse=True)
    sizes = np.bincount(g)
    if (sizes > 1).sum() < 2:
        return None
    composite = np.mean([average_ranks(r) for r in scores], axis=0)
    from scipy.special import ndtri  # deferred: `plan --help` must not import scipy
    q = ndtri((average_ranks(composite) - 0.5) / composite.size)
    for c in (0, 1):
        q[labels == c] -= q[labels == c].mean()
    n, k = q.size, sizes.size
    means = np.bincount(g, weights=q) / sizes
    msb = (sizes * (means - q.mean()) ** 2).sum() / (k - 1)
    msw = ((q - means[g]) ** 2).sum() / max(n - k, 1)
    n0 = (n - (sizes ** 2).sum() / n) / (k - 1)
    return float(np.clip((msb - msw) / (msb + (n0 - 1) * msw), 0.0, 0.95))


@dataclass(frozen=True, kw_only=True)
class PlanRow:
    """One sample size of a plan's curve, from its simulated samples."""

    n: int
    half_width: float  # mean over simulated samples of the best metric's 95% CI half-width
    power: float | None  # share of samples whose paired CI of best − runner-up lies above zero
    undefined: int  # samples with one class only (AUROC undefined; counted as not detected)
    half_width_pool: float | None = None  # with a finite pool: the half-width for the pool's own AUROC (FPC)


@dataclass(frozen=True)
class HanleyMcNeil:
    """The textbook sample size (independent pairs) for the half-width target: a cross-check of the simulation."""

    n: int | None = field(metadata={"json": "hanley_mcneil_n"})  # None: not reached below 100 000 pairs


@dataclass(frozen=True, kw_only=True)
class SamplePlan:
    """One scenario's plan (an audited slice, or the assumed population): the simulated curve and the n it
    recommends (None: no grid size meets the goals)."""

    title: str
    best: str
    best_auroc: float  # the best metric's AUROC on the population simulated
    runner: str | None  # the runner-up planned for (only with --detect)
    notes: tuple[str, ...]
    pairs_per_cluster: int
    icc: float
    sims: int
    n_boot: int
    rows: tuple[PlanRow, ...]
    recommended_n: int | None
    goals: tuple[str, ...]
    hanley_mcneil: HanleyMcNeil | None = field(default=None, metadata={"skip_default": True, "inline": True})
    pool: int | None = field(default=None, metadata={"skip_default": True})  # pairs in the pool, when given
    pool_note: str = field(default="", metadata={"skip_default": True})  # what the pool's half-width is for


def fpc(n: int, pool: int) -> float:
    """The finite-population correction √((N − n)/(N − 1)) of a standard error for n of a pool of N (0 at n = N).

    Args:
        n: labelled pairs.
        pool: pairs in the pool.

    Returns:
        The factor; 0 when the whole pool is labelled.
    """
    return math.sqrt(max(pool - n, 0) / (pool - 1)) if pool > 1 else 0.0


def simulate(pop, n: int, *, best: int, runner: int | None, m: int, icc: float, n_sims: int, n_boot: int,
             seed: int | Sequence[int]) -> PlanRow:
    """n_sims labelled samples of n pairs, each with the audit's clustered bootstrap (B resamples in one array op).

    Samples come from the stream default_rng([*seed, 0]) and resamples from [*seed, 1], so
    another implementation can reproduce the very same samples.
    """
    key = [int(x) for x in np.atleast_1d(seed)]
    rng, boot_rng = np.random.default_rng([*key, 0]), np.random.default_rng([*key, 1])
    rows = [best] if runner is None else [best, runner]
    widths, hits, undefined = np.full(n_sims, np.nan), np.zeros(n_sims, dtype=bool), 0
    for r in range(n_sims):  # one sample per iteration; the bootstrap inside is vectorised
        scores, y, groups = pop.draw(n, m, icc, rng)
        if y.min() == y.max():
            undefined += 1
            continue
        boot = bootstrap_aurocs(scores[rows], y, groups, n_boot=n_boot, rng=boot_rng)
        lo, hi, _ = percentile_ci(boot.replicates[0])
        widths[r] = (hi - lo) / 2
        if runner is not None:
            hits[r] = paired_difference(boot, 0, 1).ci_low > 0
    return PlanRow(n=n, half_width=float(np.nanmean(widths)) if np.isfinite(widths).any() else float("nan"),
                   power=None if runner is None else float(hits.mean()), undefined=undefined)


def plan_curve(pop, grid, *, best: int, runner: int | None, m: int, icc: float, half_width: float | None,
               n_sims: int, n_boot: int, seed: int) -> tuple[list[PlanRow], int | None]:
    """Simulate n along the grid until both targets are met; (rows, recommended n or None)."""
    rows = []
    for n in grid:
        row = simulate(pop, int(n), best=best, runner=runner, m=m, icc=icc, n_sims=n_sims, n_boot=n_boot,
                       seed=(seed, int(n)))
        rows.append(row)
        powered = runner is None or (row.power is not None and row.power >= TARGET_POWER)
        if (half_width is None or row.half_width <= half_width) and powered:
            return rows, int(n)
    return rows, None


def hanley_mcneil_se(a: float, n_pos: float, n_neg: float) -> float:
    """Hanley & McNeil (1982) standard error of an AUROC from n_pos positives and n_neg negatives (no clustering)."""
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    return float(np.sqrt((a * (1 - a) + (n_pos - 1) * (q1 - a * a) + (n_neg - 1) * (q2 - a * a)) / (n_pos * n_neg)))


@dataclass(frozen=True, kw_only=True)
class PlanOptions:
    """What `plan` simulates: the population (an audit folder, or assumed AUROCs) and the targets."""

    results: str | None = None  # an audit folder: simulate from its score distributions
    slice: str | None = None  # with results: this slice only (default: every two-class slice)
    scorers: tuple[str, ...] | None = None  # with results: the candidates (default: all audited)
    auroc: tuple[float, ...] | None = None  # assumed AUROC of the best metric (and others) instead of results
    prevalence: float | None = None
    corr: float = 0.5  # with auroc: correlation of the metrics' scores
    half_width: float | None = None  # target 95% CI half-width of the best metric's AUROC
    detect: float | None = None  # AUROC gap between best and runner-up to detect with power TARGET_POWER
    pairs_per_cluster: int | None = None
    icc: float | None = None
    grid: tuple[int, ...] = DEFAULT_GRID
    sims: int = 200
    n_boot: int = 300
    seed: int = 0
    gate: Target | None = None  # with results: labels that would certify a gate threshold for this target
    delta: float = 0.1
    unit: str = "auto"
    pool: int | None = None  # pairs in the pool the labels come from: the plan never asks for more


@dataclass(kw_only=True)
class Scenario:
    """One population to plan for, with the names the table prints."""

    title: str
    pop: BinormalPopulation | EmpiricalPopulation
    names: list[str]
    best: int
    runner: int | None
    m: int
    icc: float
    notes: list[str]
    gap: float | None = None  # the AUROC gap best − runner-up the plan detects (--detect, or the nearest reachable)


def pop_auroc(scores: np.ndarray, labels: np.ndarray, weights: np.ndarray | None) -> float:
    return auroc(scores, labels) if weights is None else ht_auroc(scores, labels, weights)


def scenarios_from_results(folder: Path, opts: PlanOptions) -> list[Scenario]:
    """One scenario per usable slice of an audit (or the one named by `opts.slice`)."""
    import pandas as pd

    for p in (folder / "results.json", folder / "scores.parquet"):
        if not p.exists():
            raise UsageError(f"{p} not found; run `attrib-audit audit --out {folder}` first")
    results = read_results(folder, "plan", UsageError)
    frame = pd.read_parquet(folder / "scores.parquet")
    audited = results.scorer_names
    ok = [s.slice for s in results.slices if s.status == "ok"]
    names = list(opts.scorers) if opts.scorers else audited
    unknown = sorted(set(names) - set(audited))
    if unknown:
        raise UsageError(f"scorer(s) {', '.join(unknown)} not in this audit ({', '.join(audited)})")
    if opts.slice and opts.slice not in ok:
        raise UsageError(f"slice {opts.slice!r} is not a two-class slice of {folder} ({', '.join(ok)})")
    out = []
    for sl in [opts.slice] if opts.slice else ok:
        part = frame[frame["slice"].astype(str) == sl]
        scores = part[names].to_numpy(np.float64).T
        keep = np.isfinite(scores).all(axis=0)
        scores, y = scores[:, keep], part["label"].to_numpy(np.int64)[keep]
        groups = part["group"].astype(str).to_numpy()[keep]
        w = part["weight"].to_numpy(np.float64)[keep] if "weight" in part else None  # a sampled, weighted audit
        prevalence = opts.prevalence if opts.prevalence is not None else float(
            y.mean() if w is None else (w * y).sum() / w.sum())
        pop = EmpiricalPopulation(scores, y, prevalence, w)
        order = np.argsort(-pop.true_aurocs(), kind="stable")
        best, runner = int(order[0]), int(order[1]) if len(names) > 1 and opts.detect is not None else None
        notes = [f"{y.size} audited pairs, {len(set(groups))} clusters; prevalence {prevalence:.2f}"
                 + ("; Horvitz–Thompson weighted (the audited file was a weighted sample): the plan describes "
                    "the pool it was drawn from" if w is not None else "")]
        gap = None
        if runner is not None and opts.detect is not None:  # a runner-up is planned for only with --detect
            pop = pop.with_difference(best, runner, opts.detect)
            truth = pop.true_aurocs()
            gap = opts.detect if abs(truth[best] - truth[runner] - opts.detect) <= 1e-3 else round(
                float(truth[best] - truth[runner]), 4)
            notes.append(f"runner-up {names[runner]} shifted to AUROC {truth[runner]:.3f} "
                         f"(audited {pop_auroc(scores[runner], y, w):.3f}) so the true gap is {gap}"
                         + ("" if gap == opts.detect else f", the nearest to --detect {opts.detect} on this slice "
                            f"(its AUROC moves in steps of {pop.auroc_step():.4f})"))
        m = opts.pairs_per_cluster or max(1, int(round(y.size / len(set(groups)))))
        icc = opts.icc if opts.icc is not None else estimate_icc(scores, y, groups)
        if icc is None:
            notes.append("the audit has no multi-pair clusters to estimate the intra-cluster correlation: assuming 0 "
                         "(pass --icc)")
            icc = 0.0
        out.append(Scenario(title=f"slice {sl}", pop=pop, names=names, best=best, runner=runner, m=m, icc=icc,
                            notes=notes, gap=gap))
    return out


def scenario_from_assumptions(opts: PlanOptions) -> Scenario:
    aurocs = list(opts.auroc or ())
    if opts.prevalence is None:
        raise UsageError("--auroc needs --prevalence (share of supported pairs)")
    if len(aurocs) == 1 and opts.detect is not None:
        aurocs.append(aurocs[0] - opts.detect)
    if not all(0.5 <= a < 1 for a in aurocs) or not 0 < opts.prevalence < 1:
        raise UsageError("--auroc values must be in [0.5, 1) and --prevalence in (0, 1)")
    runner = 1 if opts.detect is not None and len(aurocs) > 1 else None
    names = [f"metric{i + 1}" for i in range(len(aurocs))]
    notes = [f"binormal scores, AUROC {', '.join(f'{a:g}' for a in aurocs)}, prevalence {opts.prevalence:g}, "
             f"metric correlation {opts.corr:g}"]
    return Scenario(title="assumed", pop=BinormalPopulation(tuple(aurocs), opts.prevalence, opts.corr), names=names,
                    best=0, runner=runner, m=opts.pairs_per_cluster or 1, icc=opts.icc or 0.0, notes=notes,
                    gap=None if runner is None else round(aurocs[0] - aurocs[1], 4))


def plan_entry(sc: Scenario, rows: list[PlanRow], rec: int | None, opts: PlanOptions) -> SamplePlan:
    """One scenario's plan (what report.console.format_plan prints)."""
    truth = sc.pop.true_aurocs()
    hanley = None
    if sc.title == "assumed" and opts.half_width is not None and sc.m == 1:  # the textbook formula, as a cross-check
        a, p = truth[0], sc.pop.prevalence
        hanley = HanleyMcNeil(next((n for n in range(20, 100_000, 10)
                                    if 1.96 * hanley_mcneil_se(a, n * p, n * (1 - p)) <= opts.half_width), None))
    pool_note = "" if opts.pool is None else (
        f"the pool holds {opts.pool} pairs: no plan asks for more. half-width(pool) is for the pool's own AUROC "
        "(finite-population correction √((N − n)/(N − 1))); the audit's CI, and the targets, are for data like these "
        "beyond the pool")
    return SamplePlan(
        title=sc.title, best=sc.names[sc.best], best_auroc=float(truth[sc.best]),
        runner=sc.names[sc.runner] if sc.runner is not None else None, notes=tuple(sc.notes),
        pairs_per_cluster=sc.m, icc=sc.icc, sims=opts.sims, n_boot=opts.n_boot, rows=tuple(rows), recommended_n=rec,
        goals=tuple(([f"95% CI half-width ≤ {opts.half_width}"] if opts.half_width is not None else [])
                    + ([f"power ≥ {TARGET_POWER} to show a {sc.gap} AUROC gap"] if sc.runner is not None else [])),
        hanley_mcneil=hanley, pool=opts.pool, pool_note=pool_note)


def plan(opts: PlanOptions) -> list[SamplePlan] | list[GatePlan]:
    """One plan per scenario: each audited two-class slice of `opts.results`, or the assumed population;
    with a gate target, one per slice and scorer (`gate_plans`)."""
    if opts.gate is not None:
        if opts.half_width is not None or opts.detect is not None:
            raise UsageError("plan either a gate (--max-false-pass/--min-precision/--min-catch) or an AUROC target "
                             "(--half-width/--detect), not both at once")
        if opts.results is None:
            raise UsageError("a gate target is planned from an audit's scores: give --results DIR")
        return gate_plans(Path(opts.results), opts)
    if opts.half_width is None and opts.detect is None:
        raise UsageError("give a target: --half-width W and/or --detect D (or a gate: --max-false-pass R, ...)")
    if (opts.results is None) == (opts.auroc is None):
        raise UsageError("give either --results DIR (an earlier audit) or --auroc A --prevalence P")
    if opts.icc is not None and not 0 <= opts.icc < 1:
        raise UsageError("--icc must be in [0, 1)")
    if opts.pool is not None and opts.pool < 2:
        raise UsageError(f"--pool must be at least 2 pairs, got {opts.pool}")
    scenarios = scenarios_from_results(Path(opts.results), opts) if opts.results else [scenario_from_assumptions(opts)]
    grid = pool_grid(opts.grid, opts.pool)
    out: list[SamplePlan] = []
    for sc in scenarios:
        rows, rec = plan_curve(sc.pop, grid, best=sc.best, runner=sc.runner, m=sc.m, icc=sc.icc,
                               half_width=opts.half_width, n_sims=opts.sims, n_boot=opts.n_boot, seed=opts.seed)
        if opts.pool is not None:
            rows = [replace(r, half_width_pool=r.half_width * fpc(r.n, opts.pool)) for r in rows]
        out.append(plan_entry(sc, rows, rec, opts))
    return out


def pool_grid(grid: Sequence[int], pool: int | None) -> tuple[int, ...]:
    """The sample sizes to simulate: those below the pool, then the whole pool (never more than it holds)."""
    if pool is None:
        return tuple(grid)
    return tuple(sorted({int(n) for n in grid if n < pool} | {int(pool)}))


# ---- gates: how many labels certify a threshold ---------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class GateSimulation:
    """Simulated samples of the label count: the share of them on which a threshold is certified."""

    n: int  # pairs per simulated sample (the count, capped at the pool)
    pairs_per_cluster: int
    icc: float
    sims: int
    certified_share: float


@dataclass(frozen=True, kw_only=True)
class PoolReach:
    """Whether labelling the pool can certify the cheapest threshold, and if not, the best the whole pool shows."""

    reachable: bool
    labels: int  # the labels needed, or the whole pool when it is not enough
    bound_with_pool: float  # the (1 − δ) risk bound with the whole pool labelled, at the rates seen
    rate_with_pool: float  # that bound in the target's terms
    reachable_target: str  # the target that bound certifies, as the CLI spells it


@dataclass(frozen=True, kw_only=True)
class GatePlan:
    """One slice and scorer under a gate target: certified already, or the labels that would certify a threshold."""

    title: str
    target: str
    delta: float
    unit: str
    n: int  # labelled pairs of the slice
    n_failed: int  # pairs the scorer failed on
    certified_threshold: float | None
    reason: str | None  # why no threshold is certified (None when one is)
    label_need: LabelNeed | None  # the loosest threshold under the target
    fewest_labels: LabelNeed | None  # the cheapest threshold
    simulated: GateSimulation | None
    pool: int | None
    pool_reach: PoolReach | None
    supported_pass: float | None  # share of supported answers the certified threshold passes


def gate_power(pop: EmpiricalPopulation, n: int, *, m: int, icc: float, target: Target, delta: float, unit: str,
               n_sims: int, seed: Sequence[int]) -> float:
    """Share of n_sims labelled samples of n pairs (clusters of m) from `pop` on which Learn-then-Test certifies a
    threshold: the chance that labelling n pairs gives a deployable gate, not only the count at the rates seen."""
    rng = np.random.default_rng([*seed, 2])
    hits = 0
    for _ in range(n_sims):  # each certificate is one vectorised scan
        scores, y, groups = pop.draw(n, m, icc, rng)
        hits += certify(LabelledScores(scores[0], y, groups if m > 1 else None), target, delta, unit=unit).certified
    return hits / n_sims


def gate_plans(folder: Path, opts: PlanOptions) -> list[GatePlan]:
    """Per slice and scorer of an audit: certified already, or the labels that would certify a threshold.

    The count is `threshold`'s own (stats.threshold.label_need and fewest_labels on the same data, so both commands
    give one answer); the plan adds its simulation: how often a sample of that many pairs, drawn from the slice's
    score distributions in clusters of its size, does certify.
    """
    gate = opts.gate
    if gate is None:
        raise UsageError("a gate plan needs a target: --max-false-pass, --min-precision or --min-catch")
    pairs, _ = scored_from_results(folder, "plan")
    names = list(opts.scorers) if opts.scorers else list(pairs.scores)
    unknown = sorted(set(names) - set(pairs.scores))
    if unknown:
        raise UsageError(f"scorer(s) {', '.join(unknown)} not in this audit ({', '.join(pairs.scores)})")
    slices = sorted(set(pairs.slices.tolist()))
    if opts.slice and opts.slice not in slices:
        raise UsageError(f"slice {opts.slice!r} is not a slice of {folder} ({', '.join(slices)})")
    out = []
    for sl in [opts.slice] if opts.slice else slices:
        for name in names:
            data, n_failed = slice_data(pairs, name, sl)
            cert = certify(data, gate, opts.delta, unit=opts.unit)
            supported_pass = need = fewest = reach = simulated = None
            if cert.threshold is not None and data.labels.any():
                sup = data.labels == 1
                passed = sup & (data.scores >= cert.threshold)
                supported_pass = float(data.w[passed].sum() / data.w[sup].sum())
            if cert.threshold is None and data.n and 0 < data.labels.sum() < data.n:
                need, fewest = label_need(data, cert), fewest_labels(data, cert)
                if fewest and opts.pool is not None:
                    reach = pool_reach(fewest, gate, opts.delta, cert.p_value_method, data.n, opts.pool)
                # a count past the search's (a target like false-pass ≤ 1e-9) is stated, not simulated: no sample fits
                if fewest and fewest.labels_needed is not None and (fewest.units_needed or 0) <= MAX_UNITS:
                    n_sim = fewest.labels_needed if opts.pool is None else min(fewest.labels_needed, opts.pool)
                    m = opts.pairs_per_cluster or (max(1, int(round(data.n / np.unique(data.codes).size)))
                                                   if cert.unit == "group" else 1)
                    icc = opts.icc if opts.icc is not None else (
                        estimate_icc(data.scores[None, :], data.labels, data.groups) if data.groups is not None
                        else None) or 0.0 if m > 1 else 0.0
                    prevalence = float((data.w * data.labels).sum() / data.w.sum())
                    pop = EmpiricalPopulation(data.scores[None, :], data.labels, prevalence, data.weights)
                    simulated = GateSimulation(
                        n=n_sim, pairs_per_cluster=m, icc=icc, sims=opts.sims,
                        certified_share=gate_power(pop, n_sim, m=m, icc=icc, target=gate, delta=opts.delta,
                                                   unit=cert.unit, n_sims=opts.sims, seed=(opts.seed, n_sim)))
            out.append(GatePlan(title=f"slice {sl}, {name}", target=gate.describe(), delta=opts.delta, unit=cert.unit,
                                n=data.n, n_failed=n_failed, certified_threshold=cert.threshold, reason=cert.reason,
                                label_need=need, fewest_labels=fewest, simulated=simulated, pool=opts.pool,
                                pool_reach=reach, supported_pass=supported_pass))
    return out


def pool_reach(need: LabelNeed, target: Target, delta: float, method: str, n: int, pool: int) -> PoolReach:
    """Whether labelling the pool can certify the cheapest threshold, and if not, the best the whole pool can show.

    Args:
        need: the fewest-labels answer at the rates seen.
        target: the gate target.
        delta: the certificate's δ.
        method: its p-value method.
        n: labelled pairs now.
        pool: pairs in the pool.

    Returns:
        The reach: at most the pool's labels, and the (1 − δ) risk bound (and rate) with all of it labelled.
    """
    labels = need.labels_needed
    reachable = labels is not None and labels <= pool
    units = need.units_at_hand * pool / max(n, 1)
    bound = float(risk_upper_bound(np.array([need.risk]), np.array([units]), delta, method)[0])
    sign = "≤" if target.kind == "false_pass" else "≥"
    return PoolReach(reachable=reachable, labels=labels if labels is not None and reachable else pool,
                     bound_with_pool=bound, rate_with_pool=target.rate(bound),
                     reachable_target=f"{target.kind.replace('_', '-')} {sign} {target.rate(bound):.3g} "
                                      f"(delta {delta:g})")
