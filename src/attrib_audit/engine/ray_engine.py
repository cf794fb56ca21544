"""Ray Data backend: the same scoring as `score_pairs`, spread over a Ray cluster's actors.

Pairs are deduplicated on the driver (content hash, as the cache keys), then a Ray Dataset of the
unique pairs flows through one `map_batches` stage per scorer. Scorers that read the question (LLM
judges) run over a second dataset deduplicated on (question, claim, evidence) with the question
column, so they see the same prompts and cache keys as on the local engine. Each stage runs a pool of stateful
actors (`ScorerActor`): each actor builds its scorer once through the registry, and for every batch
calls `score_pairs` against the shared SQLite `ScoreCache`, so cached pairs are not scored and new
scores are committed batch by batch. A rerun on either engine therefore scores nothing anew.
Scores are written to Parquet by Ray, then read back and aligned to the input rows.
"""
from __future__ import annotations

import json
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

import attrib_audit
from attrib_audit.engine.cache import ScoreCache, pair_key
from attrib_audit.engine.runner import RunStats, score_pairs
from attrib_audit.engine.threads import set_core_share
from attrib_audit.errors import AuditError, BackendError
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.scorers.catalog import get_scorer

_STATS = ("n_cached", "n_scored", "n_batches")


@dataclass(frozen=True, kw_only=True)
class RayOptions:
    """How to reach Ray and how wide to run: `address` None uses RAY_ADDRESS or starts a local Ray."""

    address: str | None = None
    concurrency: int = 2  # actors per scorer (bounded; each holds one copy of the model)
    num_cpus: float = 1.0  # per actor
    num_gpus: float = 0.0  # per actor; set >0 for device=cuda
    block_rows: int = 8192  # rows per Ray batch handed to an actor


@dataclass(frozen=True)
class RayScorer:
    """What an actor needs to build a scorer exactly as the driver did, and whether it reads the question."""

    options: dict[str, Any]
    signature: str
    wants_questions: bool = False


class ScorerActor:
    """One scorer, built once per actor; scores a Ray batch through the shared cache."""

    def __init__(self, name: str, options: dict[str, Any], cache_path: str | None, batch_size: int | None,
                 num_cpus: float | None = None) -> None:
        set_core_share(num_cpus)  # this actor's torch threads: its own CPUs, not the whole machine's
        self.name = name
        self.scorer = get_scorer(name, **options)
        self.cache = ScoreCache(cache_path) if cache_path else None
        self.batch_size = batch_size
        self.error: AuditError | None = None  # a backend failure: later batches of this actor are not attempted

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        claims, evidences = [str(c) for c in batch["claim"]], [str(e) for e in batch["evidence"]]
        questions = [None if q is None else str(q) for q in batch["question"]] if "question" in batch else None
        n = len(claims)
        p = self.name
        if self.error is None:
            try:
                out, st = score_pairs(self.scorer, claims, evidences, cache=self.cache, batch_size=self.batch_size,
                                      quiet=True, questions=questions)
            except AuditError as exc:  # Ray would keep only its text: carried in a column, raised by the driver
                self.error = exc
        batch[f"{p}__error"] = np.array([_error_text(self.error)] * n, dtype=object)
        if self.error is not None:
            out = ScoreBatch(scores=np.full(n, np.nan), truncated_tokens=np.zeros(n, dtype=np.int64),
                             input_tokens=np.zeros(n, dtype=np.int64), chunks=np.ones(n, dtype=np.int64),
                             failures=["backend error"] * n)
            st = RunStats(scorer=p, signature="", n_pairs=n, n_unique=n, n_cached=0, n_scored=0, n_batches=0)
        batch[p] = out.scores
        batch[f"{p}__truncated_tokens"] = out.truncated_tokens
        batch[f"{p}__input_tokens"] = out.input_tokens
        batch[f"{p}__chunks"] = out.chunks
        batch[f"{p}__failure"] = np.array(["" if f is None else f for f in out.failures], dtype=object)
        batch[f"{p}__failed"] = np.array([f is not None for f in out.failures])
        batch[f"{p}__extras"] = np.array([json.dumps({k: v[i] for k, v in out.extras.items()}) if out.extras else ""
                                          for i in range(n)], dtype=object)
        for stat in _STATS:  # per-batch counters ride on the batch's first row, so a sum gives the run total
            col = np.zeros(n, dtype=np.int64)
            if n:
                col[0] = getattr(st, stat)
            batch[f"{p}__{stat}"] = col
        return batch


def _error_text(exc: AuditError | None) -> str:
    return "" if exc is None else json.dumps([type(exc).__name__, str(exc)])


def _raise_actor_error(texts: np.ndarray, cache_path: str | None) -> None:
    """Raise, as its own class, the first backend error an actor recorded (e.g. a judge server down: exit 3)."""
    found = next((t for t in texts if t), None)
    if found is None:
        return
    name, message = json.loads(found)
    classes, todo = {}, [AuditError]
    while todo:
        c = todo.pop()
        classes[c.__name__] = c
        todo += c.__subclasses__()
    kept = "finished batches are in the score cache" if cache_path else "nothing was cached (--no-cache)"
    raise classes.get(name, BackendError)(f"{message} (on a Ray actor; {kept}: rerun the same command to resume)")


