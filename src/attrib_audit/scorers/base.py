"""The Scorer protocol, the per-row ScoreBatch it returns, the registry entry (ScorerSpec) and the built-in table."""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from attrib_audit.errors import AuditError, InputError


class ScorerUnavailable(RuntimeError):
    """A scorer's weights or package are not on this machine; the message is one line saying how to get them."""


class ScorerLoadError(AuditError, RuntimeError):
    """Weights are present but do not load (corrupt file, wrong layout): an error, never a silent skip; the user
    must fix or replace the files (exit 2)."""

    exit_code = 2
    kind = "error"


class ScorerOptionError(InputError):
    """An option a scorer does not take; the message lists the ones it does, so a typo never runs defaults."""

    kind = "error"


@dataclass(kw_only=True)
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
    The optional attributes have defaults here: a built-in scorer subclasses Scorer to inherit them, and any
    other object is seen through `as_scorer`, which answers the ones it lacks with these defaults.
    """

    name: str
    window: int | None = None  # tokens the model sees per input; None: no token window (it reads everything)
    batch_size: int = 32  # pairs per engine batch (one cache commit) when the caller sets none
    wants_questions: bool = False  # True: score() also takes questions=[...] and the cache keys on them

    @property
    def signature(self) -> str: ...

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch: ...


OPTIONAL_ATTRIBUTES = ("window", "batch_size", "wants_questions")
_ABSENT = object()


class ScorerView(Scorer):
    """An object with the Scorer protocol's required members, seen with all of its optional ones: what the object
    has is its own (read when asked, never copied), what it lacks is the protocol's default."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never forward private names (unpickling asks for `_inner` before it is set)
            raise AttributeError(name)
        return getattr(self._inner, name)

    def _optional(self, name: str) -> Any:
        value = getattr(self._inner, name, None)
        return getattr(Scorer, name) if value is None else value

    @property
    def name(self) -> str:
        return self._inner.name

    @name.setter
    def name(self, value: str) -> None:
        self._inner.name = value

    @property
    def window(self) -> int | None:
        return self._optional("window")

    @window.setter
    def window(self, value: int | None) -> None:
        self._inner.window = value

    @property
    def batch_size(self) -> int:
        return int(self._optional("batch_size"))

    @batch_size.setter
    def batch_size(self, value: int) -> None:
        self._inner.batch_size = value

    @property
    def wants_questions(self) -> bool:
        return bool(self._optional("wants_questions"))

    @wants_questions.setter
    def wants_questions(self, value: bool) -> None:
        self._inner.wants_questions = value

    @property
    def signature(self) -> str:
        return self._inner.signature

    def score(self, claims: Sequence[str], evidences: Sequence[str], **kwargs: Any) -> ScoreBatch:
        return self._inner.score(claims, evidences, **kwargs)


def as_scorer(obj: Any) -> Scorer:
    """`obj` itself when it declares every optional attribute of the protocol (a built-in scorer does), else a
    ScorerView of it; found without calling a property, so asking never loads a model."""
    if all(inspect.getattr_static(obj, a, _ABSENT) is not _ABSENT for a in OPTIONAL_ATTRIBUTES):
        return obj
    return ScorerView(obj)


@dataclass(frozen=True, kw_only=True)
class ScorerSpec:
    """A registry entry: how to build a scorer and how to tell whether it can run here."""

    name: str
    factory: Callable[..., Scorer]
    description: str
    family: str
    check: Callable[[], tuple[bool, str]]  # (available, where from / why not)
    install: str  # the command that makes it available
    # accepted options (or a function giving them, read when first needed); None: the factory's signature
    options: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None
    needs: tuple[str, ...] = ()  # what `models list` says it needs beyond its weights, e.g. "needs --trust-remote-code"
    # identity(**options): a string that fixes the signature for these options without loading the model (weights
    # fingerprint, library versions), or None when only loading tells; lets a fully cached run skip the load
    identity: Callable[..., str | None] | None = None
    sentences: str = ""  # the sentence splitter its recipe uses, for `models list` ("" not stated: a plugin)

    def option_names(self) -> tuple[str, ...] | None:
        """The options the factory takes (`device` included when it uses one); None when it takes **anything."""
        if callable(self.options):
            return self.options()
        if self.options is not None:
            return self.options
        params = inspect.signature(self.factory).parameters.values()
        if any(p.kind is p.VAR_KEYWORD for p in params):
            return None
        return tuple(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))


_REGISTRY: dict[str, ScorerSpec] = {}  # the built-in families, filled as their modules are imported (scorers.catalog)


def register(spec: ScorerSpec) -> ScorerSpec:
    """Add a built-in scorer; each family module registers its scorers when scorers.catalog imports it."""
    if spec.name in _REGISTRY:
        raise ValueError(f"scorer {spec.name!r} is registered twice")
    _REGISTRY[spec.name] = spec
    return spec


def resolver_check(resolver: Callable[[], Any]) -> tuple[bool, str]:
    """A ScorerSpec.check for weights found by a resolver: a bare hub id counts as absent (it would download)."""
    try:
        r = resolver()
    except ScorerUnavailable as exc:
        return False, str(exc)
    if r.origin == "hub":
        return False, f"not installed locally (would download {r.location} from the hub)"
    return True, f"{r.origin}: {r.location}"


