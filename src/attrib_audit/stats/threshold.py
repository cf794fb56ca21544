"""Deployable gates: "pass the answer when score ≥ t", with a threshold a team can rely on.

Three risks of a gate, all for label 1 = supported, 0 = unsupported:
- false-pass rate: share of unsupported pairs that pass (the target `max_false_pass`);
- 1 − precision: share of passed pairs that are unsupported (`min_precision`);
- 1 − catch rate: share of unsupported pairs not flagged (`min_catch`). Catch is 1 − false-pass,
  so `min_catch c` certifies exactly what `max_false_pass 1 − c` does; it is kept as the wording teams use.

`certify` is Learn-then-Test (Angelopoulos, Bates, Candès, Jordan, Lei 2021): candidate thresholds
from the most to the least conservative, a valid p-value for H0 "risk(t) > α" at each, and
fixed-sequence testing at level δ (stop at the first threshold not rejected), so the returned
threshold has true risk ≤ α with probability ≥ 1 − δ over the calibration draw. Beside it
`naive_threshold` is what people do (the least conservative t whose in-sample risk ≤ α), and
`cross_fit` gives both thresholds' rates on held-out groups; `transfer_matrix` applies each
slice's threshold to every other slice.

Candidate thresholds are the calibration scores themselves. For the false-pass (and catch) risk
the p-value is monotone in t, so failure needs the one population threshold where the risk
crosses α to be rejected: a data-chosen grid keeps the guarantee exact. For precision the
guarantee conditions on the passed set (given how many pairs pass t, their labels are i.i.d. with
the population's unsupported share among passing pairs); the data-chosen grid and the start at the
first threshold passing enough pairs to be certifiable are checked by simulation in the tests, and
a fixed `grid` chosen before seeing the labels makes it exact. Precision also depends on the share
of unsupported pairs, so it holds for the calibration mix (or the weighted pool), not another mix.

Unit of exchangeability: pairs, or groups (`unit="group"`, the default when some group holds more
than one pair). With groups each group is one unit and the certified risk is the mean over groups
of the group's own share (e.g. of its unsupported pairs that pass), tested with the
Hoeffding–Bentkus p-value valid for [0, 1] losses; a group counts once whatever its size.
Weights (1/π of a sampled file) make every risk a Horvitz–Thompson share, tested with an effective
sample size (the smaller of Kish's and Korn & Graubard's variance-matched one): an approximation,
exact only for equal weights, checked by simulation on a design whose weights go with the scores.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, Mapping, Sequence

import numpy as np

from attrib_audit.stats.bootstrap import DEFAULT_B, cluster_sum_replicates, group_folds, percentile_ci, slice_rng
from attrib_audit.stats.rng import as_generator, block_rows
from attrib_audit.stats.types import Estimate, LabelledScores

KINDS = ("false_pass", "precision", "catch")
P_VALUES = ("auto", "binomial", "hoeffding_bentkus")
UNITS = ("auto", "pair", "group")
CIS = ("auto", "exact", "bootstrap")
MAX_UNITS = 10_000_000  # the largest count `units_needed` searches; past it only a rate of 0 is solved


# --- targets -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """What a team states: `false_pass` ≤ level, or `precision` / `catch` ≥ level."""

    kind: str
    level: float

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"target kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if not 0.0 < float(self.level) < 1.0:
            raise ValueError(f"the {self.kind.replace('_', '-')} target must lie strictly between 0 and 1, "
                             f"got {self.level}")

    @property
    def alpha(self) -> float:
        """The bound on the risk that is certified: false-pass rate, 1 − precision or 1 − catch rate."""
        return float(self.level) if self.kind == "false_pass" else 1.0 - float(self.level)

    @property
    def on_unsupported(self) -> bool:
        """The risk is a share of the unsupported pairs (false-pass, catch), not of the passed ones (precision)."""
        return self.kind != "precision"

    def rate(self, risk: float) -> float:
        """The team's rate for a risk (precision and catch are 1 − risk)."""
        return float(risk) if self.kind == "false_pass" else 1.0 - float(risk)

    def describe(self) -> str:
        sign = "≤" if self.kind == "false_pass" else "≥"
        return f"{self.kind.replace('_', '-')} {sign} {self.level:g}"

    def broken_by(self, est: Estimate) -> bool:
        """The rate's CI lies wholly on the wrong side of the target."""
        if not np.isfinite(est.ci_low):
            return False
        return est.ci_low > self.level if self.kind == "false_pass" else est.ci_high < self.level


def make_target(*, max_false_pass: float | None = None, min_precision: float | None = None,
                min_catch: float | None = None) -> Target:
    """The one target given (exactly one of the three).

    Args:
        max_false_pass: Largest acceptable share of unsupported pairs that pass, in (0, 1).
        min_precision: Smallest acceptable share of passed pairs that are supported, in (0, 1).
        min_catch: Smallest acceptable share of unsupported pairs flagged, in (0, 1).

    Returns:
        The target.

    Raises:
        ValueError: None or several are given, or the level is not strictly between 0 and 1.

    Examples:
        >>> make_target(min_precision=0.95).describe()
        'precision ≥ 0.95'
    """
    given = [(k, v) for k, v in (("false_pass", max_false_pass), ("precision", min_precision), ("catch", min_catch))
             if v is not None]
    if len(given) != 1:
        raise ValueError("give exactly one target: max_false_pass, min_precision or min_catch")
    return Target(*given[0])


# --- p-values and bounds ---------------------------------------------------------------------------------

def _snap(k: np.ndarray) -> np.ndarray:
    """Counts computed as n·rate, rounded when float error only moved them off an integer."""
    r = np.round(k)
    return np.where(np.abs(k - r) < 1e-9, r, k)


def binomial_cdf(k: np.ndarray, n: np.ndarray, p: float | np.ndarray) -> np.ndarray:
    """P(Bin(n, p) ≤ k) = I_{1−p}(n − k, k + 1), continued to real k and n (weighted, effective counts).

    Args:
        k: Counts (any real; below 0 gives 0, at or above n gives 1).
        n: Trials, broadcast with `k`.
        p: Success probability, broadcast with `k`.

    Returns:
        The CDF values, shaped as `k` and `n` broadcast.
    """
    k, n = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64))
    p = np.broadcast_to(np.asarray(p, dtype=np.float64), k.shape)
    from scipy import special  # here, not at the top: `threshold --help` must not import scipy

    out = np.ones(k.shape)
    ok = (k < n) & (k >= 0)
    out[ok] = special.betainc(n[ok] - k[ok], k[ok] + 1.0, 1.0 - p[ok])
    out[k < 0] = 0.0
    return out


