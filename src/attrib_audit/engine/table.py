"""Score a whole PairTable with several scorers: build them, then run each locally through the score cache or on
Ray Data actors. The audit, `score`, `sample` and the window-sensitivity rescoring all score through here.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol, Sequence

from attrib_audit import __version__
from attrib_audit.data.records import PairTable
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.engine.gate import check_before_long_run
from attrib_audit.engine.ray_engine import RayScorer, ray_score
from attrib_audit.engine.runner import RunStats, score_pairs
from attrib_audit.errors import BackendError, InputError, UsageError
from attrib_audit.files.paths import default_cache_path
from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerUnavailable, as_scorer
from attrib_audit.scorers.catalog import check_options, get_scorer, scorer_spec
from attrib_audit.scorers.plugins import is_import_path


class ScoringConfig(Protocol):
    """What scoring reads from a configuration (audit.AuditConfig is one)."""

    scorers: tuple[str, ...]
    engine: str  # "local" or "ray"
    batch_size: int | None
    cache_path: str | None  # None: the default cache; ":memory:": nothing persists
    quiet: bool
    ray: Any  # engine.ray_engine.RayOptions for engine="ray"; None: defaults

    def factory_options(self, name: str) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Unavailable:
    """A requested scorer that could not run here, and why (its weights or library are absent)."""

    scorer: str
    reason: str


def build_scorers(config: ScoringConfig,
                  log: Callable[[str], None] = print) -> tuple[dict[str, Scorer], list[Unavailable]]:
    """Instantiate the requested scorers; one whose weights are absent is reported in one line and skipped.

    A model whose signature the score cache already knows for the same identity (ScorerSpec.identity) is not loaded
    here but on its first uncached pair (DeferredScorer), so a rerun served from the cache loads no model."""
    built: dict[str, Scorer] = {}
    unavailable: list[Unavailable] = []
    caches: list[ScoreCache] = []  # opened only if a scorer has an identity to look up

    def cache() -> ScoreCache | None:
        if str(config.cache_path) == ":memory:":
            return None
        if not caches:
            caches.append(ScoreCache(config.cache_path))
        return caches[0]

    try:
        for name in config.scorers:
            try:
                built[name] = _build(name, config.factory_options(name), cache)
            except ScorerUnavailable as exc:
                unavailable.append(Unavailable(scorer=name, reason=str(exc)))
                log(f"[skip] {name}: {exc}")
    finally:
        for c in caches:
            c.close()
    return built, unavailable


def no_scorer_ran(unavailable: list[Unavailable]) -> UsageError:
    """The one-line error of a command that has nothing to compute because no requested scorer could be built here
    (each named with why): writing an output without scores would look like a finished run."""
    return UsageError("no scorer ran: " + "; ".join(f"{u.scorer} ({u.reason})" for u in unavailable))


def scorer_identity(name: str, options: dict[str, Any]) -> str | None:
    """What determines the scorer's signature without loading it (options, weight files, library versions, this
    release), hashed; None for a scorer that has no such identity (it is always built)."""
    spec = None if is_import_path(name) else scorer_spec(name)
    if spec is None or spec.identity is None:
        return None
    opts = check_options(name, options)  # an unknown option fails now, not at the first uncached pair
    ident = spec.identity(**opts)
    if ident is None:
        return None
    return hashlib.sha256(json.dumps([name, opts, ident, __version__], sort_keys=True,
                                     default=repr).encode()).hexdigest()


def _build(name: str, options: dict[str, Any], cache: Callable[[], ScoreCache | None]) -> Scorer:
    spec = None if is_import_path(name) else scorer_spec(name)
    store = cache() if spec is not None and spec.identity is not None else None
    identity = None
    if store is not None:
        identity = scorer_identity(name, options)
        known = store.built_signature(identity) if identity is not None else None
        if known is not None:
            return DeferredScorer(name, options, *known, cache=str(store.path))
    scorer = get_scorer(name, **options)
    if identity is not None and store is not None:
        store.remember_signature(identity, scorer.signature, scorer.window)
    return scorer


class DeferredScorer(Scorer):
    """A scorer whose model loads on its first uncached pair; its signature and token window are those the same
    identity had when last built (the identity covers the options, weight files and library versions)."""

    wants_questions = False  # only scorers with a ScorerSpec.identity are deferred, and none of them reads questions

    def __init__(self, name: str, options: dict[str, Any], signature: str, window: int | None, *,
                 cache: str = "the score cache") -> None:
        self.name, self._options, self._signature, self.window = name, options, signature, window
        self._cache = cache
        self._scorer: Scorer | None = None

    @property
    def signature(self) -> str:
        return self._signature

    def loaded(self) -> Scorer:
        if self._scorer is None:
            scorer = get_scorer(self.name, **self._options)
            if scorer.signature != self._signature:  # the identity missed something: never mix two signatures
                raise InputError(f"scorer {self.name}: {self._cache} recorded signature {self._signature} for these "
                                 f"weights and options, but they now build {scorer.signature}; its scores are not "
                                 "mixed with new ones: rerun with --no-cache or another --cache FILE")
            self._scorer = scorer
        return self._scorer

    @property
    def batch_size(self) -> int:
        return self.loaded().batch_size

    @batch_size.setter
    def batch_size(self, value: int) -> None:
        self.loaded().batch_size = value

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        return self.loaded().score(claims, evidences)

    def __getattr__(self, attr: str) -> Any:  # anything else a caller reads (e.g. `embed`) is the loaded scorer's
        if attr.startswith("__") or attr in ("_scorer", "_options", "_signature", "_cache"):
            raise AttributeError(attr)
        return getattr(self.loaded(), attr)


def score_table(table: PairTable, scorers: dict[str, Scorer],
                config: ScoringConfig) -> tuple[dict[str, ScoreBatch], list[RunStats]]:
    scorers = {name: as_scorer(scorer) for name, scorer in scorers.items()}
    for name, scorer in scorers.items():  # a long run first checks each scorer on the known-answer set
        check_before_long_run(name, scorer, table.claims, table.evidences, questions=table.questions,
                              cache_path=config.cache_path, quiet=config.quiet)
    if config.engine == "ray":
        specs = {n: RayScorer(config.factory_options(n), s.signature, s.wants_questions) for n, s in scorers.items()}
        return ray_score(table.claims, table.evidences, specs, questions=table.questions,
                         batch_size=config.batch_size, options=config.ray,
                         cache_path=config.cache_path if config.cache_path else str(default_cache_path()))
    if config.engine != "local":
        raise ValueError(f"unknown engine {config.engine!r}: use local or ray")
    cache = ScoreCache(config.cache_path)  # None: the default file; ":memory:": nothing persists
    out: dict[str, ScoreBatch] = {}
    stats: list[RunStats] = []
    try:
        for name, scorer in scorers.items():
            try:
                out[name], st = score_pairs(scorer, table.claims, table.evidences, cache=cache,
                                            batch_size=config.batch_size, quiet=config.quiet, questions=table.questions)
            except BackendError as exc:
                raise type(exc)(f"{exc} [{name}]; {kept_note(cache, stats, name, scorer.signature)}") from None
            stats.append(replace(st, scorer=name))  # the name asked for, also where a plugin calls itself otherwise
    finally:
        cache.close()
    return out, stats


def kept_note(cache: ScoreCache, done: list[RunStats], failed: str, signature: str) -> str:
    """What a backend failure mid-run leaves behind, so the user knows a rerun resumes rather than restarts."""
    if str(cache.path) == ":memory:":
        return "nothing was cached (--no-cache): a rerun starts over"
    finished = ", ".join(f"{s.scorer} ({s.n_unique} pairs)" for s in done)
    return (f"kept in the score cache {cache.path}: " + (f"{finished} finished, " if finished else "")
            + f"{cache.count(signature)} {failed} scores; rerun the same command to resume")
