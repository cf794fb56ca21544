"""The audit pipeline: score a PairTable with several scorers, then AUROC + CIs per slice.

Each step is a function a user can call from Python; the CLI is a thin layer over `run_audit`.
"""
from __future__ import annotations

import json
import platform
import sys
import time
from dataclasses import dataclass, field, replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from attrib_audit import __version__
from attrib_audit.data.records import PairTable
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.engine.runner import RunStats, score_pairs
from attrib_audit.errors import BackendError
from attrib_audit.judge.http import public_options
from attrib_audit.outdir import PARQUET_RUN_KEY, new_run_id, sealed_json, staged_dir
from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerUnavailable, get_scorer
from attrib_audit.stats.bootstrap import DEFAULT_B, BootstrapAUROC, bootstrap_aurocs, paired_difference, percentile_ci, slice_rng
from attrib_audit.sensitivity import sensitivity_section
from attrib_audit.transfer_audit import transfer_section

DEFAULT_SCORERS = ("lexical", "minilm", "blend", "bertscore")


@dataclass
class AuditConfig:
    scorers: tuple[str, ...] = DEFAULT_SCORERS
    slice_by: str = "dataset"
    n_boot: int = DEFAULT_B
    seed: int = 0
    batch_size: int | None = None
    device: str = "cpu"
    cache_path: str | None = None  # None: the default cache; ":memory:" disables persistence
    scorer_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    quiet: bool = False
    n_perm: int = 10_000  # permutations for the transfer section's W and decomposition tests
    level: float = 0.95  # coverage of the per-slice AUROC and paired-difference CIs
    engine: str = "local"  # "local" or "ray" (engine.ray_engine)
    ray: Any = None  # engine.ray_engine.RayOptions for engine="ray"; None: defaults
    window_sensitivity: int | None = None  # rescore every scorer with a token window at this window (sensitivity)
    # metrics computed elsewhere, name → external.ScoreSource (plain, what the CLI records), scores in table
    # order (numpy/pandas/pyarrow), a mapping id → score, or an external.Precomputed; see README "Your own metric"
    precomputed: dict[str, Any] = field(default_factory=dict)
    on_error: str = "fail"  # a precomputed score for an unknown id, or a pair without one: fail names it; skip counts

    def factory_options(self, name: str) -> dict[str, Any]:
        """What `get_scorer(name, ...)` is called with; the Ray actors build their scorer from the same."""
        return {"device": self.device, **self.scorer_options.get(name, {})}


@dataclass
class SliceBoot:
    """The bootstrap of one slice, kept in memory for paired and transfer statistics."""

    scorers: list[str]
    boot: BootstrapAUROC
    rows: np.ndarray
    groups: list[str]


@dataclass
class AuditResult:
    results: dict[str, Any]
    scores: dict[str, ScoreBatch]
    boots: dict[str, SliceBoot]
    table: PairTable
    slice_keys: list[str]

    def save(self, out: str | Path) -> Path:
        """Write results.json, scores.parquet and bootstrap.npz (what `select` needs to replay the bootstrap),
        all stamped with the run id, into a staged folder that replaces `out` as a whole."""
        run_id = self.results["run_id"]
        with staged_dir(out) as tmp:
            (tmp / "results.json").write_text(sealed_json(self.results, default=_jsonable))
            write_scores_parquet(tmp / "scores.parquet", self.table, self.slice_keys, self.scores, run_id=run_id)
            write_bootstrap_npz(tmp / "bootstrap.npz", self.boots, run_id=run_id)
        return Path(out) / "results.json"


