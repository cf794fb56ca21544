"""provenance.json as records: what the diagnostic found per dataset, and what it was run with."""
from __future__ import annotations

from dataclasses import dataclass, field

from attrib_audit.audit.results import ToolInfo
from attrib_audit.provenance.records import ExampleFile
from attrib_audit.stats.types import Estimate

_SKIP = {"skip_default": True}


@dataclass(frozen=True, kw_only=True)
class Spread:
    """A statistic over confusable-pool seeds: mean, sd (0 for one seed), range and each seed's value."""

    mean: float
    sd: float
    min: float
    max: float
    per_seed: list[float]


@dataclass(frozen=True, kw_only=True)
class RankerTop1:
    """One ranker on one pool: top-1 accuracy, the fooled rate (confusable pools) and the paired − lexical."""

    top1: Estimate
    n_tied: int
    n_undefined: int
    fooled: Estimate | None = field(default=None, metadata=_SKIP)
    vs_lexical: Estimate | None = field(default=None, metadata=_SKIP)


@dataclass(frozen=True)
class SeedDraw:
    """How one seed's confusable distractors were drawn."""

    seed: int
    n_candidates: int
    units_short_of_k: int
    mean_distractor_jaccard: float | None


@dataclass(frozen=True, kw_only=True)
class PoolSummary:
    """Every ranker's top-1 accuracy on one pool beside the random baseline; `draw` for a confusable pool."""

    n_units: int
    n_groups: int
    n_entries: int
    mean_pool_size: float
    random_baseline: Estimate
    rankers: dict[str, RankerTop1]
    draw: SeedDraw | None = field(default=None, metadata={"inline": True, "skip_default": True})


@dataclass(frozen=True)
class RankerSpread:
    """One ranker's top-1 and fooled rates over the confusable seeds."""

    top1: Spread
    fooled: Spread


@dataclass(frozen=True, kw_only=True)
class Confusable:
    """The confusable-evidence stress test: k distractors per unit, drawn anew for each seed."""

    k: int
    seeds: int
    candidate_cap: int | None  # None: every passage is a candidate
    per_seed: list[PoolSummary]
    summary: dict[str, RankerSpread]
    random_baseline: Spread | None


@dataclass(frozen=True, kw_only=True)
class SweepSeries:
    """The α sweep's points as plain series (the confusable ones when seeds were run)."""

    alpha: list[float]
    clean_top1: list[float]
    confusable_top1_mean: list[float] | None = field(default=None, metadata=_SKIP)
    confusable_top1_sd: list[float] | None = field(default=None, metadata=_SKIP)
    confusable_fooled_mean: list[float] | None = field(default=None, metadata=_SKIP)


@dataclass(frozen=True)
class AlphaSweep:
    """Top-1 accuracy of α·lexical + (1−α)·semantic over α."""

    formula: str
    alpha: list[float]
    clean: list[Estimate]
    series: SweepSeries


@dataclass(frozen=True, kw_only=True)
class DatasetProvenance:
    """One dataset's diagnostic: the clean pool, the confusable pools and the α sweep."""

    dataset: str
    data: list[ExampleFile]
    skipped: dict[str, int]
    n_examples: int
    n_units: int
    n_passages: int
    n_distinct_texts: int
    clean: PoolSummary
    confusable: Confusable
    alpha_sweep: AlphaSweep | None = field(default=None, metadata=_SKIP)


@dataclass(frozen=True, kw_only=True)
class ProvenanceSettings:
    """What the diagnostic was run with, as saved."""

    rankers: list[str]
    signatures: dict[str, str]
    semantic: str
    eq1_weights: dict[str, float]
    confusable_k: int
    seeds: int
    candidate_cap: int | None  # None: every passage is a candidate
    n_boot: int
    seed: int
    ci: str
    tie_break: str


@dataclass(frozen=True)
class Unavailable:
    """A ranker (or the α sweep) that could not run, and why."""

    ranker: str
    reason: str


@dataclass(frozen=True)
class Truncation:
    """Texts an encoder embedded, how many it cut at its window and the tokens lost."""

    texts: int
    texts_truncated: int
    tokens_truncated: int
    window: int | None


@dataclass(frozen=True)
class ScorerFailures:
    """Pairs a scorer-backed ranker failed on or cut at its window."""

    failed_pairs: int
    truncated_pairs: int


@dataclass(frozen=True, kw_only=True)
class ProvenanceRun:
    """provenance.json: every dataset's diagnostic, what could not run and what was cut."""

    tool: ToolInfo
    construct: str
    config: ProvenanceSettings
    unavailable: list[Unavailable]
    embedding_truncation: dict[str, Truncation]
    scorer_failures: dict[str, ScorerFailures]
    datasets: list[DatasetProvenance]
    run_id: str = field(default="", metadata=_SKIP)
