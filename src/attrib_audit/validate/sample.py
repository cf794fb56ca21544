"""`sample`: choose which pairs of an unlabelled pool to label, recording each pair's inclusion probability.

The audit of the labelled sample weighs every pair by 1/π (Horvitz–Thompson), so its AUROC
and clustered CI describe the whole pool even when the design over-samples some pairs.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows, pair_text
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.engine.runner import score_pairs
from attrib_audit.engine.table import ScoringConfig, build_scorers
from attrib_audit.errors import UsageError
from attrib_audit.external.exports import ScoreFile, keys_for, read_score_file, text_key
from attrib_audit.external.precomputed import join_scores
from attrib_audit.external.sources import ScoreSource
from attrib_audit.files.outdir import check_out_file, output_file
from attrib_audit.text.cells import cell_text
from attrib_audit.validate.designs import draw

STRATEGIES = ("random", "stratified", "disagreement")


@dataclass(kw_only=True)
class Pool:
    """Unlabelled pairs as read, with the fields the sampler needs; `rows` keep every original field."""

    path: Path
    rows: list[dict]
    ids: list[str]
    claims: list[str]
    evidences: list[str]
    questions: list[str | None]


def content_id(stem: str, claim: str, evidence: str, seen: Mapping[str, int]) -> str:
    """The id of a pool row without one: a hash of its pair (and which copy of it), not its row number, so
    labels keyed by it stay with their pair when rows are inserted, deleted or reordered."""
    digest = hashlib.sha256(f"{claim}\0{evidence}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
    rid, copy = f"{stem}:{digest}", 1
    while rid in seen:
        copy += 1
        rid = f"{stem}:{digest}#{copy}"
    return rid


POOL_FIELDS = ("id", "question", "claim", "evidence", "group")


def read_pool(path: str | Path, columns: Mapping[str, str] | None = None) -> Pool:
    """Every row of an unlabelled JSONL/CSV/Parquet file (claim and evidence required; labels ignored).

    Args:
        path: the pool file.
        columns: our field → the file's column (as `--claim-col` etc.); each row is written back under our names.

    Returns:
        The pool.

    Raises:
        DataError: a row without a claim or evidence, or a duplicated id (file, row and field named).
    """
    p = Path(path)
    col = {f: (columns or {}).get(f) or f for f in POOL_FIELDS}
    rows, ids, claims, evidences, questions = [], [], [], [], []
    seen: dict[str, int] = {}
    for row, raw in iter_rows(p):
        claim = pair_text(raw.get(col["claim"]), "claim", path=str(p), row=row, field=col["claim"])
        evidence = pair_text(raw.get(col["evidence"]), "evidence", path=str(p), row=row, field=col["evidence"])
        rid = cell_text(raw.get(col["id"])) or content_id(p.stem, claim, evidence, seen)
        if rid in seen:
            raise DataError(f"duplicated id {rid!r} (first at row {seen[rid]})", path=str(p), row=row, field=col["id"])
        seen[rid] = row
        mapped = {f: raw[c] for f, c in col.items() if c != f and c in raw}
        rows.append({**raw, **mapped, "id": rid})
        ids.append(rid)
        claims.append(claim)
        evidences.append(evidence)
        questions.append(cell_text(raw.get(col["question"])))
    if not rows:
        raise DataError("no rows", path=str(p))
    return Pool(path=p, rows=rows, ids=ids, claims=claims, evidences=evidences, questions=questions)


def cluster_codes(pool: Pool, column: str | None) -> np.ndarray:
    """Unit of sampling per row: its own (no column) or the value of `column` (e.g. question), rows lacking it alone."""
    if column is None:
        return np.arange(len(pool.ids))
    keys = [cell_text(r.get(column)) or f"\0{r['id']}" for r in pool.rows]
    if all(k.startswith("\0") for k in keys):
        raise DataError(f"no row has a {column!r} field to cluster on", path=str(pool.path), field=column)
    return np.unique(np.asarray(keys, dtype=object).astype(str), return_inverse=True)[1].reshape(-1)


def sample_pool(score_matrix: np.ndarray | None, n: int, strategy: str, rng: np.random.Generator,
                clusters: np.ndarray, strata_per_metric: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """(chosen row indices, inclusion probability of every row); with clusters, whole clusters are drawn.

    Cluster units are summarised by their rows' mean scores; n counts pairs, so about
    n / (mean cluster size) clusters are drawn.
    """
    n_units = int(clusters.max()) + 1
    size = np.bincount(clusters, minlength=n_units)
    k = n if n_units == clusters.size else max(1, int(round(n / size.mean())))
    if k > n_units:
        raise DataError(f"--n {n} is more than the pool holds ({clusters.size} pairs in {n_units} units)")
    unit_scores = None
    if score_matrix is not None:
        unit_scores = np.vstack([np.bincount(clusters, weights=row, minlength=n_units) / size for row in score_matrix])
    elif strategy != "random":
        raise ValueError(f"strategy {strategy} needs metric scores")
    chosen_units, unit_pi = draw(strategy, k, rng, unit_scores if unit_scores is not None else np.zeros((1, n_units)),
                                 strata_per_metric)
    return np.flatnonzero(np.isin(clusters, chosen_units)), unit_pi[clusters]


def score_pool(pool: Pool, config: ScoringConfig,
               log: Callable[[str], None] = print) -> tuple[list[str], np.ndarray]:
    """Scores of every pool pair by the configured metrics, through the engine and its cache."""
    scorers, unavailable = build_scorers(config, log=log)
    if unavailable:
        raise UsageError(f"scorer(s) {', '.join(u.scorer for u in unavailable)} cannot run here")
    cache = ScoreCache(config.cache_path)
    try:
        rows = [score_pairs(s, pool.claims, pool.evidences, cache=cache, batch_size=config.batch_size,
                            quiet=config.quiet,
                            questions=pool.questions)[0].scores for s in scorers.values()]
    finally:
        cache.close()
    matrix = np.vstack(rows)
    bad = ~np.isfinite(matrix).all(axis=0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"{int(bad.sum())} pairs have no score (first: id {pool.ids[i]!r}); drop them or choose other "
                        "--scorers", path=str(pool.path), row=i + 1)
    return list(scorers), matrix


def column_scores(pool: Pool, sources: Sequence[ScoreSource],
                  log: Callable[[str], None] = print) -> np.ndarray:
    """(k, n) scores of the user's own metrics, higher = better supported: a column of the pool
    (`--score-col NAME=COL[:lower]`) or of a score file joined on id or on the pair's text (`--scores FILE`).

    Every pool pair needs a score, since the scores steer which pairs are drawn.

    Raises:
        DataError: a pair without a finite score (file, row and column named), or a score file that does not join.
    """
    out = np.empty((len(sources), len(pool.rows)))
    files: dict[str, ScoreFile] = {}
    for k, src in enumerate(sources):
        if src.file is not None:
            out[k] = _file_scores(pool, src, files, log)
            continue
        for i, raw in enumerate(pool.rows):
            v = raw.get(src.column)
            try:
                x = float(v) if not isinstance(v, bool) and v is not None and v != "" else float("nan")
            except (TypeError, ValueError):
                x = float("nan")
            if not np.isfinite(x):
                raise DataError(f"--score-col {src.name}: {v!r} is not a number", path=str(pool.path), row=i + 1,
                                field=src.column)
            out[k, i] = -x if src.lower else x
    return out


def _file_scores(pool: Pool, src: ScoreSource, files: dict[str, ScoreFile],
                 log: Callable[[str], None]) -> np.ndarray:
    """One `--scores` column joined to the pool as `audit` joins it: by id, else by the pair's text."""
    path = str(src.file)
    sf = files.get(path) or read_score_file(path, src.format)  # its format was noted when the flag was read
    files[path] = sf
    if src.column not in sf.columns:
        raise DataError(f"no score column {src.column!r} (have: {', '.join(sf.columns) or 'none'})", path=path,
                        field=src.column)
    join, keys = keys_for(sf, pool.ids)
    if join == "id":
        pair_keys = pool.ids
    elif sf.evidences is None:
        pair_keys = [text_key(c) for c in pool.claims]
    else:
        pair_keys = [text_key(c, e) for c, e in zip(pool.claims, pool.evidences)]
    labels = None if join == "id" else [i or f"row {j + 1}" for j, i in enumerate(sf.ids)]
    p = join_scores(src.name, pair_keys, pool.ids, keys, sf.columns[src.column], source=path, column=src.column,
                    join=join, lower_is_better=src.lower, reasons=sf.reasons.get(src.column), labels=labels)
    bad = [i for i, f in enumerate(p.failures) if f is not None]
    if bad:
        i = bad[0]
        raise DataError(f"--scores {src.name}: pool pair {pool.ids[i]!r} (pool row {i + 1}) has no usable score: "
                        f"{p.failures[i]} ({len(bad)} such pairs; the sample needs a score for every pair)",
                        path=path, field=src.column)
    if p.unmatched_ids:
        log(f"note: {src.name}: {len(p.unmatched_ids)} rows of {Path(path).name} match no pool pair "
            f"(first: {p.unmatched_ids[0][:60]!r}); left out")
    return p.batch().scores


