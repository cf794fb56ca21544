"""`attrib-audit sample`: choose which pairs of an unlabelled pool to label, recording each pair's inclusion probability.

The audit of the labelled sample weighs every pair by 1/π (Horvitz–Thompson), so its AUROC
and clustered CI describe the whole pool even when the design over-samples some pairs.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import _pair_text, _text, iter_rows, row_id
from attrib_audit.validate.designs import draw

STRATEGIES = ("random", "stratified", "disagreement")


@dataclass
class Pool:
    """Unlabelled pairs as read, with the fields the sampler needs; `rows` keep every original field."""

    path: Path
    rows: list[dict]
    ids: list[str]
    claims: list[str]
    evidences: list[str]
    questions: list[str | None]


def read_pool(path: str | Path) -> Pool:
    """Every row of an unlabelled JSONL/CSV/Parquet file (claim and evidence required; labels ignored)."""
    p = Path(path)
    rows, ids, claims, evidences, questions = [], [], [], [], []
    seen: dict[str, int] = {}
    for row, raw in iter_rows(p):
        claim = _pair_text(raw.get("claim"), "claim", path=str(p), row=row, field="claim")
        evidence = _pair_text(raw.get("evidence"), "evidence", path=str(p), row=row, field="evidence")
        rid = row_id(raw, "id", p.stem, row)
        if rid in seen:
            raise DataError(f"duplicated id {rid!r} (first at row {seen[rid]})", path=str(p), row=row, field="id")
        seen[rid] = row
        rows.append({**raw, "id": rid})
        ids.append(rid)
        claims.append(claim)
        evidences.append(evidence)
        questions.append(_text(raw.get("question")))
    if not rows:
        raise DataError("no rows", path=str(p))
    return Pool(p, rows, ids, claims, evidences, questions)


def cluster_codes(pool: Pool, column: str | None) -> np.ndarray:
    """Unit of sampling per row: its own (no column) or the value of `column` (e.g. question), rows lacking it alone."""
    if column is None:
        return np.arange(len(pool.ids))
    keys = [_text(r.get(column)) or f"\0{r['id']}" for r in pool.rows]
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


def score_pool(pool: Pool, args: argparse.Namespace) -> tuple[list[str], np.ndarray]:
    """Scores of every pool pair by the chosen metrics, through the engine and its cache."""
    from attrib_audit.audit import build_scorers
    from attrib_audit.cli import config_from_args
    from attrib_audit.engine.cache import ScoreCache
    from attrib_audit.engine.runner import score_pairs

    config = config_from_args(args)
    scorers, unavailable = build_scorers(config, log=lambda m: print(m, file=sys.stderr))
    if unavailable:
        raise SystemExit(f"attrib-audit sample: scorer(s) {', '.join(u['scorer'] for u in unavailable)} cannot run here")
    cache = ScoreCache(config.cache_path)
    try:
        rows = [score_pairs(s, pool.claims, pool.evidences, cache=cache, batch_size=config.batch_size, quiet=config.quiet,
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


def cmd_sample(args: argparse.Namespace) -> int:
    if args.strategy == "disagreement" and len([s for s in args.scorers.split(",") if s.strip()]) < 2:
        raise SystemExit("attrib-audit sample: --strategy disagreement needs at least two --scorers")
    pool = read_pool(args.data)
    if args.n < 1 or args.n > len(pool.ids):
        raise SystemExit(f"attrib-audit sample: --n must be between 1 and the pool size ({len(pool.ids)})")
    clusters = cluster_codes(pool, args.cluster_by)
    names, matrix = ([], None) if args.strategy == "random" else score_pool(pool, args)
    chosen, pi = sample_pool(matrix, args.n, args.strategy, np.random.default_rng(args.seed), clusters, args.strata)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    design = {"strategy": args.strategy, "scorers": names, "pool": str(pool.path), "pool_size": len(pool.ids),
              "cluster_by": args.cluster_by, "seed": args.seed}
    with open(out, "w", encoding="utf-8") as fh:
        for i in rng_order(chosen, args.seed):
            row = {k: v for k, v in pool.rows[i].items() if k != "label"}  # labels come from the annotators
            fh.write(json.dumps({**row, "inclusion_prob": float(pi[i]), "sample_design": design}, ensure_ascii=False,
                                default=str) + "\n")
    w = 1.0 / pi[chosen]
    print(f"sampled {chosen.size} of {len(pool.ids)} pairs ({args.strategy}{', by ' + args.cluster_by if args.cluster_by else ''}); "
          f"inclusion probabilities {pi[chosen].min():.3g}–{pi[chosen].max():.3g}, weights sum to {w.sum():.0f} "
          f"(the pool size, in expectation)\nto label: {out}\nnext: attrib-audit label {out} --annotator YOUR_NAME")
    return 0


def rng_order(chosen: np.ndarray, seed: int) -> np.ndarray:
    """Shuffled labelling order, so an annotator who stops early leaves a random subset, not the pool's head."""
    return np.random.default_rng([seed, 1]).permutation(chosen)


def add_sample_args(p: argparse.ArgumentParser) -> None:
    from attrib_audit.cli import add_model_args
    from attrib_audit.judge.cli import add_judge_args

    p.add_argument("data", help="unlabelled pairs (JSONL/CSV/Parquet with claim, evidence; id, question, group optional)")
    p.add_argument("--n", type=int, required=True, help="pairs to label")
    p.add_argument("--out", required=True, help="output JSONL of the pairs to label")
    p.add_argument("--strategy", choices=STRATEGIES, default="disagreement",
                   help="random; stratified over the metrics' score quantiles; disagreement over-samples pairs the "
                        "metrics rank differently (default)")
    p.add_argument("--scorers", default="lexical,minilm", help="metrics that steer stratified/disagreement sampling")
    p.add_argument("--strata", type=int, default=4, help="score quantiles per metric for --strategy stratified")
    p.add_argument("--cluster-by", metavar="FIELD",
                   help="sample whole clusters, e.g. question or group (all pairs of a question together)")
    p.add_argument("--seed", type=int, default=0)
    add_model_args(p)
    add_judge_args(p)