def binomial_pvalue(risk: np.ndarray, n: np.ndarray, alpha: float | np.ndarray) -> np.ndarray:
    """Exact p-value for H0: risk > α from n 0/1 losses with mean `risk`: P(Bin(n, α) ≤ n·risk).

    Under H0 the count of losses is Bin(n, R) with R > α, stochastically larger than Bin(n, α), so the
    p-value is super-uniform. p ≤ δ exactly when the one-sided Clopper–Pearson upper bound at 1 − δ is ≤ α.

    Args:
        risk: Observed risks (shares of losses).
        n: Units each risk is a share of (effective counts may be real); 0 gives p = 1.
        alpha: The bound tested.

    Returns:
        The p-values, shaped as the inputs broadcast.

    Examples:
        >>> round(float(binomial_pvalue(np.array([0.0]), np.array([22.0]), 0.1)[0]), 4)  # 0.9^22
        0.0985
    """
    n = np.asarray(n, dtype=np.float64)
    return np.where(n > 0, binomial_cdf(_snap(np.asarray(risk) * n), n, alpha), 1.0)


def hoeffding_bentkus_pvalue(risk: np.ndarray, n: np.ndarray, alpha: float | np.ndarray) -> np.ndarray:
    """LTT's Hoeffding–Bentkus p-value for H0: risk > α from n i.i.d. losses in [0, 1] with mean `risk`.

    min(exp(−n·h(min(r̂, α), α)), e·P(Bin(n, α) ≤ ⌈n·r̂⌉)), h the Bernoulli relative entropy. For 0/1
    losses the Bentkus term without its factor e is the exact binomial tail, which is never above the
    Hoeffding term; the factor e pays for losses that are shares (a group's rate).

    Args:
        risk: Observed mean losses, clipped to [0, 1].
        n: Units averaged (effective counts may be real); 0 gives p = 1.
        alpha: The bound tested.

    Returns:
        The p-values, at most 1, shaped as the inputs broadcast.
    """
    from scipy import special  # deferred like binomial_cdf's

    r = np.clip(np.asarray(risk, dtype=np.float64), 0.0, 1.0)
    n = np.asarray(n, dtype=np.float64)
    a = np.minimum(r, alpha)
    h = special.xlogy(a, a / alpha) + special.xlogy(1.0 - a, (1.0 - a) / (1.0 - alpha))
    hoeffding = np.exp(-n * h)
    bentkus = math.e * binomial_cdf(np.ceil(_snap(n * r)), n, alpha)
    return np.where(n > 0, np.minimum(1.0, np.minimum(hoeffding, bentkus)), 1.0)


def pvalues(risk: np.ndarray, n: np.ndarray, alpha: float | np.ndarray, method: str) -> np.ndarray:
    """The p-values of H0: risk > α by the named method.

    Args:
        risk: Observed risks.
        n: Units (effective counts) behind each risk.
        alpha: The bound tested.
        method: "binomial" (0/1 losses) or "hoeffding_bentkus" (losses in [0, 1]).

    Returns:
        The p-values.

    Raises:
        ValueError: An unknown method.
    """
    if method == "binomial":
        return binomial_pvalue(risk, n, alpha)
    if method == "hoeffding_bentkus":
        return hoeffding_bentkus_pvalue(risk, n, alpha)
    raise ValueError(f"p_value must be one of {', '.join(P_VALUES[1:])}, not {method!r}")