def write_bootstrap_npz(path: Path, boots: dict[str, SliceBoot], run_id: str = "") -> None:
    """Each bootstrapped slice's inputs and generator state, so `select` replays the audit's exact draws
    on the rows its candidate metrics have in common (all slices share the scorers and B)."""
    names = sorted(boots)
    first = boots[names[0]] if names else None
    np.savez_compressed(
        path, run_id=np.array(run_id), slices=np.array(names, dtype=str),
        scorers=np.array(first.scorers if first else [], dtype=str),
        n_boot=first.boot.n_boot if first else 0,
        rng_states=np.array([json.dumps(boots[s].boot.rng_state) for s in names], dtype=str),
        row_slice=np.concatenate([np.full(boots[s].rows.size, i) for i, s in enumerate(names)] or [[]]).astype(np.int64),
        labels=np.concatenate([boots[s].boot.labels for s in names] or [[]]).astype(np.int64),
        weights=np.concatenate([np.ones(boots[s].rows.size) if boots[s].boot.weights is None else boots[s].boot.weights
                                for s in names] or [[]]),
        weighted=np.array([boots[s].boot.weights is not None for s in names], dtype=bool),
        groups=np.array([g for s in names for g in boots[s].groups], dtype=str),
        scores=np.concatenate([boots[s].boot.scores for s in names], axis=1) if names else np.zeros((0, 0)))


def _jsonable(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if np.isnan(o) else float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def write_scores_parquet(path: Path, table: PairTable, slice_keys: list[str], scores: dict[str, ScoreBatch],
                         run_id: str = "") -> None:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame({"id": table.ids, "dataset": table.datasets, "source": table.sources,
                          "group": table.groups, "construct": table.constructs,
                          "slice": slice_keys, "label": table.labels.astype(np.int64)})
    if table.weights is not None:  # a sampled file's 1/π, so `plan --results` describes the pool
        frame["weight"] = table.weights
    for name, batch in scores.items():
        frame[name] = batch.scores
        frame[f"{name}__truncated_tokens"] = batch.truncated_tokens
        frame[f"{name}__chunks"] = batch.chunks
        frame[f"{name}__failure"] = batch.failures
        for key, values in sorted(batch.extras.items()):  # e.g. a judge's label and raw answer
            frame[f"{name}__{key}"] = values
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), PARQUET_RUN_KEY: run_id.encode()}),
                   path)


def build_scorers(config: AuditConfig, log=print) -> tuple[dict[str, Scorer], list[dict]]:
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


def score_table(table: PairTable, scorers: dict[str, Scorer], config: AuditConfig) -> tuple[dict[str, ScoreBatch], list[RunStats]]:
    if config.engine == "ray":
        from attrib_audit.engine.cache import default_cache_path
        from attrib_audit.engine.ray_engine import RayScorer, ray_score

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