@dataclass(frozen=True)
class Sample:
    """The pairs `sample` chose, as written, and what the command reports about them."""

    out: Path
    chosen: np.ndarray
    inclusion_prob: np.ndarray  # of every pool row
    pool_size: int


def sample(data: str | Path, out: str | Path, n: int, *, strategy: str = "disagreement", seed: int = 0,
           strata: int = 4, cluster_by: str | None = None, config: ScoringConfig | None = None,
           log: Callable[[str], None] = print, score_cols: Sequence[ScoreSource] = (),
           columns: Mapping[str, str] | None = None) -> Sample:
    """Choose n pairs of the pool in `data` and write them, each with its inclusion probability, to `out` (JSONL).

    `config` scores the pool with the metrics that steer stratified and disagreement sampling; `score_cols` add the
    user's own metrics to them (pool columns, or score files joined on id or text); `columns` map our fields to
    the file's columns.
    """
    cols = [c.name for c in score_cols]
    built = [] if config is None else [s for s in config.scorers if s not in cols]
    if strategy == "disagreement" and len(built) + len(cols) < 2:
        raise UsageError("--strategy disagreement needs at least two --scorers (or --score-col/--scores columns)")
    if strategy != "random" and not built and not cols:
        raise UsageError(f"--strategy {strategy} needs --scorers, --score-col or --scores: their scores "
                         "steer the sample")
    check_out_file(out, inputs=[data])  # before any scoring: never onto the pool it reads, nor a file not ours
    pool = read_pool(data, columns)
    if n < 1 or n > len(pool.ids):
        raise UsageError(f"--n must be between 1 and the pool size ({len(pool.ids)})")
    clusters = cluster_codes(pool, cluster_by)
    names: list[str] = []
    matrix = None
    if strategy != "random":
        own = column_scores(pool, score_cols, log)
        if built and config is not None:
            # every ScoringConfig the callers pass is a frozen dataclass (audit.AuditConfig)
            narrowed = dataclasses.replace(config, scorers=tuple(built))  # type: ignore[type-var]
            names, matrix = score_pool(pool, narrowed, log)
        names, matrix = names + cols, own if matrix is None else np.vstack([matrix, own])
    chosen, pi = sample_pool(matrix, n, strategy, np.random.default_rng(seed), clusters, strata)
    out = Path(out)
    design = {"strategy": strategy, "scorers": names, "pool": str(pool.path), "pool_size": len(pool.ids),
              "cluster_by": cluster_by, "seed": seed}
    with output_file(out, inputs=[data]) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for i in rng_order(chosen, seed):
            row = {k: v for k, v in pool.rows[i].items() if k != "label"}  # labels come from the annotators
            fh.write(json.dumps({**row, "inclusion_prob": float(pi[i]), "sample_design": design}, ensure_ascii=False,
                                default=str) + "\n")
    return Sample(out, chosen, pi, len(pool.ids))


def rng_order(chosen: np.ndarray, seed: int) -> np.ndarray:
    """Shuffled labelling order, so an annotator who stops early leaves a random subset, not the pool's head."""
    return np.random.default_rng([seed, 1]).permutation(chosen)
