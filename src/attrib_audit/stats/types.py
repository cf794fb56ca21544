"""Small frozen result records shared by the statistics functions."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike


def group_codes(groups: ArrayLike) -> np.ndarray:
    """Cluster index per row, 0..K−1 in sorted order of the group names (as strings).

    Args:
        groups: One group name per row (any values; compared as strings).

    Returns:
        (n,) int64 codes.

    Examples:
        >>> group_codes(["b", "a", "b", 3]).tolist()
        [2, 1, 2, 0]
    """
    _, codes = np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)
    return codes.astype(np.int64)


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """A point estimate with its percentile bootstrap interval."""

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    n_groups: int
    method: str
    n_boot: int = 0
    n_boot_dropped: int = 0  # resamples that lost a class (statistic undefined) and were left out



@dataclass(frozen=True, eq=False)
class LabelledScores:
    """One slice's scores with human labels (1 = supported), optional clusters and Horvitz–Thompson weights.

    `groups` name the unit of exchangeability (a question, a document): pairs of one group are
    not independent. `weights` are 1/π for a sampled file (`attrib-audit sample`), so every rate
    describes the pool the sample was drawn from. Arrays are validated once here, so the gate and
    calibration functions can trust them; NaN scores must be dropped (and counted) by the caller.
    """

    scores: np.ndarray
    labels: np.ndarray
    groups: np.ndarray | None = None
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        s = np.asarray(self.scores, dtype=np.float64)
        y = np.asarray(self.labels)
        if s.ndim != 1 or y.shape != s.shape:
            raise ValueError(f"scores {s.shape} and labels {y.shape} must be 1-D and the same length")
        if not np.isfinite(s).all():
            raise ValueError("scores contain NaN or inf: drop (and count) the failed rows first")
        if not np.isin(y, (0, 1)).all():
            raise ValueError("labels must be 0/1 (1 = supported)")
        object.__setattr__(self, "scores", s)
        object.__setattr__(self, "labels", y.astype(np.int64))
        if self.groups is not None:
            g = np.asarray(self.groups, dtype=object)
            if g.shape != s.shape:
                raise ValueError(f"groups {g.shape} must give one cluster per score {s.shape}")
            object.__setattr__(self, "groups", g)
        if self.weights is not None:
            w = np.asarray(self.weights, dtype=np.float64)
            if w.shape != s.shape or not (np.isfinite(w).all() and (w > 0).all()):
                raise ValueError("weights must be one positive finite weight (1/inclusion probability) per score")
            object.__setattr__(self, "weights", w)

    @property
    def n(self) -> int:
        return int(self.scores.size)

    @property
    def w(self) -> np.ndarray:
        """Row weights; ones when the file is the whole pool."""
        return np.ones(self.n) if self.weights is None else self.weights

    @property
    def codes(self) -> np.ndarray:
        """Cluster index per row (0..K−1, in sorted order of the group names); each row its own without groups."""
        return np.arange(self.n, dtype=np.int64) if self.groups is None else group_codes(self.groups)

    @property
    def clustered(self) -> bool:
        """Some group holds more than one pair."""
        return self.groups is not None and np.unique(self.codes).size < self.n

    def subset(self, rows: np.ndarray) -> "LabelledScores":
        return LabelledScores(self.scores[rows], self.labels[rows], None if self.groups is None else self.groups[rows],
                              None if self.weights is None else self.weights[rows])
