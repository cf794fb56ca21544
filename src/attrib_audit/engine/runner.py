"""Run a scorer over pairs: dedupe, cache lookup, length-sorted batches, one commit per batch; a composite scorer
(scorers.composite) is composed from its components' scores, each scored through the same cache."""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from attrib_audit.engine.cache import ScoreCache, pair_key, rows_to_batch
from attrib_audit.engine.threads import fit_torch_threads
from attrib_audit.scorers.base import ScoreBatch, Scorer, as_scorer
from attrib_audit.scorers.composite import Composite
from attrib_audit.scorers.embedding import UsesVectors


@dataclass(frozen=True, kw_only=True)
class RunStats:
    """How one scorer's pairs were scored: its signature, and how many were unique, cached or scored anew."""

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

    Args:
        scorer: The scorer (`scorers.get_scorer`).
        claims: One claim per row.
        evidences: One evidence per row.
        cache: The score cache to read and fill (None: no cache).
        batch_size: Pairs per call of the scorer (None: the scorer's own).
        quiet: No progress lines.
        questions: One question per row; passed only to scorers that declare `wants_questions = True`
            (e.g. LLM judges), for which it is part of the cache key.

    Returns:
        (scores aligned with the rows, with failures; run statistics: pairs scored, cached, seconds).

    Raises:
        ValueError: `claims`, `evidences` and `questions` differ in length.
    """
    if len(claims) != len(evidences):
        raise ValueError(f"{len(claims)} claims but {len(evidences)} evidences")
    scorer = as_scorer(scorer)
    qs = list(questions) if questions is not None and scorer.wants_questions else None
    if qs is not None and len(qs) != len(claims):
        raise ValueError(f"{len(claims)} claims but {len(qs)} questions")
    sig = scorer.signature
    # pairs are told apart by their strings (a question only when given: pair_key hashes "" as none), and the
    # sha256 content key is computed once per distinct pair, only when a cache needs it
    pairs: list[tuple] = (list(zip(claims, evidences, [q or None for q in qs])) if qs else
                          list(zip(claims, evidences)))
    slot: dict[tuple, int] = {}
    inverse = np.fromiter((slot.setdefault(k, len(slot)) for k in pairs), dtype=np.int64, count=len(pairs))
    keys = [pair_key(*p) for p in slot] if cache is not None else []  # the cache's content keys, when cached
    first = np.unique(inverse, return_index=True)[1]  # the first row holding each unique pair
    n_unique = len(slot)
    res = _Unique(n_unique)
    n_cached = 0
    todo = list(range(n_unique))
    if cache is not None:
        cached = cache.get(sig, keys)
        if cached:
            hit = [j for j, k in enumerate(keys) if k in cached]
            res.fill(hit, rows_to_batch(cached[keys[j]] for j in hit))
            n_cached = len(hit)
            todo = [j for j, k in enumerate(keys) if k not in cached]
    # Longest first: similar lengths share a batch (less padding) and an OOM shows up at once.
    n = len(claims)
    lengths = (np.fromiter(map(len, claims), np.int64, n) + np.fromiter(map(len, evidences), np.int64, n))[first]
    todo = np.asarray(todo, dtype=np.int64)[np.argsort(-lengths[todo], kind="stable")].tolist()
    first = first.tolist()
    bs = int(batch_size or scorer.batch_size) if todo else 1  # reading it may load a deferred model
    # a composite scores nothing itself: its components score the pairs it lacks (each through the cache, so a
    # component scored earlier in the run, or in an earlier run, is read back) and it composes their scores
    composed = (_composed(scorer, [claims[first[j]] for j in todo], [evidences[first[j]] for j in todo], cache,
                          batch_size, quiet) if todo and qs is None and isinstance(scorer, Composite) else None)
    if todo and composed is None:
        fit_torch_threads()  # the model is loaded by now (reading batch_size loads a deferred one)
    # an encoder scorer reads and keeps its texts' vectors in the embedding cache beside the score cache
    with _sharing_vectors(scorer, cache if todo and composed is None else None):
        n_batches = _score_todo(scorer, sig, claims, evidences, qs, todo, first, keys, res, composed, bs, cache,
                                quiet)
    stats = RunStats(scorer=scorer.name, signature=sig, n_pairs=len(pairs), n_unique=n_unique, n_cached=n_cached,
                     n_scored=len(todo), n_batches=n_batches)
    return res.expand(inverse), stats


@contextmanager
def _sharing_vectors(scorer: Scorer, cache: ScoreCache | None) -> Iterator[None]:
    """While it scores, an encoder scorer reads and keeps vectors in `cache`'s embedding cache (closed with it)."""
    if cache is None or not isinstance(scorer, UsesVectors):
        yield
        return
    scorer.use_vectors(cache.vectors)
    try:
        yield
    finally:
        scorer.use_vectors(None)


def _score_todo(scorer: Scorer, sig: str, claims: Sequence[str], evidences: Sequence[str], qs: list | None,
                todo: list[int], first: list[int], keys: list[str], res: _Unique, composed: ScoreBatch | None,
                bs: int, cache: ScoreCache | None, quiet: bool) -> int:
    """Score the pairs not in the cache batch by batch, each committed to the cache and filled into `res`; returns
    how many batches ran."""
    n_batches = 0
    bar = None
    if todo and composed is None and progress_enabled(quiet):
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc=f"scoring {scorer.name}", unit="pair", leave=False)
    for start in range(0, len(todo), bs):
        bidx = todo[start:start + bs]
        rows = [first[j] for j in bidx]
        if composed is not None:
            batch = composed.take(np.arange(start, start + len(bidx)))
        elif qs is None:
            batch = scorer.score([claims[i] for i in rows], [evidences[i] for i in rows])
        else:
            batch = scorer.score([claims[i] for i in rows], [evidences[i] for i in rows],  # type: ignore[call-arg]
                                 questions=[qs[i] for i in rows])
        if len(batch) != len(bidx):
            raise RuntimeError(f"scorer {scorer.name} returned {len(batch)} scores for {len(bidx)} pairs")
        if cache is not None:
            cache.put(sig, [keys[j] for j in bidx], batch)
        res.fill(bidx, batch)
        n_batches += 1
        if bar is not None:
            bar.update(len(bidx))
    if bar is not None:
        bar.close()
    return n_batches


def _composed(scorer: Composite, claims: list[str], evidences: list[str], cache: ScoreCache | None,
              batch_size: int | None, quiet: bool) -> ScoreBatch:
    """The composite's scores of these pairs, composed from each component's (scored by `score_pairs`, so through
    the cache); checked to be one row per pair."""
    parts = {role: score_pairs(part, claims, evidences, cache=cache, batch_size=batch_size, quiet=quiet)[0]
             for role, part in scorer.components.items()}
    batch = scorer.compose(parts)
    if len(batch) != len(claims):
        raise RuntimeError(f"composite scorer returned {len(batch)} scores for {len(claims)} pairs")
    return batch
