"""Is a metric better than chance: a one-sided test of AUROC > 0.5, and Holm's adjustment over several slices.

The test is a Wald z test whose standard error is the standard deviation of the clustered-bootstrap
replicates the audit already drew (so clusters are respected exactly as in the CI): z = (AUROC − 0.5) / SE,
p = 1 − Φ(z). A metric "beats chance" when the p-value (Holm-adjusted over its slices of one construct)
is below α = (1 − level) / 2, the same one-sided level as the lower end of the two-sided CI shown beside it.
"""
from __future__ import annotations

import math

import numpy as np


def chance_test(unit: str = "AUROC") -> str:
    """How `beats_chance` is decided, in words, for a statistic whose chance level is 0.5 (AUROC) or 0 (a
    correlation with a graded rating)."""
    null = 0.5 if unit == "AUROC" else 0
    return (f"one-sided Wald z test of {unit} > {null:g}, standard error from the clustered bootstrap replicates; "
            "Holm-adjusted over each metric's slices of one construct; beats chance when the adjusted p < α = "
            "(1 − level) / 2")


CHANCE_TEST = chance_test()


def chance_pvalues(point: np.ndarray, replicates: np.ndarray, null: float = 0.5) -> np.ndarray:
    """One-sided p-values of H0: AUROC ≤ 0.5 for each scorer.

    Args:
        point: (m,) AUROC point estimates.
        replicates: (m, B) bootstrap replicates (NaN where a resample lost a class).
        null: the value of no skill: 0.5 for an AUROC, 0 for a correlation with a graded rating.

    Returns:
        (m,) p-values; NaN where the estimate or its standard error is undefined. A zero standard error
        (every replicate equal) gives 0 above 0.5 and 1 otherwise.
    """
    a = np.atleast_1d(np.asarray(point, dtype=np.float64))
    r = np.atleast_2d(np.asarray(replicates, dtype=np.float64))
    if r.shape[0] != a.size:
        raise ValueError(f"{a.size} estimates but {r.shape[0]} rows of replicates")
    finite = np.isfinite(r)
    k = finite.sum(axis=1)
    mean = np.where(k > 0, np.where(finite, r, 0.0).sum(axis=1) / np.maximum(k, 1), np.nan)
    var = np.where(k > 1, (np.where(finite, r - mean[:, None], 0.0) ** 2).sum(axis=1) / np.maximum(k - 1, 1), np.nan)
    se = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, (a - null) / np.where(se > 0, se, 1.0), np.where(a > null, np.inf, -np.inf))
    erfc = np.vectorize(math.erfc, otypes=[np.float64])
    p = 0.5 * erfc(z / math.sqrt(2.0)) if z.size else z
    return np.where(np.isfinite(a) & np.isfinite(se), p, np.nan)


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control); NaN entries are left out of the family.

    Args:
        pvalues: (k,) raw p-values.

    Returns:
        (k,) adjusted p-values, monotone in the raw order and capped at 1.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(stepped, 1.0)
    return out
