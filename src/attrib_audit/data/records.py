"""The one record type for labelled (claim, evidence) pairs, stored column-wise."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from attrib_audit.data.origin import DataEntry

FIELDS = ("id", "dataset", "source", "question", "claim", "evidence", "label", "group", "construct", "system",
          "rating")
NO_LABEL = -1  # a row with a graded rating and no binary label: it enters the correlations, not the AUROC
REQUIRED = ("id", "dataset", "claim", "evidence", "label")


@dataclass(frozen=True, kw_only=True)
class PairRecord:
    """One human-labelled pair; `group` is the cluster id for the clustered bootstrap, `system` the generator that
    wrote the claim (for the system-level audit: systems answering the same `group` are compared on it)."""

    id: str
    dataset: str
    claim: str
    evidence: str
    label: int
    source: str | None = None
    question: str | None = None
    group: str | None = None
    construct: str | None = None
    inclusion_prob: float | None = None  # chance the pair was sampled from its pool (`attrib-audit sample`)
    system: str | None = None
    rating: float | None = None  # a graded human rating (higher = better supported), when the file gives one

    def cluster(self) -> str:
        return self.group if self.group else self.id


@dataclass(kw_only=True)
class PairTable:
    """Column store of pairs: cheap to slice and to hand to scorers as two lists."""

    ids: list[str]
    datasets: list[str]
    claims: list[str]
    evidences: list[str]
    labels: np.ndarray
    sources: list[str | None]
    questions: list[str | None]
    groups: list[str]
    constructs: list[str | None]
    origin: list[DataEntry] = field(default_factory=list)  # one entry per loaded input: where its pairs came from
    inclusion_probs: np.ndarray | None = None  # None: every pair of the pool is here (probability 1)
    systems: list[str | None] | None = None  # the generator of each claim; None: no row names one
    ratings: np.ndarray | None = None  # graded human ratings (NaN: a row without one); None: no row has one

    def __post_init__(self) -> None:
        n = len(self.ids)
        if self.systems is None:
            self.systems = [None] * n
        for name in ("datasets", "claims", "evidences", "sources", "questions", "groups", "constructs", "systems"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"PairTable column {name!r} has {len(getattr(self, name))} rows, expected {n}")
        self.labels = np.asarray(self.labels, dtype=np.int8)
        if self.labels.shape != (n,):
            raise ValueError("PairTable labels must be one value per row")
        if self.inclusion_probs is not None:
            self.inclusion_probs = np.asarray(self.inclusion_probs, dtype=np.float64)
            if self.inclusion_probs.shape != (n,):
                raise ValueError("PairTable inclusion_probs must be one value per row")
        if self.ratings is not None:
            self.ratings = np.asarray(self.ratings, dtype=np.float64)
            if self.ratings.shape != (n,):
                raise ValueError("PairTable ratings must be one value per row")

    @property
    def has_systems(self) -> bool:
        """Whether any row names the system that generated it (the audit then adds the system-level section)."""
        return any(s is not None for s in self.systems or ())  # never None after __post_init__

    @property
    def has_ratings(self) -> bool:
        """Whether every row carries a graded rating (the audit then adds the correlation section)."""
        return self.ratings is not None and bool(np.isfinite(self.ratings).all())

    @property
    def labelled(self) -> np.ndarray:
        """Which rows have a binary label (a rating-only file has none)."""
        return self.labels != NO_LABEL

    @property
    def weights(self) -> np.ndarray | None:
        """Horvitz–Thompson weights 1/π, or None when the table is the whole pool."""
        return None if self.inclusion_probs is None else 1.0 / self.inclusion_probs

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def from_records(cls, records: Sequence[PairRecord], origin: list[DataEntry] | None = None) -> "PairTable":
        return cls(
            ids=[r.id for r in records],
            datasets=[r.dataset for r in records],
            claims=[r.claim for r in records],
            evidences=[r.evidence for r in records],
            labels=np.array([r.label for r in records], dtype=np.int8),
            sources=[r.source for r in records],
            questions=[r.question for r in records],
            groups=[r.cluster() for r in records],
            constructs=[r.construct for r in records],
            origin=list(origin or []),
            inclusion_probs=(np.array([1.0 if r.inclusion_prob is None else r.inclusion_prob for r in records])
                             if any(r.inclusion_prob is not None for r in records) else None),
            systems=[r.system for r in records],
            ratings=(np.array([np.nan if r.rating is None else r.rating for r in records], dtype=np.float64)
                     if any(r.rating is not None for r in records) else None),
        )

    def records(self) -> Iterator[PairRecord]:
        for i in range(len(self)):
            yield PairRecord(
                id=self.ids[i], dataset=self.datasets[i], claim=self.claims[i], evidence=self.evidences[i],
                label=int(self.labels[i]), source=self.sources[i], question=self.questions[i],
                group=self.groups[i], construct=self.constructs[i],
                inclusion_prob=None if self.inclusion_probs is None else float(self.inclusion_probs[i]),
                system=None if self.systems is None else self.systems[i],
                rating=None if self.ratings is None or not np.isfinite(self.ratings[i]) else float(self.ratings[i]),
            )

    def take(self, index: Sequence[int] | np.ndarray) -> "PairTable":
        idx = np.asarray(index, dtype=np.int64)
        pick = lambda col: [col[i] for i in idx]  # noqa: E731
        return PairTable(
            ids=pick(self.ids), datasets=pick(self.datasets), claims=pick(self.claims),
            evidences=pick(self.evidences), labels=self.labels[idx], sources=pick(self.sources),
            questions=pick(self.questions), groups=pick(self.groups), constructs=pick(self.constructs),
            origin=self.origin, inclusion_probs=None if self.inclusion_probs is None else self.inclusion_probs[idx],
            systems=pick(self.systems), ratings=None if self.ratings is None else self.ratings[idx],
        )

    def slice_keys(self, by: str) -> list[str]:
        """Slice name per row: `dataset`, or `dataset:source` so sources never collide across datasets."""
        if by == "dataset":
            return list(self.datasets)
        if by == "source":
            return [f"{d}:{s}" if s else d for d, s in zip(self.datasets, self.sources)]
        if by == "construct":
            return [c or "unspecified" for c in self.constructs]
        raise ValueError(f"unknown slice key {by!r}: use dataset, source or construct")

    @staticmethod
    def concat(tables: Sequence["PairTable"]) -> "PairTable":
        if not tables:
            raise ValueError("no tables to concatenate")
        cat = lambda name: [v for t in tables for v in getattr(t, name)]  # noqa: E731
        return PairTable(
            ids=cat("ids"), datasets=cat("datasets"), claims=cat("claims"), evidences=cat("evidences"),
            labels=np.concatenate([t.labels for t in tables]), sources=cat("sources"),
            questions=cat("questions"), groups=cat("groups"), constructs=cat("constructs"),
            origin=[o for t in tables for o in t.origin],
            inclusion_probs=(np.concatenate([np.ones(len(t)) if t.inclusion_probs is None else t.inclusion_probs
                                             for t in tables])
                             if any(t.inclusion_probs is not None for t in tables) else None),
            systems=cat("systems"),
            ratings=(np.concatenate([np.full(len(t), np.nan) if t.ratings is None else t.ratings for t in tables])
                     if any(t.ratings is not None for t in tables) else None),
        )