def slice_statistics(table: PairTable, keys: list[str], scores: dict[str, ScoreBatch], config: AuditConfig):
    """Per-slice AUROC with clustered CIs and all paired differences, from shared resamples."""
    names = list(scores)
    key_arr = np.asarray(keys, dtype=object)
    slices, auroc_rows, paired_rows, trunc_rows, fail_rows = [], [], [], [], []
    boots: dict[str, SliceBoot] = {}
    for sl in sorted(set(keys)):
        rows = np.flatnonzero(key_arr == sl)
        y = table.labels[rows].astype(np.int64)
        groups = [table.groups[i] for i in rows]
        constructs = sorted({table.constructs[i] or "unspecified" for i in rows})
        n_pos = int(y.sum())
        status = "ok" if 0 < n_pos < rows.size else "one_class"
        slices.append({"slice": sl, "n": int(rows.size), "n_pos": n_pos, "n_groups": len(set(groups)),
                       "construct": constructs[0] if len(constructs) == 1 else "mixed:" + "+".join(constructs),
                       "status": status})
        for name in names:
            b = scores[name].take(rows)
            n_trunc = int((b.truncated_tokens > 0).sum())
            tok_in = int(b.input_tokens.sum())
            trunc_rows.append({"scorer": name, "slice": sl, "n": int(rows.size), "pairs_truncated": n_trunc,
                               "tokens_truncated": int(b.truncated_tokens.sum()), "input_tokens": tok_in,
                               "share_tokens_cut": _num(b.truncated_tokens.sum() / tok_in) if tok_in else 0.0,
                               "mean_chunks": float(b.chunks.mean()) if rows.size else 0.0})
            failed = [f for f in b.failures if f is not None]
            fail_rows.append({"scorer": name, "slice": sl, "n": int(rows.size), "n_failed": len(failed),
                              "n_clamped": sum(bool(c) for c in b.extras.get("clamped", [])),  # judge answers outside [0, 1]
                              "examples": failed[:3]})
        if status != "ok" or not names:
            for name in names:
                auroc_rows.append({"scorer": name, "slice": sl, "auroc": None, "ci_low": None, "ci_high": None,
                                   "n": int(rows.size), "n_pos": n_pos, "n_groups": len(set(groups)),
                                   "note": "one class in slice: AUROC undefined"})
            continue
        matrix = np.vstack([scores[n].scores[rows] for n in names])
        weights = None if table.weights is None else table.weights[rows]  # a sample's 1/π: Horvitz–Thompson
        if weights is not None:
            slices[-1]["weighting"] = "horvitz-thompson: each pair weighs 1/inclusion_prob"
        boot = bootstrap_aurocs(matrix, y, groups, n_boot=config.n_boot, rng=slice_rng(config.seed, sl), weights=weights)
        boots[sl] = SliceBoot(names, boot, rows, [str(g) for g in groups])
        for j, name in enumerate(names):
            lo, hi, dropped = percentile_ci(boot.replicates[j], config.level)
            finite = np.isfinite(matrix[j])
            auroc_rows.append({"scorer": name, "slice": sl, "auroc": _num(boot.point[j]), "ci_low": _num(lo),
                               "ci_high": _num(hi), "n": int(finite.sum()), "n_pos": int(y[finite].sum()),
                               "n_groups": len({groups[i] for i in np.flatnonzero(finite)}),
                               "n_failed": int((~finite).sum()), "n_boot": config.n_boot, "n_boot_dropped": dropped})
        for a, b in combinations(range(len(names)), 2):
            d = paired_difference(boot, a, b, config.level)
            paired_rows.append({"scorer_a": names[a], "scorer_b": names[b], "slice": sl, "diff": _num(d.estimate),
                                "ci_low": _num(d.ci_low), "ci_high": _num(d.ci_high), "n": d.n,
                                "n_dropped": {names[a]: int(rows.size - boot.n[a]),
                                              names[b]: int(rows.size - boot.n[b])},
                                "n_boot_dropped": d.n_boot_dropped,
                                "excludes_zero": bool(d.ci_low > 0 or d.ci_high < 0)})
    return slices, auroc_rows, paired_rows, trunc_rows, fail_rows, boots


