"""Score a whole PairTable with several scorers: build them, then run each locally through the score cache or on
Ray Data actors. The audit, `score`, `sample` and the window-sensitivity rescoring all score through here.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Protocol

from attrib_audit.data.records import PairTable
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.engine.gate import check_before_long_run
from attrib_audit.engine.ray_engine import RayScorer, ray_score
from attrib_audit.engine.runner import RunStats, score_pairs
from attrib_audit.errors import BackendError
from attrib_audit.files.paths import default_cache_path
from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerUnavailable
from attrib_audit.scorers.catalog import get_scorer


class ScoringConfig(Protocol):
    """What scoring reads from a configuration (audit.AuditConfig is one)."""

    scorers: tuple[str, ...]
    engine: str  # "local" or "ray"
    batch_size: int | None
    cache_path: str | None  # None: the default cache; ":memory:": nothing persists
    quiet: bool
    ray: Any  # engine.ray_engine.RayOptions for engine="ray"; None: defaults

    def factory_options(self, name: str) -> dict[str, Any]: ...


def build_scorers(config: ScoringConfig, log: Callable[[str], None] = print) -> tuple[dict[str, Scorer], list[dict]]:
    """Instantiate the requested scorers; one whose weights are absent is reported in one line and skipped."""
    built: dict[str, Scorer] = {}
    unavailable = []
    for name in config.scorers:
        try:
            built[name] = get_scorer(name, **config.factory_options(name))
        except ScorerUnavailable as exc:
            unavailable.append({"scorer": name, "reason": str(exc)})
            log(f"[skip] {name}: {exc}")
    return built, unavailable


def score_table(table: PairTable, scorers: dict[str, Scorer],
                config: ScoringConfig) -> tuple[dict[str, ScoreBatch], list[RunStats]]:
    for name, scorer in scorers.items():  # a long run first checks each scorer on the known-answer set
        check_before_long_run(name, scorer, table.claims, table.evidences, questions=table.questions,
                              cache_path=config.cache_path, quiet=config.quiet)
    if config.engine == "ray":
        specs = {n: RayScorer(config.factory_options(n), s.signature, getattr(s, "wants_questions", False))
                 for n, s in scorers.items()}
        return ray_score(table.claims, table.evidences, specs, questions=table.questions,
                         batch_size=config.batch_size, options=config.ray,
                         cache_path=config.cache_path if config.cache_path else str(default_cache_path()))
    if config.engine != "local":
        raise ValueError(f"unknown engine {config.engine!r}: use local or ray")
    cache = ScoreCache(config.cache_path)  # None: the default file; ":memory:": nothing persists
    out, stats = {}, []
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