def clopper_pearson(k: np.ndarray, n: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided exact (Clopper–Pearson) interval for k successes in n, as scipy's binomtest(...).proportion_ci.

    Args:
        k: Successes.
        n: Trials, broadcast with `k`; n ≤ 0 gives NaN bounds.
        level: Coverage.

    Returns:
        (low, high) arrays.

    Examples:
        >>> lo, hi = clopper_pearson(np.array([3]), np.array([10]))
        >>> round(float(lo[0]), 4), round(float(hi[0]), 4)
        (0.0667, 0.6525)
    """
    k, n = np.broadcast_arrays(np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64))
    from scipy import stats as sps  # deferred like binomial_cdf's

    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        lo = np.where(k > 0, sps.beta.ppf(a, np.maximum(k, 1e-300), n - k + 1), 0.0)
        hi = np.where(k < n, sps.beta.ppf(1.0 - a, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    bad = n <= 0
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)


def risk_upper_bound(risk: np.ndarray, n: np.ndarray, delta: float, method: str) -> np.ndarray:
    """The (1 − δ) upper confidence bound of the risk that matches the p-value: the smallest α with p ≤ δ.

    Binomial: the one-sided Clopper–Pearson bound; Hoeffding–Bentkus: its inversion by bisection.

    Args:
        risk: Observed risks.
        n: Units (effective counts) behind each; 0 gives a bound of 1.
        delta: Error level of the bound, in (0, 1).
        method: "binomial" or "hoeffding_bentkus".

    Returns:
        The bounds, at least 1-D.

    Examples:
        >>> round(float(risk_upper_bound(np.array([0.0]), np.array([22.0]), 0.1, "binomial")[0]), 4)
        0.0994
    """
    from scipy import optimize  # deferred like binomial_cdf's
    from scipy import stats as sps

    r = np.atleast_1d(np.asarray(risk, dtype=np.float64))
    n = np.broadcast_to(np.asarray(n, dtype=np.float64), r.shape)
    if method == "binomial":
        k = _snap(r * n)
        with np.errstate(invalid="ignore"):
            ub = np.where(k < n, sps.beta.ppf(1.0 - delta, k + 1.0, np.maximum(n - k, 1e-300)), 1.0)
    else:
        ub = np.ones_like(r)
        for i in np.flatnonzero(n > 0):  # p falls continuously as α rises: one root per bound
            gap = lambda a, i=i: float(pvalues(r[i], n[i], a, method)) - delta  # noqa: E731
            lo = min(max(float(r[i]), 1e-12), 1.0 - 1e-12)
            ub[i] = lo if gap(lo) <= 0 else optimize.brentq(gap, lo, 1.0 - 1e-12, xtol=1e-12)
    return np.where(n > 0, ub, 1.0)


def units_needed(risk: float, alpha: float, delta: float, method: str = "binomial",
                 cap: int = MAX_UNITS) -> int | None:
    """Smallest n at which a risk observed at this rate would be certified ≤ α at δ (same rate, n units).

    Counts are continued to real values (n·rate need not be whole), so the answer moves smoothly with n.
    The p-value falls with n (up to a count's rounding), so n = 4^k probes bracket the answer first and only
    n up to the bracket are scanned: a rate just below α costs a few probes, not a scan to `cap`.

    Args:
        risk: The observed risk, in [0, 1].
        alpha: The bound to certify.
        delta: Error level of the certificate.
        method: "binomial" or "hoeffding_bentkus".
        cap: Largest n searched.

    Returns:
        The count, or None when the rate is not below α (no sample size certifies it) or the count would
        pass `cap` (`units_needed_without_failures` answers for a rate of 0 without a cap).

    Examples:
        >>> units_needed(0.02, 0.1, 0.1)
        33
        >>> units_needed(0.1, 0.1, 0.1) is None
        True
    """
    if not 0.0 <= risk < alpha:
        return None
    probes = np.unique(np.minimum(float(cap), 4.0 ** np.arange(int(math.log(max(cap, 1), 4)) + 2)))
    hit = np.flatnonzero(pvalues(np.full(probes.size, risk), probes, alpha, method) <= delta)
    if not hit.size:
        return None
    cap = int(probes[hit[0]])
    start = 1
    while start <= cap:
        stop = min(cap, start * 4)
        n = np.arange(start, stop + 1, dtype=np.float64)
        hit = np.flatnonzero(pvalues(np.full(n.size, risk), n, alpha, method) <= delta)
        if hit.size:
            return int(n[hit[0]])
        start = stop + 1
    return None


def units_needed_without_failures(alpha: float, delta: float, method: str = "binomial") -> int:
    """Smallest n at which n units with no failure certify risk ≤ α at δ.

    With no failure both p-values are (1 − α)^n, so n is solved in closed form and then checked
    against the p-value itself: the same answer as `units_needed(0.0, ...)` wherever that finds
    one, and an answer for every α, however small (no search cap).

    Args:
        alpha: The risk bound to certify, in (0, 1).
        delta: The error level of the certificate, in (0, 1).
        method: "binomial" or "hoeffding_bentkus".

    Returns:
        The number of units (at least 1).

    Examples:
        >>> units_needed_without_failures(0.1, 0.1)
        22
        >>> units_needed_without_failures(1e-9, 0.1)
        2302585157
    """
    def p(n: int) -> float:
        return float(pvalues(np.zeros(1), np.array([float(n)]), alpha, method)[0])

    n = max(1, math.ceil(math.log(delta) / math.log1p(-alpha)))
    while n > 1 and p(n - 1) <= delta:
        n -= 1
    while p(n) > delta:
        n += 1
    return n


# --- risks of every candidate threshold on the unit ----------------------------------------------------

def _tail_sums(scores: np.ndarray, values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """(T, m): for each threshold t, the column sums of `values` (n, m) over rows with score ≥ t."""
    order = np.argsort(scores, kind="mergesort")
    cs = np.vstack([np.zeros((1, values.shape[1])), np.cumsum(values[order], axis=0)])
    idx = np.searchsorted(scores[order], thresholds, side="left")
    return cs[-1][None, :] - cs[idx]


def _group_moments(scores: np.ndarray, codes: np.ndarray, w: np.ndarray, neg: np.ndarray, unit_weight: np.ndarray,
                   thresholds: np.ndarray, on_unsupported: bool) -> np.ndarray:
    """(T, 6) loss moments over groups (as `_risk_and_n` reads them), a group's loss its weighted share at each
    threshold.

    False-pass: a group with an unsupported pair has loss = share of its unsupported pairs passing t.
    Precision: a group with a passed pair has loss = share of its passed pairs that are unsupported.
    Groups are reduced in blocks of thresholds, so no T × K matrix outlives its block.
    """
    distinct = np.unique(scores)
    rank = np.searchsorted(distinct, scores)
    width = distinct.size + 1
    key = codes * width + rank
    order = np.argsort(key, kind="mergesort")
    key = key[order]
    vals = np.column_stack([w, w * neg])[order]
    cs = np.vstack([np.zeros((1, 2)), np.cumsum(vals, axis=0)])
    k = int(codes.max()) + 1
    ends = np.searchsorted(key, (np.arange(k) + 1) * width, side="left")
    t_rank = np.searchsorted(distinct, thresholds, side="left")
    w_neg = np.bincount(codes, weights=w * neg, minlength=k)
    out = np.empty((thresholds.size, 6))
    step = block_rows(2 * k)  # a block's (b, K, 2) tail sums
    for s in range(0, thresholds.size, step):
        q = np.arange(k)[None, :] * width + t_rank[s:s + step, None]
        tail = cs[ends][None] - cs[np.searchsorted(key, q, side="left")]  # (b, K, 2): passed w, passed unsupported w
        if on_unsupported:
            inc = np.broadcast_to(w_neg > 0, tail.shape[:2])
            loss = np.where(inc, tail[:, :, 1] / np.where(w_neg > 0, w_neg, 1.0), 0.0)
        else:
            inc = tail[:, :, 0] > 0
            loss = np.where(inc, tail[:, :, 1] / np.where(inc, tail[:, :, 0], 1.0), 0.0)
        a = inc * unit_weight[None, :]
        out[s:s + step] = np.stack([a.sum(1), (a * a).sum(1), (a * loss).sum(1), (a * a * loss).sum(1),
                                    (a * a * loss * loss).sum(1), inc.sum(1)], axis=1)
    return out


@dataclass(frozen=True, eq=False, kw_only=True)
class Scan:
    """Every candidate threshold, most conservative first, with its risk on the unit, effective n and p-value."""

    thresholds: np.ndarray
    risk: np.ndarray  # NaN where no unit is counted (precision: nothing passes)
    n_effective: np.ndarray
    n_units: np.ndarray  # units counted (unsupported pairs, passed pairs, or groups) before weighting
    p_values: np.ndarray


def _risk_and_n(m: np.ndarray, weighted: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(risk, effective n, units) from (T, 6) moments Σa, Σa², Σaℓ, Σa²ℓ, Σa²ℓ², count of units with weight a, loss ℓ.

    Unweighted, n is the count. Weighted, n = min(Kish's (Σa)²/Σa², r̂(1 − r̂)/V̂) with V̂ the linearised
    variance of the weighted mean (Korn & Graubard's effective size for survey proportions): Kish
    alone is too generous when the weights go with the loss (a design that under-samples high
    scores); both equal the count for equal weights.
    """
    a, a2, al, a2l, a2l2, count = m.T
    with np.errstate(invalid="ignore", divide="ignore"):
        risk = np.where(a > 0, al / np.where(a > 0, a, 1.0), np.nan)
        if not weighted:
            return risk, count.astype(np.float64), count.astype(np.float64)
        kish = np.where(a2 > 0, a ** 2 / np.where(a2 > 0, a2, 1.0), 0.0)
        var = (a2l2 - 2.0 * risk * a2l + risk ** 2 * a2) / np.where(a > 0, a, 1.0) ** 2
        kg = np.where((var > 0) & (risk > 0) & (risk < 1), risk * (1.0 - risk) / np.where(var > 0, var, 1.0), np.inf)
        return risk, np.where(a > 0, np.minimum(kish, kg), 0.0), count.astype(np.float64)


def unit_risks(data: LabelledScores, target: Target, thresholds: np.ndarray, unit: str) -> tuple[Scan, bool]:
    """Every candidate threshold's risk on the unit, effective n and units counted (no p-values yet).

    Args:
        data: The labelled scores (weights and groups included).
        target: What is certified.
        thresholds: Candidate thresholds, most conservative first.
        unit: "pair" or "group" (already resolved from "auto").

    Returns:
        (scan, binary): the scan with NaN p-values, and whether every unit's loss is 0/1 (pairs, or groups
        with one relevant pair), which makes the exact binomial p-value valid.
    """
    s, w = data.scores, data.w
    w = np.ldexp(w, -int(np.frexp(w.max())[1])) if w.size else w  # every moment below is scale-free: keep Σw² finite
    neg = (data.labels == 0).astype(np.float64)
    t = np.asarray(thresholds, dtype=np.float64)
    if unit == "pair":  # 0/1 losses: every moment is a tail sum
        if target.on_unsupported:
            rows = neg > 0
            tails = _tail_sums(s[rows], np.column_stack([w[rows], w[rows] ** 2]), t)
            ones = np.ones(t.size)
            m = np.column_stack([w[rows].sum() * ones, (w[rows] ** 2).sum() * ones, tails[:, 0], tails[:, 1],
                                 tails[:, 1], rows.sum() * ones])
        else:
            tails = _tail_sums(s, np.column_stack([w, w ** 2, w * neg, w ** 2 * neg, np.ones(s.size)]), t)
            m = np.column_stack([tails[:, 0], tails[:, 1], tails[:, 2], tails[:, 3], tails[:, 3], tails[:, 4]])
        binary = True
    else:
        codes = data.codes
        k = int(codes.max()) + 1
        size = np.bincount(codes, minlength=k)
        v = np.bincount(codes, weights=w, minlength=k) / size  # a group's weight: its pairs' mean 1/π
        m = _group_moments(s, codes, w, neg, v, t, target.on_unsupported)
        relevant = np.bincount(codes, weights=neg, minlength=k) if target.on_unsupported else size
        binary = bool((relevant[relevant > 0] == 1).all())
    risk, n_eff, n_units = _risk_and_n(m, data.weights is not None)
    return Scan(thresholds=t, risk=risk, n_effective=n_eff, n_units=n_units, p_values=np.full(t.size, np.nan)), binary


# --- certification ------------------------------------------------------------------------------------------

def _unit_noun(target: Target, unit: str) -> str:
    if unit == "group":
        return "groups with an unsupported pair" if target.on_unsupported else "groups with a passed pair"
    return "unsupported pairs" if target.on_unsupported else "passed pairs"


def assumption(target: Target, unit: str, weighted: bool, fixed_grid: bool) -> str:
    """The plain statement of what the guarantee assumes and which rate it is about.

    Args:
        target: What is certified.
        unit: "pair" or "group".
        weighted: Whether the pairs carry 1/π weights.
        fixed_grid: Whether the candidates were fixed before seeing the labels.

    Returns:
        One line, clauses joined by semicolons.
    """
    what = {"false_pass": "share of {u} unsupported pairs that pass",
            "catch": "share of {u} unsupported pairs that pass",
            "precision": "share of {u} passed pairs that are unsupported"}[target.kind]
    if unit == "group":
        parts = ["groups are exchangeable (i.i.d. draws of the questions/documents the gate will see); pairs within "
                 "a group are not", "the certified risk is the mean over groups of the " + what.format(u="the group's")
                 + " (each group counts once, whatever its size)"]
    else:
        parts = ["pairs are exchangeable (i.i.d. draws from the population the gate will see)",
                 "the certified risk is the " + what.format(u="all")]
    if not target.on_unsupported:
        parts.append("tested conditionally on the passed set; it holds for this mix of supported and unsupported pairs"
                     + ("" if fixed_grid else "; candidate thresholds are the calibration scores"))
    if weighted:
        parts.append("Horvitz–Thompson weights (1/π): weighted shares tested with an effective sample size "
                     "(an approximation, exact only for equal weights)")
    return "; ".join(parts)


@dataclass(frozen=True, eq=False, kw_only=True)
class Certificate:
    """Learn-then-Test's answer for one slice: the least conservative certified threshold, or None and why."""

    target: Target
    delta: float
    threshold: float | None
    reason: str | None  # one line; None when a threshold is certified
    risk: float | None  # in-sample risk of the certified threshold on the unit
    upper_bound: float | None  # its (1 − δ) upper confidence bound (≤ α when certified)
    p_value: float | None
    unit: str  # "pair" or "group"
    p_value_method: str  # "binomial" or "hoeffding_bentkus"
    assumption: str
    n_units: int  # units the risk is a share of, at the certified threshold (all of them for false-pass)
    n_effective: float
    tested: int  # thresholds tested in the sequence
    candidates: int
    weighted: bool
    scan: Scan | None = field(default=None, metadata={"omit": True})
    record_derived: ClassVar[tuple[str, ...]] = ("certified_rate",)

    @property
    def certified(self) -> bool:
        return self.threshold is not None

    @property
    def certified_rate(self) -> float | None:
        """The in-sample risk of the certified threshold in the target's terms (None when none is certified)."""
        return None if self.risk is None else self.target.rate(self.risk)


def _resolve_unit(data: LabelledScores, unit: str) -> str:
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, not {unit!r}")
    return ("group" if data.clustered else "pair") if unit == "auto" else unit


def _one_class(data: LabelledScores) -> str | None:
    n_pos = int(data.labels.sum())
    n_neg = data.n - n_pos
    if n_pos and n_neg:
        return None
    return f"one class only ({n_pos} supported, {n_neg} unsupported pairs): a gate cannot be calibrated without both"


def certify(data: LabelledScores, target: Target, delta: float = 0.1, *, unit: str = "auto", p_value: str = "auto",
            grid: Sequence[float] | None = None) -> Certificate:
    """Learn-then-Test: the least conservative threshold whose risk is certified ≤ α with probability ≥ 1 − δ.

    Thresholds are scanned from the highest (most conservative) down; each is rejected (its risk
    shown ≤ α) while its p-value is ≤ δ, and the scan stops at the first one that is not. Precision
    starts at the first threshold passing enough units to be certifiable at all (a count of scores,
    never of labels). A target so strict that no sample at hand could certify it (e.g. false-pass
    ≤ 1e-9) gives a "too few labels" certificate naming how many units it would take.

    Args:
        data: Scores, 0/1 labels (1 = supported), optional groups and 1/π weights.
        target: The rate to guarantee (`Target` or `make_target`).
        delta: Error level: the guarantee holds with probability ≥ 1 − δ over the calibration draw.
        unit: Unit of exchangeability: "pair", "group" (each group one unit; its loss is its own share),
            or "auto" (groups when some group holds several pairs, else pairs).
        p_value: "binomial" (exact; needs 0/1 losses), "hoeffding_bentkus" (losses in [0, 1]) or "auto"
            (binomial when every unit's loss is 0/1, else Hoeffding–Bentkus).
        grid: Candidate thresholds fixed before seeing the labels (None: the calibration scores).

    Returns:
        The certificate. `threshold` is None when nothing is certified, and `reason` then says why in one
        line (one class only, too few labels, the target unmet even in-sample, or the first candidate's
        bound above α); `scan` keeps every candidate's risk and p-value.

    Raises:
        ValueError: `delta` outside (0, 1), an unknown `unit` or `p_value`, an empty or non-finite grid, or
            the binomial p-value asked for group shares.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> scores = np.r_[rng.normal(0, 1, 100), rng.normal(3, 1, 100)].round(3)
        >>> data = LabelledScores(scores, np.repeat([0, 1], 100))
        >>> cert = certify(data, Target("false_pass", 0.1))
        >>> cert.threshold, cert.risk, round(cert.upper_bound, 4), cert.unit, cert.p_value_method
        (1.692, 0.05, 0.0908, 'pair', 'binomial')
        >>> print(certify(data, Target("false_pass", 1e-9)).reason)  # doctest: +NORMALIZE_WHITESPACE
        too few labels: 100 unsupported pairs, but showing false-pass ≤ 1e-09 at delta 0.1
        needs at least 2302585157 even when none fails
    """
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta}")
    if p_value not in P_VALUES:
        raise ValueError(f"p_value must be one of {', '.join(P_VALUES)}, not {p_value!r}")
    unit = _resolve_unit(data, unit)
    alpha = target.alpha
    ts = np.unique(np.asarray(grid if grid is not None else data.scores, dtype=np.float64))[::-1]
    if not ts.size or not np.isfinite(ts).all():
        raise ValueError("the threshold grid must hold at least one finite value")
    scan, binary = unit_risks(data, target, ts, unit)
    if p_value == "binomial" and not binary:
        raise ValueError("the binomial p-value needs 0/1 losses, but a group's share is not: use hoeffding_bentkus")
    method = p_value if p_value != "auto" else ("binomial" if binary else "hoeffding_bentkus")
    note = assumption(target, unit, data.weights is not None, grid is not None)

    def result(idx: int | None, reason: str | None, tested: int, p: np.ndarray | None = None) -> Certificate:
        sc = scan if p is None else Scan(thresholds=scan.thresholds, risk=scan.risk, n_effective=scan.n_effective,
                                         n_units=scan.n_units, p_values=p)
        at = None if idx is None else float(ts[idx])
        if idx is None or p is None:
            risk = upper = p_at = None
            n_units = int(scan.n_units.max()) if ts.size else 0
            n_eff = float(scan.n_effective.max()) if ts.size else 0.0
        else:
            risk, p_at = float(scan.risk[idx]), float(p[idx])
            upper = float(risk_upper_bound(scan.risk[idx], scan.n_effective[idx], delta, method)[0])
            n_units, n_eff = int(scan.n_units[idx]), float(scan.n_effective[idx])
        return Certificate(target=target, delta=delta, threshold=at, reason=reason, risk=risk, upper_bound=upper,
                           p_value=p_at, unit=unit, p_value_method=method, assumption=note, n_units=n_units,
                           n_effective=n_eff, tested=tested, candidates=int(ts.size), weighted=data.weights is not None,
                           scan=sc)

    one = _one_class(data)
    if one:
        return result(None, one, 0)
    n_min = units_needed_without_failures(alpha, delta, method)
    have = float(np.nanmax(scan.n_effective)) if ts.size else 0.0
    noun = _unit_noun(target, unit)
    if have + 1e-9 < n_min:
        # all pass at the lowest t
        counted = noun if target.on_unsupported else ("groups" if unit == "group" else "pairs")
        return result(None, f"too few labels: {have:.4g} {counted}, but showing {target.describe()} at delta {delta:g} "
                            f"needs at least {n_min} even when none fails", 0)
    # precision: thresholds passing fewer units than any certificate needs are never tested (a count of scores)
    start = 0 if target.on_unsupported else int(np.flatnonzero(scan.n_effective + 1e-9 >= n_min)[0])
    risk = scan.risk[start:]
    if not (np.isfinite(risk) & (risk <= alpha)).any():
        best = start + int(np.nanargmin(risk))
        where = "" if target.on_unsupported else f" among thresholds passing ≥ {n_min} {noun}"
        return result(None, f"no threshold meets {target.describe()} even in-sample{where}: the best is "
                            f"{target.rate(scan.risk[best]):.3g} at t={ts[best]:.4g}", 0)
    p = pvalues(np.nan_to_num(scan.risk, nan=1.0), scan.n_effective, alpha, method)
    rejected = p[start:] <= delta
    m = int(rejected.size if rejected.all() else np.argmin(rejected))
    if m == 0:
        r0 = scan.risk[start]
        ub = float(risk_upper_bound(r0, scan.n_effective[start], delta, method)[0])
        return result(None, f"not certified at delta {delta:g}: the most conservative candidate t={ts[start]:.4g} has "
                            f"{target.kind.replace('_', '-')} {target.rate(r0):.3g} "
                            f"over {scan.n_effective[start]:.4g} {noun}, "
                            f"and its risk bound {ub:.3g} is above {alpha:g}", 1, p)
    return result(start + m - 1, None, min(m + 1, rejected.size), p)


# --- the naive threshold ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NaiveThreshold:
    """What people do: the least conservative threshold whose in-sample (pair-level, weighted) rate meets the target."""

    threshold: float | None
    rate: float | None  # its in-sample rate in the target's terms
    reason: str | None



def naive_threshold(data: LabelledScores, target: Target) -> NaiveThreshold:
    """What people do: the least conservative threshold whose in-sample rate meets the target, with no guarantee.

    Pair-level and weighted (1/π) when the data carry weights; groups are ignored.

    Args:
        data: The labelled scores.
        target: The rate to meet.

    Returns:
        The threshold and its in-sample rate, or None and the reason (one class, or no threshold meets it).

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> scores = np.r_[rng.normal(0, 1, 100), rng.normal(3, 1, 100)].round(3)
        >>> naive_threshold(LabelledScores(scores, np.repeat([0, 1], 100)), Target("false_pass", 0.1))
        NaiveThreshold(threshold=1.493, rate=0.1, reason=None)
    """
    one = _one_class(data)
    if one:
        return NaiveThreshold(None, None, one)
    ts = np.unique(data.scores)[::-1]
    scan, _ = unit_risks(data, target, ts, "pair")
    ok = np.flatnonzero(np.isfinite(scan.risk) & (scan.risk <= target.alpha))
    if not ok.size:
        best = int(np.nanargmin(scan.risk))
        return NaiveThreshold(None, None, f"no threshold meets {target.describe()} even in-sample: the best is "
                                          f"{target.rate(scan.risk[best]):.3g} at t={ts[best]:.4g}")
    j = int(ok[-1])
    return NaiveThreshold(float(ts[j]), target.rate(scan.risk[j]), None)


# --- rates of a gate, with CIs ------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class GateRates:
    """A gate's pair-level rates on labelled pairs; `supported_pass` (share of supported pairs let through) is its
    cost."""

    threshold: float | None  # None: each pair judged by its own fold's threshold (cross-fitted)
    n: int
    false_pass: Estimate
    catch: Estimate
    precision: Estimate
    supported_pass: Estimate

    def rate(self, kind: str) -> Estimate:
        return getattr(self, kind)


def _resolve_ci(data: LabelledScores, ci: str) -> str:
    if ci not in CIS:
        raise ValueError(f"ci must be one of {', '.join(CIS)}, not {ci!r}")
    if ci == "exact" and (data.weights is not None or data.clustered):
        raise ValueError("exact (Clopper–Pearson) intervals need unweighted, unclustered pairs: use ci='bootstrap'")
    return ci if ci != "auto" else ("bootstrap" if data.weights is not None or data.clustered else "exact")


def _rates(data: LabelledScores, passed: np.ndarray, include: np.ndarray, thresholds: Sequence[float | None], *,
           level: float, ci: str, n_boot: int, rng: np.random.Generator) -> list[GateRates]:
    """Rates of m gates given as pass (m, n) and included-row (m, n) masks, every CI on the same cluster draws."""
    method = _resolve_ci(data, ci)
    y, w, codes = data.labels.astype(bool), data.w, data.codes
    m = passed.shape[0]
    # per gate: false passes, unsupported, supported passes, passes, supported — as weights and as counts
    cols = np.stack([~y & passed, ~y & include, y & passed, passed, y & include], axis=1) & include[:, None, :]
    sums = (cols * w).sum(axis=2)  # (m, 5)
    counts = cols.sum(axis=2)
    groups = [[np.unique(codes[c]).size for c in gate] for gate in cols]
    if method == "bootstrap":
        reps = cluster_sum_replicates((cols * w).reshape(m * 5, -1).T, codes, n_boot, rng).reshape(-1, m, 5)
    out = []
    for j in range(m):
        ests = []
        for num, den in ((0, 1), (2, 3), (2, 4)):  # false-pass, precision, supported pass
            point = sums[j, num] / sums[j, den] if sums[j, den] > 0 else float("nan")
            if method == "exact":
                exact = clopper_pearson(counts[j, num], counts[j, den], level)
                lo, hi, dropped = float(exact[0]), float(exact[1]), 0
            else:
                with np.errstate(invalid="ignore", divide="ignore"):
                    r = reps[:, j, num] / reps[:, j, den]
                lo, hi, dropped = percentile_ci(r, level)
            label = "clopper-pearson" if method == "exact" else "clustered-bootstrap-percentile"
            ests.append(Estimate(estimate=float(point), ci_low=lo, ci_high=hi, n=int(counts[j, den]),
                                 n_groups=groups[j][den], method=label, n_boot=n_boot if method == "bootstrap" else 0,
                                 n_boot_dropped=dropped))
        fp, prec, sp = ests
        catch = Estimate(estimate=1.0 - fp.estimate, ci_low=1.0 - fp.ci_high, ci_high=1.0 - fp.ci_low, n=fp.n,
                         n_groups=fp.n_groups, method=fp.method, n_boot=fp.n_boot, n_boot_dropped=fp.n_boot_dropped)
        out.append(GateRates(threshold=None if (t_j := thresholds[j]) is None else float(t_j), n=int(include[j].sum()),
                             false_pass=fp, catch=catch, precision=prec, supported_pass=sp))
    return out


def gate_rates(data: LabelledScores, thresholds: Sequence[float], *, level: float = 0.95, ci: str = "auto",
               n_boot: int = DEFAULT_B, rng: np.random.Generator | int = 0) -> list[GateRates]:
    """False-pass, catch, precision and supported-pass rate of "pass when score ≥ t" for each t, with CIs.

    A percentile interval of a rate with no event in the sample is [0, 0]: read it with the exact
    interval's caution.

    Args:
        data: The labelled scores.
        thresholds: The gates' thresholds.
        level: Coverage of the intervals.
        ci: "exact" (Clopper–Pearson; unweighted, unclustered pairs only), "bootstrap" (clustered,
            weighted; every threshold on the same draws) or "auto" (exact when allowed).
        n_boot: Resamples for the bootstrap.
        rng: A seed or a generator.

    Returns:
        One `GateRates` per threshold, in order.

    Raises:
        ValueError: An unknown `ci`, or "exact" on weighted or clustered data.
    """
    t = np.asarray(thresholds, dtype=np.float64)
    passed = data.scores[None, :] >= t[:, None]
    return _rates(data, passed, np.ones_like(passed), list(t), level=level, ci=ci, n_boot=n_boot, rng=as_generator(rng))


# --- labels needed -----------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class LabelNeed:
    """How many labelled pairs would certify `threshold`, if new labels show the rates seen here.

    From that threshold's p-value alone. For false-pass and catch that is the whole story (the
    risk, hence the p-value, only falls at more conservative thresholds); for precision the fixed
    sequence must also get past every more conservative candidate, so the count is a lower bound.
    """

    threshold: float
    risk: float  # observed risk on the unit at the threshold
    unit: str
    units_at_hand: float  # effective units now
    units_needed: int | None  # None: the observed risk is not below the target, so no amount of labels certifies it
    labels_at_hand: int
    labels_needed: int | None
    more_labels: int | None
    assumption: str = "new labels show the same rates, mix and clustering as these"



def label_need(data: LabelledScores, cert: Certificate, threshold: float | None = None) -> LabelNeed | None:
    """Labels that would certify `threshold` (default: the least conservative candidate whose risk is below α).

    Units (unsupported pairs, passed pairs or groups) from `units_needed`, converted to labelled
    pairs at this slice's ratio of pairs to effective units at that threshold. The default is the
    threshold a team would pick by eye, so the answer is "what certifying your choice costs".

    Args:
        data: The labelled scores the certificate was computed on.
        cert: Its certificate (with its scan).
        threshold: The threshold to certify (the nearest candidate is used); None for the default.

    Returns:
        The need, or None when there is no scan, one class only, or no candidate below α.
    """
    scan = cert.scan
    if scan is None or scan.thresholds.size == 0 or _one_class(data):
        return None
    if threshold is None:
        below = np.flatnonzero(np.isfinite(scan.risk) & (scan.risk < cert.target.alpha) & (scan.n_effective > 0))
        if not below.size:
            return None
        j = int(below[-1])
    else:
        j = int(np.argmin(np.abs(scan.thresholds - threshold)))
    return _need(data, cert, scan, j)


def _need(data: LabelledScores, cert: Certificate, scan: Scan, j: int, cap: int = MAX_UNITS,
          solve_zero: bool = True) -> LabelNeed:
    """Labels that would certify candidate j of `scan` (the certificate's), searched up to `cap` units."""
    r, have = float(scan.risk[j]), float(scan.n_effective[j])
    need = units_needed(r, cert.target.alpha, cert.delta, cert.p_value_method, cap) if np.isfinite(r) else None
    if need is None and r == 0.0 and solve_zero:  # past the search, a rate of 0 still has its count
        need = units_needed_without_failures(cert.target.alpha, cert.delta, cert.p_value_method)
    labels = None if need is None or have <= 0 else int(math.ceil(need * data.n / have - 1e-9))
    return LabelNeed(threshold=float(scan.thresholds[j]), risk=r, unit=_unit_noun(cert.target, cert.unit),
                     units_at_hand=have, units_needed=need, labels_at_hand=data.n, labels_needed=labels,
                     more_labels=None if labels is None else max(0, labels - data.n))


def fewest_labels(data: LabelledScores, cert: Certificate) -> LabelNeed | None:
    """The candidate threshold that the fewest labels would certify (at the rates seen), and that number.

    Usually a conservative threshold with no observed failure: the floor below which no certificate
    is possible on data like this. Candidates are visited from the lowest risk up, each search capped
    by the best answer so far.

    Args:
        data: The labelled scores the certificate was computed on.
        cert: Its certificate (with its scan).

    Returns:
        The cheapest need, or None when no candidate's risk is below α (a rate of 0 always has a count;
        another rate has none past `MAX_UNITS` units).
    """
    scan = cert.scan
    if scan is None or scan.thresholds.size == 0 or _one_class(data):
        return None
    ok = np.flatnonzero(np.isfinite(scan.risk) & (scan.risk < cert.target.alpha) & (scan.n_effective > 0))
    best: LabelNeed | None = None
    fewest: int | None = None  # best's labels_needed
    for j in ok[np.argsort(scan.risk[ok], kind="stable")]:
        cap = MAX_UNITS if fewest is None else int(fewest * scan.n_effective[j] / data.n) + 1
        need = _need(data, cert, scan, int(j), cap, solve_zero=False)
        if need.labels_needed is not None and (fewest is None or need.labels_needed < fewest):
            best, fewest = need, need.labels_needed
    zero = ok[scan.risk[ok] == 0.0]
    if best is None and zero.size:  # every count passed the search: a rate of 0 still has one, fewest where most units
        best = _need(data, cert, scan, int(zero[np.argmax(scan.n_effective[zero])]))
    return best


# --- held-out rates by cross-fitting --------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class HeldOut:
    """Certified and naive thresholds fitted without each fold's groups, judged on that fold's pairs.

    A fold whose training part certifies nothing has no certified gate to judge: its pairs are left
    out of `certified` (counted by `certified_folds`), never scored as "pass nothing". CIs are for the
    rates at the fitted thresholds (the thresholds are not refitted per resample).
    """

    folds: int
    fold_thresholds: tuple[tuple[float | None, float | None], ...]  # (certified, naive) per fold
    certified_folds: int
    naive_folds: int
    certified: GateRates | None
    naive: GateRates | None
    reason: str | None = None


def cross_fit(data: LabelledScores, target: Target, delta: float = 0.1, *, folds: int = 5,
              rng: np.random.Generator | int = 0, unit: str = "auto", p_value: str = "auto", level: float = 0.95,
              ci: str = "auto", n_boot: int = DEFAULT_B) -> HeldOut:
    """Held-out rates of the certified and the naive threshold, each fitted without the fold it is judged on.

    Folds hold whole groups (pairs alone without groups); at most `folds` folds, fewer with fewer groups.

    Args:
        data: The labelled scores.
        target: The rate to guarantee.
        delta: Error level of each fold's certificate.
        folds: Number of folds wanted.
        rng: A seed or a generator (folds, then the CIs' draws).
        unit: As `certify`'s.
        p_value: As `certify`'s.
        level: Coverage of the rates' intervals.
        ci: As `gate_rates`'.
        n_boot: Resamples for bootstrap intervals.

    Returns:
        The folds' thresholds and both gates' pooled held-out rates; a reason when there are under two groups.
    """
    gen = as_generator(rng)
    unit = _resolve_unit(data, unit)
    k = int(data.codes.max()) + 1
    if k < 2:
        return HeldOut(folds=0, fold_thresholds=(), certified_folds=0, naive_folds=0, certified=None, naive=None,
                       reason="cross-fitting needs at least two groups")
    fold = group_folds(data.codes, min(folds, k), gen)
    n_folds = int(fold.max()) + 1
    passed = np.zeros((2, data.n), dtype=bool)
    include = np.zeros((2, data.n), dtype=bool)
    fitted = []
    for f in range(n_folds):
        train, test = fold != f, fold == f
        part = data.subset(train)
        cert = certify(part, target, delta, unit=unit, p_value=p_value)
        naive = naive_threshold(part, target)
        fitted.append((cert.threshold, naive.threshold))
        for g, t in enumerate((cert.threshold, naive.threshold)):
            if t is not None:
                include[g, test] = True
                passed[g, test] = data.scores[test] >= t
    rates = _rates(data, passed, include, [None, None], level=level, ci=ci, n_boot=n_boot, rng=gen)
    return HeldOut(folds=n_folds, fold_thresholds=tuple(fitted), certified_folds=sum(c is not None for c, _ in fitted),
                   naive_folds=sum(v is not None for _, v in fitted), certified=rates[0] if include[0].any() else None,
                   naive=rates[1] if include[1].any() else None)


# --- one slice, everything a thresholds.json entry needs ------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class SliceThresholds:
    """Certified and naive thresholds of one scorer on one slice, their in-sample and held-out rates, and labels
    needed."""

    certified: Certificate
    naive: NaiveThreshold
    certified_rates: GateRates | None  # in-sample
    naive_rates: GateRates | None  # in-sample
    held_out: HeldOut
    label_need: LabelNeed | None  # to certify the threshold a team would pick by eye
    fewest_labels: LabelNeed | None  # to certify any candidate at all



def slice_thresholds(data: LabelledScores, target: Target, delta: float = 0.1, *, folds: int = 5,
                     rng: np.random.Generator | int = 0, unit: str = "auto", p_value: str = "auto",
                     level: float = 0.95, ci: str = "auto", n_boot: int = DEFAULT_B) -> SliceThresholds:
    """Everything one scorer's thresholds.json entry holds for one slice.

    The certificate, the naive threshold, both thresholds' in-sample rates, their cross-fitted
    held-out rates, and the labels that would certify the threshold a team would pick (and any).

    Args:
        data: The slice's labelled scores.
        target: The rate to guarantee.
        delta: Error level of the certificate.
        folds: Cross-fitting folds.
        rng: A seed or a generator; the in-sample CIs draw first, then the cross-fitting.
        unit: As `certify`'s.
        p_value: As `certify`'s.
        level: Coverage of the rates' intervals.
        ci: As `gate_rates`'.
        n_boot: Resamples for bootstrap intervals.

    Returns:
        The slice's thresholds.
    """
    gen = as_generator(rng)
    cert = certify(data, target, delta, unit=unit, p_value=p_value)
    naive = naive_threshold(data, target)
    ts = [t for t in (cert.threshold, naive.threshold) if t is not None]
    rates = iter(gate_rates(data, ts, level=level, ci=ci, n_boot=n_boot, rng=gen) if ts else [])
    cert_rates = next(rates) if cert.threshold is not None else None
    naive_rates = next(rates) if naive.threshold is not None else None
    held = cross_fit(data, target, delta, folds=folds, rng=gen, unit=unit, p_value=p_value, level=level, ci=ci,
                     n_boot=n_boot)
    return SliceThresholds(certified=cert, naive=naive, certified_rates=cert_rates, naive_rates=naive_rates,
                           held_out=held, label_need=label_need(data, cert), fewest_labels=fewest_labels(data, cert))


# --- transfer: each slice's threshold on every slice ------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class TransferCell:
    fitted_on: str
    applied_to: str
    threshold: float
    in_sample: bool  # the diagonal: the threshold judged on the pairs that chose it
    broken: bool  # the target's rate CI lies wholly on the wrong side of the target
    rates: GateRates = field(metadata={"inline": True})  # its keys sit beside these in JSON (the same threshold)


@dataclass(frozen=True)
class TransferMatrix:
    """Rows: the slice a threshold was fitted on; columns: the slice it is applied to."""

    target: Target
    slices: tuple[str, ...]
    thresholds: dict[str, float | None]
    cells: tuple[TransferCell, ...]

    def cell(self, fitted_on: str, applied_to: str) -> TransferCell | None:
        return next((c for c in self.cells if (c.fitted_on, c.applied_to) == (fitted_on, applied_to)), None)

    def estimates(self, kind: str | None = None) -> np.ndarray:
        """(d, d) rate of `kind` (default: the target's), NaN where the row's slice has no threshold."""
        kind = kind or self.target.kind
        out = np.full((len(self.slices), len(self.slices)), np.nan)
        pos = {s: i for i, s in enumerate(self.slices)}
        for c in self.cells:
            out[pos[c.fitted_on], pos[c.applied_to]] = c.rates.rate(kind).estimate
        return out



def transfer_matrix(slices: Mapping[str, LabelledScores], thresholds: Mapping[str, float | None], target: Target, *,
                    level: float = 0.95, ci: str = "auto", n_boot: int = DEFAULT_B, seed: int = 0) -> TransferMatrix:
    """Every slice's threshold applied to every slice, CIs per applied slice on draws shared by all thresholds.

    Each applied slice's draws come from `slice_rng(seed, name)`, so a cell does not depend on which
    other slices are in the matrix. Slices without a threshold (None) give no row.

    Args:
        slices: Slice name → its labelled scores.
        thresholds: Slice name → the threshold fitted on it (None: none).
        target: The target, for the `broken` flag of each cell.
        level: Coverage of the rates' intervals.
        ci: As `gate_rates`'.
        n_boot: Resamples for bootstrap intervals.
        seed: The run's seed.

    Returns:
        The matrix, cells ordered by fitted slice then applied slice.

    Raises:
        ValueError: A threshold names a slice not in `slices`.
    """
    slices = {str(k): v for k, v in slices.items()}
    thresholds = {str(k): v for k, v in thresholds.items()}
    names = tuple(slices)
    if set(thresholds) - set(names):
        raise ValueError(f"thresholds for unknown slices: {', '.join(sorted(set(thresholds) - set(names)))}")
    fitted = {a: t for a in names if (t := thresholds.get(a)) is not None}
    rows = list(fitted)
    cells = []
    for b in names:
        if not rows:
            break
        rates = gate_rates(slices[b], [fitted[a] for a in rows], level=level, ci=ci, n_boot=n_boot,
                           rng=slice_rng(seed, b))
        for a, r in zip(rows, rates):
            cells.append(TransferCell(fitted_on=a, applied_to=b, threshold=float(fitted[a]), in_sample=a == b,
                                      broken=target.broken_by(r.rate(target.kind)), rates=r))
    order = {s: i for i, s in enumerate(names)}
    cells.sort(key=lambda c: (order[c.fitted_on], order[c.applied_to]))
    return TransferMatrix(target, names, {s: thresholds.get(s) for s in names}, tuple(cells))