def run_audit(table: PairTable, config: AuditConfig | None = None, log=print) -> AuditResult:
    from attrib_audit.data.errors import DataError
    from attrib_audit.external.sources import ScoreSource, precomputed_scores

    config = config or AuditConfig()
    t0 = time.time()
    clash = sorted(set(config.precomputed) & set(config.scorers))
    if clash:
        raise DataError(f"precomputed scorer {clash[0]!r} has the name of a scorer in `scorers`; rename it")
    external = precomputed_scores(table, config.precomputed, on_error=config.on_error, log=log)
    scorers, unavailable = build_scorers(config, log)
    scores, run_stats = score_table(table, scorers, config)
    for name, p in external.items():  # cache-free: the scores are given, only the statistics run
        scores[name] = p.batch()
        run_stats.append(p.run_stats())
    keys = table.slice_keys(config.slice_by)
    slices, auroc_rows, paired_rows, trunc_rows, fail_rows, boots = slice_statistics(table, keys, scores, config)
    results = {
        "run_id": new_run_id(),
        "tool": {"name": "attrib-audit", "version": __version__, "python": sys.version.split()[0],
                 "platform": platform.platform()},
        "config": {"scorers": list(config.scorers), "slice_by": config.slice_by, "n_boot": config.n_boot,
                   "seed": config.seed, "ci": f"{config.level:.0%} percentile, clustered bootstrap over `group`",
                   "level": config.level, "device": config.device,
                   "n_perm": config.n_perm, "window_sensitivity": config.window_sensitivity,
                   "scorer_options": public_options(config.scorer_options), "batch_size": config.batch_size, "engine": config.engine,
                   "cache": config.cache_path,
                   "on_error": config.on_error,
                   "precomputed": {n: v.to_dict() if isinstance(v, ScoreSource) else {"name": n, "source": p.source}
                                   for (n, v), p in zip(config.precomputed.items(), external.values())}},
        "data": table.origin,
        "skipped": [s for o in table.origin for s in o.get("skipped", [])],
        "scorers": [{"scorer": s.scorer, "signature": s.signature, "n_pairs": s.n_pairs, "n_unique": s.n_unique,
                     "n_cached": s.n_cached, "n_scored": s.n_scored, "n_batches": s.n_batches} for s in run_stats],
        "unavailable": unavailable,
        "precomputed": [p.record(table.ids) for p in external.values()],
        "slices": slices,
        "auroc": auroc_rows,
        "paired": paired_rows,
        "truncation": trunc_rows,
        "failures": fail_rows,
    }
    key_arr = np.asarray(keys, dtype=object)
    results["transfer"] = transfer_section(
        slices, boots, list(scores), {s["slice"]: np.flatnonzero(key_arr == s["slice"]) for s in slices},
        table.labels.astype(np.int64), table.evidences, {n: b.scores for n, b in scores.items()},
        seed=config.seed, n_perm=config.n_perm, weights=table.weights)
    results["sensitivity"] = sensitivity_section(table, keys, scores, scorers, boots, results, config, log)
    results["elapsed_s"] = round(time.time() - t0, 3)
    return AuditResult(results, scores, boots, table, keys)


def format_table(results: dict[str, Any]) -> str:
    """AUROC [95% CI] per slice (rows) and scorer (columns), with n and truncation marks."""
    names = [s["scorer"] for s in results["scorers"]]
    cell = {(r["scorer"], r["slice"]): r for r in results["auroc"]}
    trunc = {(r["scorer"], r["slice"]): r for r in results["truncation"]}
    clamped = {(r["scorer"], r["slice"]): r.get("n_clamped", 0) for r in results.get("failures", [])}
    head = ["slice", "n", "pos"] + names
    lines = []
    for sl in results["slices"]:
        row = [sl["slice"], str(sl["n"]), str(sl["n_pos"])]
        for name in names:
            r = cell.get((name, sl["slice"]))
            if r is None or r["auroc"] is None:
                row.append("undefined (one class)" if sl["status"] == "one_class" else "-")
                continue
            mark = ""
            t = trunc.get((name, sl["slice"]))
            if t and t["pairs_truncated"]:
                mark = f" ✂{t['pairs_truncated']}"
            fails = f" ✗{r['n_failed']}" if r.get("n_failed") else ""
            fails += f" ⊓{clamped[(name, sl['slice'])]}" if clamped.get((name, sl["slice"])) else ""
            row.append(f"{r['auroc']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]{mark}{fails}")
        lines.append(row)
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h) for i, h in enumerate(head)]
    fmt = lambda cols: "  ".join(c.ljust(w) for c, w in zip(cols, widths))  # noqa: E731
    out = [fmt(head), fmt(["-" * w for w in widths]), *map(fmt, lines)]
    notes = ["AUROC [95% clustered-bootstrap CI]; ✂k = k pairs cut at the scorer's window; ✗k = k failed rows excluded."]
    if any(clamped.values()):
        notes.append("⊓k = k judge answers outside [0, 1], clamped to the nearest end and kept.")
    for u in results.get("unavailable", []):
        notes.append(f"not run: {u['scorer']} ({u['reason']})")
    return "\n".join(out + [""] + notes)
