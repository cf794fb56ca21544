"""The Scorer protocol, the per-row ScoreBatch it returns, and the scorer registry."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np


class ScorerUnavailable(RuntimeError):
    """A scorer's weights or package are not on this machine; the message is one line saying how to get them."""


@dataclass
class ScoreBatch:
    """Scores for a batch, aligned with its inputs.

    `scores` may be NaN only where `failures` holds the reason (e.g. a judge refusal);
    `truncated_tokens` / `input_tokens` make truncation at a model's window visible;
    `chunks` is how many evidence windows were scored for the row (1 when unchunked).
    `extras` carries per-row side outputs (a judge's discrete label, its raw text).
    """

    scores: np.ndarray
    truncated_tokens: np.ndarray
    input_tokens: np.ndarray
    chunks: np.ndarray
    failures: list[str | None]
    extras: dict[str, list[Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.scores = np.asarray(self.scores, dtype=np.float64)
        n = self.scores.shape[0]
        self.truncated_tokens = np.asarray(self.truncated_tokens, dtype=np.int64).reshape(n)
        self.input_tokens = np.asarray(self.input_tokens, dtype=np.int64).reshape(n)
        self.chunks = np.asarray(self.chunks, dtype=np.int64).reshape(n)
        if len(self.failures) != n:
            raise ValueError("ScoreBatch.failures must have one entry per row")
        bad = np.isnan(self.scores) & np.array([f is None for f in self.failures], dtype=bool)
        if bad.any():
            raise ValueError(f"ScoreBatch has {int(bad.sum())} NaN scores without a failure reason")
        for k, v in self.extras.items():
            if len(v) != n:
                raise ValueError(f"ScoreBatch extra {k!r} must have one entry per row")

    def __len__(self) -> int:
        return int(self.scores.shape[0])

    @classmethod
    def plain(cls, scores: Sequence[float] | np.ndarray, truncated: Any = 0, input_tokens: Any = 0) -> "ScoreBatch":
        s = np.asarray(scores, dtype=np.float64)
        n = s.shape[0]
        return cls(scores=s, truncated_tokens=np.broadcast_to(truncated, n).copy(),
                   input_tokens=np.broadcast_to(input_tokens, n).copy(), chunks=np.ones(n, dtype=np.int64),
                   failures=[None] * n)

    @classmethod
    def concat(cls, parts: Sequence["ScoreBatch"]) -> "ScoreBatch":
        keys = sorted({k for p in parts for k in p.extras})
        return cls(
            scores=np.concatenate([p.scores for p in parts]) if parts else np.zeros(0),
            truncated_tokens=np.concatenate([p.truncated_tokens for p in parts]) if parts else np.zeros(0),
            input_tokens=np.concatenate([p.input_tokens for p in parts]) if parts else np.zeros(0),
            chunks=np.concatenate([p.chunks for p in parts]) if parts else np.zeros(0),
            failures=[f for p in parts for f in p.failures],
            extras={k: [v for p in parts for v in p.extras.get(k, [None] * len(p))] for k in keys},
        )

    def take(self, index: np.ndarray) -> "ScoreBatch":
        idx = np.asarray(index, dtype=np.int64)
        return ScoreBatch(scores=self.scores[idx], truncated_tokens=self.truncated_tokens[idx],
                          input_tokens=self.input_tokens[idx], chunks=self.chunks[idx],
                          failures=[self.failures[i] for i in idx],
                          extras={k: [v[i] for i in idx] for k, v in self.extras.items()})


@runtime_checkable
class Scorer(Protocol):
    """Anything that scores (claim, evidence) pairs; higher = more supported.

    `signature` must change whenever a score could change (model, revision, window,
    prompt version, weights); the cache keys on it. A scorer that sets `wants_questions = True`
    is also given `score(..., questions=...)` by engine.score_pairs, which then keys on the question too.
    """

    name: str

    @property
    def signature(self) -> str: ...

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch: ...


@dataclass(frozen=True)
class ScorerSpec:
    """A registry entry: how to build a scorer and how to tell whether it can run here."""

    name: str
    factory: Callable[..., Scorer]
    description: str
    family: str
    check: Callable[[], tuple[bool, str]]  # (available, where from / why not)
    install: str  # the command that makes it available


_REGISTRY: dict[str, ScorerSpec] = {}


def register(spec: ScorerSpec) -> ScorerSpec:
    if spec.name in _REGISTRY:
        raise ValueError(f"scorer {spec.name!r} is registered twice")
    _REGISTRY[spec.name] = spec
    return spec


def registry() -> dict[str, ScorerSpec]:
    """Built-in scorers and the installed `attrib_audit.scorers` entry points (discovered on each call)."""
    from attrib_audit import scorers  # noqa: F401  (importing the package registers the built-ins)
    from attrib_audit.scorers.plugins import entry_point_specs

    return {**entry_point_specs(set(_REGISTRY))[0], **_REGISTRY}


def get_scorer(name: str, **options: Any) -> Scorer:
    """Build a registered scorer or a `module:factory` plugin.

    Raises ScorerUnavailable with a one-line reason if it cannot run here, PluginError for a broken plugin.
    """
    from attrib_audit.scorers.plugins import import_path_scorer, is_import_path

    if is_import_path(name):
        return import_path_scorer(name, **options)
    from attrib_audit import scorers  # noqa: F401  (a built-in needs no scan of the installed entry points)

    specs = _REGISTRY if name in _REGISTRY else registry()
    if name not in specs:
        raise KeyError(f"unknown scorer {name!r}; known: {', '.join(sorted(specs))}")
    return specs[name].factory(**options)
