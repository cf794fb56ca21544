"""Before a long run, the known-answer check (scorers.knownanswers): a scorer about to score more than
`LONG_RUN` pairs that are not in the score cache first scores the packaged known-answer set, and a scorer that
fails it stops the run in one line (KnownAnswerError) instead of filling the cache with backwards scores.

The check runs once per scorer signature: a stored pass for the same name, signature and set skips it, so a
resumed or repeated run pays nothing. Counting the uncached pairs costs one hash per pair and one cache lookup,
paid only when the table is long and the scorer has not passed yet.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from attrib_audit.engine.cache import ScoreCache, pair_key
from attrib_audit.scorers.base import Scorer, as_scorer
from attrib_audit.scorers.knownanswers import (
    LONG_RUN,
    KnownAnswerError,
    check_scorer,
    failure_message,
    passed_before,
    record,
)


def uncached_pairs(scorer: Scorer, claims: Sequence[str], evidences: Sequence[str],
                   questions: Sequence[str | None] | None, cache_path: str | Path | None) -> int:
    """How many distinct pairs `score_pairs` would send to the scorer (the cache keys as the runner makes them)."""
    qs = questions if questions is not None and as_scorer(scorer).wants_questions else None
    keys = list(dict.fromkeys(pair_key(c, e, qs[i] if qs else None) for i, (c, e) in enumerate(zip(claims, evidences))))
    if str(cache_path) == ":memory:":
        return len(keys)
    cache = ScoreCache(cache_path)
    try:
        return len(keys) - len(cache.get(scorer.signature, keys))
    finally:
        cache.close()


def check_before_long_run(name: str, scorer: Scorer, claims: Sequence[str], evidences: Sequence[str], *,
                          questions: Sequence[str | None] | None = None, cache_path: str | Path | None = None,
                          quiet: bool = False, long_run: int = LONG_RUN) -> None:
    """Run the known-answer check when `scorer` is about to score more than `long_run` uncached pairs and has not
    passed it under this signature; raise KnownAnswerError if it fails."""
    if len(claims) <= long_run or passed_before(name, scorer.signature):
        return
    if uncached_pairs(scorer, claims, evidences, questions, cache_path) <= long_run:
        return
    result = check_scorer(scorer, name)
    record(result)
    if not result.passed:
        raise KnownAnswerError(failure_message(result))
    if not quiet:
        print(f"known-answer check before a long run: {result.line()}", file=sys.stderr)
