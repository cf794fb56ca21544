"""The provenance example: answer units to route to candidate passages, with gold passage ids."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Passage:
    id: str
    text: str
    title: str | None = None


@dataclass(frozen=True, kw_only=True)
class ProvenanceExample:
    """One question with its answer units and candidate passages.

    `answers` are the gold short answers (may be empty; they feed the hint h(u));
    `citations[i]` are the passage ids unit i cites (inline `[n]` markers; empty when
    the format has none); `group` is the cluster for the bootstrap (defaults to `id`).
    """

    id: str
    dataset: str
    question: str | None
    answers: tuple[str, ...]
    units: tuple[str, ...]
    passages: tuple[Passage, ...]
    gold: frozenset[str]
    citations: tuple[frozenset[str], ...] = ()
    group: str = ""

    def __post_init__(self) -> None:
        ids = [p.id for p in self.passages]
        if len(set(ids)) != len(ids):
            raise ValueError(f"example {self.id}: passage ids are not unique")
        if not self.citations:
            object.__setattr__(self, "citations", tuple(frozenset() for _ in self.units))
        if len(self.citations) != len(self.units):
            raise ValueError(f"example {self.id}: {len(self.citations)} citation sets for {len(self.units)} units")
        known = set(ids)
        if not self.gold <= known or any(not c <= known for c in self.citations):
            raise ValueError(f"example {self.id}: gold or cited ids name passages the example does not have")
        if not self.group:
            object.__setattr__(self, "group", self.id)


@dataclass(frozen=True, kw_only=True)
class ExampleFile:
    """A file of provenance examples as loaded: its hash, its format and how many examples and answer units."""

    path: str
    sha256: str
    format: str
    examples: int
    units: int


@dataclass
class ProvenanceSet:
    """Loaded examples plus what the loader skipped (by reason) and where they came from."""

    examples: list[ProvenanceExample]
    skipped: dict[str, int] = field(default_factory=dict)
    origin: list[ExampleFile] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.examples)

    @property
    def n_units(self) -> int:
        return sum(len(e.units) for e in self.examples)

    @property
    def n_passages(self) -> int:
        return sum(len(e.passages) for e in self.examples)
