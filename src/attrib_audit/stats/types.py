"""Small frozen result records shared by the statistics functions."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
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

    def to_dict(self) -> dict:
        return asdict(self)
