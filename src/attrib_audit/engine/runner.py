"""Run a scorer over pairs: dedupe, cache lookup, length-sorted batches, one commit per batch."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attrib_audit.engine.cache import ScoreCache, pair_key, rows_to_batch
from attrib_audit.scorers.base import ScoreBatch, Scorer


@dataclass(frozen=True)
class RunStats:
    scorer: str
    signature: str
    n_pairs: int
    n_unique: int
    n_cached: int
    n_scored: int
    n_batches: int


def progress_enabled(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


def score_pairs(
    scorer: Scorer,
    claims: Sequence[str],
    evidences: Sequence[str],
    *,
    cache: ScoreCache | None = None,
    batch_size: int | None = None,
    quiet: bool = False,
    questions: Sequence[str | None] | None = None,
) -> tuple[ScoreBatch, RunStats]:
    """Scores aligned with the input rows; identical pairs are scored once and cached pairs not at all.

    `questions` reach only scorers that declare `wants_questions = True` (e.g. LLM judges);
    for those the question is part of the cache key and is passed as `score(..., questions=...)`.
    """
    if len(claims) != len(evidences):
        raise ValueError(f"{len(claims)} claims but {len(evidences)} evidences")
    qs = list(questions) if questions is not None and getattr(scorer, "wants_questions", False) else None
    if qs is not None and len(qs) != len(claims):
        raise ValueError(f"{len(claims)} claims but {len(qs)} questions")
    sig = scorer.signature
    keys = [pair_key(c, e, qs[i] if qs else None) for i, (c, e) in enumerate(zip(claims, evidences))]
    first: dict[str, int] = {}
    for i, k in enumerate(keys):
        first.setdefault(k, i)
    uniq_keys = list(first)
    cached = cache.get(sig, uniq_keys) if cache is not None else {}
    todo = [k for k in uniq_keys if k not in cached]
    # Longest first: similar lengths share a batch (less padding) and an OOM shows up at once.
    todo.sort(key=lambda k: -(len(claims[first[k]]) + len(evidences[first[k]])))
    bs = int(batch_size or getattr(scorer, "batch_size", 32))
    results: dict[str, tuple] = dict(cached)
    n_batches = 0
    bar = None
    if todo and progress_enabled(quiet):
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc=f"scoring {scorer.name}", unit="pair", leave=False)
    for start in range(0, len(todo), bs):
        bkeys = todo[start:start + bs]
        idx = [first[k] for k in bkeys]
        batch = (scorer.score([claims[i] for i in idx], [evidences[i] for i in idx]) if qs is None else
                 scorer.score([claims[i] for i in idx], [evidences[i] for i in idx], questions=[qs[i] for i in idx]))
        if len(batch) != len(bkeys):
            raise RuntimeError(f"scorer {scorer.name} returned {len(batch)} scores for {len(bkeys)} pairs")
        if cache is not None:
            cache.put(sig, bkeys, batch)
        for j, k in enumerate(bkeys):
            s = float(batch.scores[j])
            results[k] = (None if np.isnan(s) else s, int(batch.truncated_tokens[j]), int(batch.input_tokens[j]),
                          int(batch.chunks[j]), batch.failures[j],
                          _json_extras(batch, j))
        n_batches += 1
        if bar is not None:
            bar.update(len(bkeys))
    if bar is not None:
        bar.close()
    out = rows_to_batch(results[k] for k in keys)
    stats = RunStats(scorer.name, sig, len(keys), len(uniq_keys), len(cached), len(todo), n_batches)
    return out, stats


def _json_extras(batch: ScoreBatch, j: int) -> str | None:
    import json

    return json.dumps({k: v[j] for k, v in sorted(batch.extras.items())}) if batch.extras else None