def init_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Connect to `address` (or RAY_ADDRESS), else start a local Ray without a dashboard.

    The driver's own `attrib_audit` package is shipped to the workers (runtime_env py_modules), so
    actors run exactly the code the driver runs, on a cluster too. An already initialised Ray is used
    as it is (then the workers must be able to import attrib_audit themselves).
    """
    import ray

    if ray.is_initialized():
        return
    env = {"py_modules": [str(Path(attrib_audit.__file__).parent)]}
    if address:
        ray.init(address=address, runtime_env=env, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, runtime_env=env, log_to_driver=False)


def ray_score(
    claims: Sequence[str],
    evidences: Sequence[str],
    scorers: Mapping[str, RayScorer],
    *,
    cache_path: str | None,
    questions: Sequence[str | None] | None = None,
    batch_size: int | None = None,
    options: RayOptions | None = None,
    out_dir: str | Path | None = None,
) -> tuple[dict[str, ScoreBatch], list[RunStats]]:
    """Score with Ray Data; returns per-row ScoreBatches aligned with the input and one RunStats per scorer.

    n_unique is the global count; n_batches counts committed scorer batches over all actors.
    """
    opt = options or RayOptions()
    if not len(claims):
        return ({n: ScoreBatch.plain(np.zeros(0)) for n in scorers},
                [RunStats(scorer=n, signature=s.signature, n_pairs=0, n_unique=0, n_cached=0, n_scored=0,
                          n_batches=0) for n, s in scorers.items()])
    init_ray(opt.address)
    if cache_path == ":memory:":
        cache_path = None  # an in-memory cache cannot be shared with actors: score without one
    asks = {n: s.wants_questions and questions is not None for n, s in scorers.items()}
    out: dict[str, ScoreBatch] = {}
    stats: dict[str, RunStats] = {}
    for with_q in (False, True):
        group = {n: s for n, s in scorers.items() if asks[n] == with_q}
        if group:
            sub = None if out_dir is None else Path(out_dir) / ("questions" if with_q else "pairs")
            o, st = _score_unique(claims, evidences, questions if with_q else None, group, cache_path=cache_path,
                                  batch_size=batch_size, opt=opt, out_dir=sub)
            out.update(o)
            stats.update({s.scorer: s for s in st})
    return {n: out[n] for n in scorers}, [stats[n] for n in scorers]


def _score_unique(claims: Sequence[str], evidences: Sequence[str], questions: Sequence[str | None] | None,
                  scorers: Mapping[str, RayScorer], *, cache_path: str | None, batch_size: int | None,
                  opt: RayOptions, out_dir: Path | None) -> tuple[dict[str, ScoreBatch], list[RunStats]]:
    """One Ray pipeline over the unique pairs (with their question when `questions` is given)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import ray

    qs = list(questions) if questions is not None else [None] * len(claims)
    keys = [pair_key(c, e, q) for c, e, q in zip(claims, evidences, qs)]
    slot: dict[str, int] = {}
    inverse = np.fromiter((slot.setdefault(k, len(slot)) for k in keys), dtype=np.int64, count=len(keys))
    first: list[int] = np.unique(inverse, return_index=True)[1].tolist()
    # Longest first, as the local engine does, so each actor's batches have similar lengths.
    order = sorted(range(len(first)), key=lambda j: -(len(claims[first[j]]) + len(evidences[first[j]])))
    cols = {"u": np.asarray(order, dtype=np.int64), "claim": [claims[first[j]] for j in order],
            "evidence": [evidences[first[j]] for j in order]}
    if questions is not None:
        cols["question"] = pa.array([qs[first[j]] for j in order], type=pa.string())
    uniq = pa.table(cols)
    n_blocks = max(1, math.ceil(uniq.num_rows / opt.block_rows))
    ds: ray.data.Dataset = ray.data.from_arrow([uniq.slice(i * opt.block_rows,
                                                           opt.block_rows) for i in range(n_blocks)])
    for name, sc in scorers.items():
        ds = ds.map_batches(ScorerActor,
                            fn_constructor_args=(name, dict(sc.options), cache_path, batch_size, opt.num_cpus),
                            batch_size=opt.block_rows, batch_format="numpy",
                            compute=ray.data.ActorPoolStrategy(min_size=1, max_size=max(1, opt.concurrency)),
                            num_cpus=opt.num_cpus, num_gpus=opt.num_gpus)
    ds = ds.drop_columns([c for c in ("claim", "evidence", "question") if c in cols])
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(out_dir) if out_dir is not None else Path(tmp) / "scores"
        ds.write_parquet(str(target))
        table = pq.read_table(str(target))
    pos = np.empty(len(first), dtype=np.int64)
    pos[table.column("u").to_numpy()] = np.arange(table.num_rows)
    row = pos[inverse]
    out, stats = {}, []
    for name in scorers:
        _raise_actor_error(table.column(f"{name}__error").to_numpy(zero_copy_only=False), cache_path)
    for name, sc in scorers.items():
        def col(suffix: str, name: str = name) -> np.ndarray:
            return table.column(f"{name}{suffix}").to_numpy(zero_copy_only=False)

        fail_txt, failed = col("__failure"), col("__failed")
        failures = [str(fail_txt[i]) if failed[i] else None for i in row]
        extras_rows = [json.loads(x) if x else {} for x in col("__extras")]
        extra_keys = sorted({k for e in extras_rows for k in e})
        out[name] = ScoreBatch(scores=col("")[row], truncated_tokens=col("__truncated_tokens")[row],
                               input_tokens=col("__input_tokens")[row], chunks=col("__chunks")[row],
                               failures=failures,
                               extras={k: [extras_rows[i].get(k) for i in row] for k in extra_keys})
        n_cached, n_scored, n_batches = (int(col(f"__{s}").sum()) for s in _STATS)
        stats.append(RunStats(scorer=name, signature=sc.signature, n_pairs=len(keys), n_unique=len(first),
                              n_cached=n_cached, n_scored=n_scored, n_batches=n_batches))
    return out, stats
