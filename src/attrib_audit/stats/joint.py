"""Gates that are certified and useful: a stated risk and a floor on the share of supported answers passed,
certified together by Learn-then-Test.

A gate that blocks almost everything meets any false-pass target; what it costs is the supported answers it
blocks. The joint certificate tests, at each candidate threshold t, the null "risk(t) > α OR blocked(t) > 1 − s"
(s: the floor on the supported pass rate). Its p-value is the larger of the two risks' p-values (the
union-intersection rule Learn-then-Test uses for several risks). The two risks move in opposite directions
along t, so there is no fixed testing order: the candidates are a label-free grid (quantiles of the scores,
at most `max_grid`) and each is tested at δ / (grid size) (Bonferroni). Every threshold in the certified set
controls both risks with probability ≥ 1 − δ simultaneously; the one reported passes the most supported answers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attrib_audit.stats.threshold import Target, pvalues, unit_risks, units_needed
from attrib_audit.stats.types import LabelledScores

MAX_GRID = 40


@dataclass(frozen=True, kw_only=True)
class JointCertificate:
    """The Learn-then-Test answer for two risks at once, or None and how many labels would do it."""

    target: Target  # the primary target (kind, level)
    min_supported_pass: float
    delta: float
    unit: str
    grid: int  # candidate thresholds tested, each at delta / grid
    threshold: float | None
    risk: float | None  # the primary risk at the threshold (in-sample, on the unit)
    supported_pass: float | None  # share of supported pairs passed at the threshold (in-sample)
    p_value: float | None  # max of the two p-values at the threshold
    reason: str | None  # None when certified
    labels_needed: int | None  # when none is certified: labelled pairs that would certify the best candidate
    labels_at_hand: int = 0
    best_candidate: float | None = None  # the candidate those labels are for


def _supported_blocked(data: LabelledScores, ts: np.ndarray, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """(risk, effective n) of "a supported pair is blocked" (score < t) at each t, on the unit.

    The supported pairs are made the unsupported ones of a mirrored slice (labels flipped, scores negated), whose
    false-pass at −t (strictly above) is exactly the share of supported pairs scoring below t.
    """
    mirror = LabelledScores(-data.scores, 1 - data.labels, data.groups, data.weights)
    scan, _ = unit_risks(mirror, Target("false_pass", 0.5), np.nextafter(-ts, np.inf), unit)
    return scan.risk, scan.n_effective


def label_free_grid(scores: np.ndarray, max_grid: int = MAX_GRID) -> np.ndarray:
    """Candidate thresholds from the scores alone (no labels): the distinct scores, thinned to quantiles."""
    distinct = np.unique(scores)
    if distinct.size <= max_grid:
        return distinct[::-1]
    return np.unique(np.quantile(scores, np.linspace(0.0, 1.0, max_grid), method="inverted_cdf"))[::-1]


def certify_joint(data: LabelledScores, target: Target, min_supported_pass: float, delta: float = 0.1, *,
                  unit: str = "pair", method: str = "binomial", max_grid: int = MAX_GRID) -> JointCertificate:
    """Certify a threshold meeting `target` and passing ≥ `min_supported_pass` of supported pairs, jointly.

    Args:
        data: one slice's scores and labels.
        target: the primary risk (false-pass, precision or catch).
        min_supported_pass: the floor on the share of supported answers the gate lets through.
        delta: both hold with probability ≥ 1 − delta.
        unit: "pair" or "group" (as the primary certificate's unit).
        method: "binomial" (0/1 losses) or "hoeffding_bentkus" (group shares).
        max_grid: at most this many label-free candidate thresholds.

    Returns:
        The certificate; when none is certified, the labelled pairs that would certify the best candidate.

    Raises:
        ValueError: a floor outside (0, 1).
    """
    if not 0.0 < min_supported_pass < 1.0:
        raise ValueError(f"the supported-pass floor must lie strictly between 0 and 1, got {min_supported_pass}")
    ts = label_free_grid(data.scores, max_grid)
    k = ts.size
    def answer(threshold: float | None = None, risk: float | None = None, supported_pass: float | None = None,
               p_value: float | None = None, reason: str | None = None, labels_needed: int | None = None,
               best_candidate: float | None = None) -> JointCertificate:
        return JointCertificate(target=target, min_supported_pass=float(min_supported_pass), delta=float(delta),
                                unit=unit, grid=k, threshold=threshold, risk=risk, supported_pass=supported_pass,
                                p_value=p_value, reason=reason, labels_needed=labels_needed, labels_at_hand=data.n,
                                best_candidate=best_candidate)

    n_pos = int(data.labels.sum())
    if n_pos == 0 or n_pos == data.n:
        return answer(reason="one class only: a gate cannot be calibrated without both")
    scan, _ = unit_risks(data, target, ts, unit)
    r1, n1 = np.nan_to_num(scan.risk, nan=1.0), scan.n_effective
    r2, n2 = _supported_blocked(data, ts, unit)
    a1, a2 = target.alpha, 1.0 - float(min_supported_pass)
    p = np.maximum(pvalues(r1, n1, a1, method), pvalues(r2, n2, a2, method))
    ok = np.flatnonzero(p <= delta / k)
    if ok.size:
        j = int(ok[np.argmin(r2[ok])])  # the certified threshold passing the most supported answers
        return answer(float(ts[j]), float(r1[j]), float(1 - r2[j]), float(p[j]))
    need = [(j, n) for j in range(k)
            if (n := _labels(r1[j], n1[j], a1, r2[j], n2[j], a2, delta / k, method, data.n)) is not None]
    best = min(need, key=lambda x: x[1], default=None)
    both = np.flatnonzero((r1 < a1) & (r2 < a2))
    if not both.size:
        why = (f"no candidate of the grid meets both {target.describe()} and supported-pass ≥ "
               f"{min_supported_pass:g} even in-sample: no number of labels like these certifies both")
    else:
        why = (f"none certifiable for both {target.describe()} and supported-pass ≥ {min_supported_pass:g} at delta "
               f"{delta:g} ({k} candidates, each at delta/{k})")
        if best is not None:
            why += f": about {best[1]} labelled pairs at these rates would certify t={ts[best[0]]:.4g}"
    return answer(reason=why, labels_needed=None if best is None else best[1],
                  best_candidate=None if best is None else float(ts[best[0]]))


def _labels(r1: float, n1: float, a1: float, r2: float, n2: float, a2: float, delta: float, method: str,
            n: int) -> int | None:
    """Labelled pairs that would certify both risks at these rates (each risk's units scaled to pairs)."""
    if not (n1 > 0 and n2 > 0):
        return None
    u1, u2 = units_needed(float(r1), a1, delta, method), units_needed(float(r2), a2, delta, method)
    if u1 is None or u2 is None:
        return None
    return int(max(math.ceil(u1 * n / n1 - 1e-9), math.ceil(u2 * n / n2 - 1e-9)))
