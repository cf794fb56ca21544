"""Run a scorer over pairs: dedupe, cache lookup, length-sorted batches, one commit per batch."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Hashable, Sequence

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


class _Unique:
    """Per-unique-pair result columns, filled from the cache and from scored batches, then expanded to rows."""

    def __init__(self, n: int) -> None:
        self.scores = np.full(n, np.nan)
        self.truncated = np.zeros(n, dtype=np.int64)
        self.input_tokens = np.zeros(n, dtype=np.int64)
        self.chunks = np.ones(n, dtype=np.int64)
        self.failures: list[str | None] = [None] * n
        self.extras: dict[str, list] = {}

    def fill(self, idx: Sequence[int], batch: ScoreBatch) -> None:
        ix = np.asarray(idx, dtype=np.int64)
        self.scores[ix], self.truncated[ix] = batch.scores, batch.truncated_tokens
        self.input_tokens[ix], self.chunks[ix] = batch.input_tokens, batch.chunks
        for j, i in enumerate(idx):
            self.failures[i] = batch.failures[j]
        for k, v in batch.extras.items():
            col = self.extras.setdefault(k, [None] * len(self.failures))
            for j, i in enumerate(idx):
                col[i] = v[j]

    def expand(self, inverse: np.ndarray) -> ScoreBatch:
        return ScoreBatch(scores=self.scores[inverse], truncated_tokens=self.truncated[inverse],
                          input_tokens=self.input_tokens[inverse], chunks=self.chunks[inverse],
                          failures=[self.failures[j] for j in inverse],
                          extras={k: [v[j] for j in inverse] for k, v in sorted(self.extras.items())})


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

    Pairs are deduplicated on the strings themselves: the sha256 content key is computed only for distinct pairs
    and only when a cache needs it (it is the dominant cost for the cheapest scorers).
    `questions` reach only scorers that declare `wants_questions = True` (e.g. LLM judges);
    for those the question is part of the cache key and is passed as `score(..., questions=...)`.
    """
    if len(claims) != len(evidences):
        raise ValueError(f"{len(claims)} claims but {len(evidences)} evidences")
    qs = list(questions) if questions is not None and getattr(scorer, "wants_questions", False) else None
    if qs is not None and len(qs) != len(claims):
        raise ValueError(f"{len(claims)} claims but {len(qs)} questions")
    sig = scorer.signature
    # pairs are told apart by their strings (a question only when given: pair_key hashes "" as none), and the
    # sha256 content key is computed once per distinct pair, only when a cache needs it
    pairs: list[tuple] = (list(zip(claims, evidences, [q or None for q in qs])) if qs else
                          list(zip(claims, evidences)))
    slot: dict[tuple, int] = {}
    inverse = np.fromiter((slot.setdefault(k, len(slot)) for k in pairs), dtype=np.int64, count=len(pairs))
    uniq_keys: list[Hashable] = [pair_key(*p) for p in slot] if cache is not None else list(slot)
    first = np.unique(inverse, return_index=True)[1]  # the first row holding each unique pair
    res = _Unique(len(uniq_keys))
    n_cached = 0
    todo = list(range(len(uniq_keys)))
    if cache is not None:
        cached = cache.get(sig, uniq_keys)  # type: ignore[arg-type]
        if cached:
            hit = [j for j, k in enumerate(uniq_keys) if k in cached]
            res.fill(hit, rows_to_batch(cached[uniq_keys[j]] for j in hit))
            n_cached = len(hit)
            todo = [j for j, k in enumerate(uniq_keys) if k not in cached]
    # Longest first: similar lengths share a batch (less padding) and an OOM shows up at once.
    n = len(claims)
    lengths = (np.fromiter(map(len, claims), np.int64, n) + np.fromiter(map(len, evidences), np.int64, n))[first]
    todo = np.asarray(todo, dtype=np.int64)[np.argsort(-lengths[todo], kind="stable")].tolist()
    first = first.tolist()
    bs = int(batch_size or getattr(scorer, "batch_size", 32)) if todo else 1  # reading it may load a deferred model
    n_batches = 0
    bar = None
    if todo and progress_enabled(quiet):
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc=f"scoring {scorer.name}", unit="pair", leave=False)
    for start in range(0, len(todo), bs):
        bidx = todo[start:start + bs]
        rows = [first[j] for j in bidx]
        batch = (scorer.score([claims[i] for i in rows], [evidences[i] for i in rows]) if qs is None else
                 scorer.score([claims[i] for i in rows], [evidences[i] for i in rows], questions=[qs[i] for i in rows]))
        if len(batch) != len(bidx):
            raise RuntimeError(f"scorer {scorer.name} returned {len(batch)} scores for {len(bidx)} pairs")
        if cache is not None:
            cache.put(sig, [uniq_keys[j] for j in bidx], batch)  # type: ignore[misc]
        res.fill(bidx, batch)
        n_batches += 1
        if bar is not None:
            bar.update(len(bidx))
    if bar is not None:
        bar.close()
    stats = RunStats(scorer=scorer.name, signature=sig, n_pairs=len(pairs), n_unique=len(uniq_keys), n_cached=n_cached,
                     n_scored=len(todo), n_batches=n_batches)
    return res.expand(inverse), stats
