"""The `sensitivity` section of an audit: is a ranking flip real, or an artefact of length, truncation or one dataset?

1. window: every scorer with a token window rescored at `--window-sensitivity N`; AUROC at both
   windows, the paired difference, and whether the metric ranking or the verdict changes;
2. chunking: each `<scorer>-chunk` run beside its truncating `<scorer>`: AUROC change, pairs cut
   before/after, and whether the verdict changes when the chunked variant replaces it;
3. length: AUROC per evidence-length bin (bins shared by the datasets of a construct, from the
   pooled word counts) and per within-dataset short/long half;
4. lodo: the recommended metric and portability with each dataset of a construct dropped;
5. exchangeability: a cluster-respecting permutation of dataset assignment, beside the residual
   permutation of the transfer section;
6. length_spearman: Spearman ρ of score with evidence length inside each label class.
Every bootstrap here replays the audit's draws for the slice (`slice_rng(seed, slice)`), so all
differences are paired with the audit's own replicates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from attrib_audit.audit.config import STATISTIC_LABELS, AuditConfig
from attrib_audit.audit.select import recommend
from attrib_audit.audit.transfer import LEVEL, build_matrix, construct_groups, evidence_words
from attrib_audit.data.records import PairTable
from attrib_audit.engine.runner import RunStats
from attrib_audit.files.jsonfile import plain
from attrib_audit.files.records import to_record
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.stats.bootstrap import (
    BootstrapAUROC,
    bootstrap_aurocs,
    paired_auroc_difference,
    paired_difference,
    percentile_ci,
    slice_rng,
)
from attrib_audit.stats.sensitivity import (
    SubsetAUROC,
    assign_bins,
    class_spearman,
    drop_dataset,
    exchangeability_test,
    median_halves,
    quantile_edges,
    ranking,
    subset_bootstrap,
)
from attrib_audit.stats.transfer import AurocMatrix

N_LENGTH_BINS = 3
MIN_PER_CLASS = 5  # a bin or half names a best metric only with at least this many rows of each label
CHUNK_SUFFIX = "-chunk"
EXCHANGEABILITY_CAVEAT = (
    "shuffling clusters across datasets makes the datasets exchangeable, which removes dataset difficulty and "
    "metric × dataset interaction at once: a small p says the datasets differ, not that the metrics' order depends "
    "on the dataset; the residual permutation (dataset difficulty held fixed) is the test of interaction")


# ---- verdicts of one "world" of metrics (used by window, chunking and lodo) ----

def construct_matrix(datasets: Sequence[str], metrics: Sequence[str],
                     boots: Mapping[str, BootstrapAUROC]) -> AurocMatrix | None:
    """The construct's metric × dataset matrix from per-dataset bootstraps whose rows follow `metrics` (or None)."""
    mat, _, _ = build_matrix(datasets, list(metrics), boots)
    return mat if mat is not None and len(mat.metrics) >= 2 else None


def world_boots(table: PairTable, rows: Mapping[str, np.ndarray], world: Mapping[str, np.ndarray],
                config: AuditConfig) -> dict[str, BootstrapAUROC]:
    """Per slice, the bootstrap of the scores in `world` (name → scores of every row) on the audit's draws."""
    return {sl: bootstrap_aurocs(np.vstack([v[r] for v in world.values()]), table.labels[r].astype(np.int64),
                                 [table.groups[i] for i in r], n_boot=config.n_boot, rng=slice_rng(config.seed, sl),
                                 weights=_weights(table, r))
            for sl, r in rows.items()}


def _weights(table: PairTable, r: np.ndarray) -> np.ndarray | None:
    """A sampled file's Horvitz–Thompson row weights (1/π) on rows `r`, as the audit's own bootstrap uses them."""
    return None if table.weights is None else table.weights[r]


def world_verdicts(groups: Mapping[str, list[str]], metrics: Sequence[str],
                   boots: Mapping[str, BootstrapAUROC]) -> dict[str, dict]:
    """Per construct: the `select` recommendation and the portable metrics for these metrics' AUROCs."""
    out = {}
    for c, datasets in sorted(groups.items()):
        mat = construct_matrix(datasets, metrics, boots) if len(datasets) >= 2 else None
        if mat is not None:
            out[c] = _verdict(c, mat)
    return out


def _verdict(construct: str, mat: AurocMatrix, unit: str = "AUROC") -> dict:
    r = recommend(construct, mat, unit=unit)  # the unit sets the chance level: 0.5 for AUROC, 0 for a correlation
    return {"recommended": r.metric, "verdict": r.verdict, "portable": list(r.portable_metrics)}


def compare_verdicts(before: dict[str, dict], after: dict[str, dict], renamed: Mapping[str, str]) -> list[dict]:
    """Per construct: the verdict before and after substitution (`renamed`: metric before → its replacement)."""
    back = {v: k for k, v in renamed.items()}
    rows = []
    for c in sorted(set(before) & set(after)):
        b, a = before[c], after[c]
        a_port = sorted(back.get(m, m) for m in a["portable"])
        rows.append({"construct": c, "before": b, "after": a,
                     "recommended_changed": back.get(a["recommended"], a["recommended"]) != b["recommended"],
                     "verdict_changed": a["verdict"] != b["verdict"],
                     "portability_changed": sorted(b["portable"]) != a_port})
    return rows


# ---- 1 + 2: window sensitivity and chunking ----

@dataclass(frozen=True)
class WindowRescore:
    """The audit's scorers with a token window, rescored at `window` tokens (audit.run.rescore_at_window)."""

    window: int
    scores: Mapping[str, ScoreBatch]  # scorer -> its scores at `window` tokens, rows as the audit's
    scorers: list[dict]  # scorer, own window, the window reached, the rescored scorer's signature
    skipped: list[dict]  # scorers not rescored, each with the reason
    scoring: list[RunStats]  # cache and scoring counts of the rescoring

def _trunc(batch: ScoreBatch, rows: np.ndarray) -> dict:
    b = batch.take(rows)
    return {"pairs_truncated": int((b.truncated_tokens > 0).sum()), "tokens_truncated": int(b.truncated_tokens.sum()),
            "mean_chunks": float(b.chunks.mean()) if rows.size else 0.0,
            "n_failed": sum(f is not None for f in b.failures)}


def window_section(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                   alt_scores: Mapping[str, ScoreBatch], groups: Mapping[str, list[str]], info: list[dict],
                   skipped: list[dict], window: int, config: AuditConfig) -> dict:
    """AUROC at both windows per slice, paired differences, ranking and verdict changes."""
    names = list(scores)
    base = world_boots(table, rows, {n: scores[n].scores for n in names}, config)
    alt = world_boots(table, rows, {n: (alt_scores.get(n) or scores[n]).scores for n in names}, config)
    out_rows, rank_rows = [], []
    for sl, r in rows.items():
        y, grp = table.labels[r].astype(np.int64), [table.groups[i] for i in r]
        for i, n in enumerate(names):
            if n not in alt_scores:
                continue
            d = paired_auroc_difference(alt_scores[n].scores[r], scores[n].scores[r], y, grp, n_boot=config.n_boot,
                                        seed=slice_rng(config.seed, sl), level=config.level, weights=_weights(table, r))
            tb, ta = _trunc(scores[n], r), _trunc(alt_scores[n], r)
            out_rows.append({"scorer": n, "slice": sl, "auroc": base[sl].point[i], "auroc_alt": alt[sl].point[i],
                             "diff": d.estimate, "ci_low": d.ci_low, "ci_high": d.ci_high, "n": d.n,
                             "excludes_zero": bool(d.ci_low > 0 or d.ci_high < 0),
                             "pairs_truncated": tb["pairs_truncated"], "pairs_truncated_alt": ta["pairs_truncated"],
                             "tokens_truncated": tb["tokens_truncated"], "tokens_truncated_alt": ta["tokens_truncated"],
                             "n_failed": tb["n_failed"], "n_failed_alt": ta["n_failed"]})
        rb, ra = ranking(names, base[sl].point), ranking(names, alt[sl].point)
        rank_rows.append({"slice": sl, "ranking": rb, "ranking_alt": ra, "changed": rb != ra,
                          "best": rb[0], "best_alt": ra[0]})
    verdicts = compare_verdicts(world_verdicts(groups, names, base), world_verdicts(groups, names, alt), {})
    return {"window": window, "scorers": info, "skipped": skipped, "rows": out_rows, "ranking": rank_rows,
            "verdicts": verdicts}


def chunk_pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """(truncating scorer, chunked variant) for every `<name>-chunk` run beside its `<name>`."""
    return [(n[: -len(CHUNK_SUFFIX)], n) for n in names
            if n.endswith(CHUNK_SUFFIX) and n[: -len(CHUNK_SUFFIX)] in names]


def chunk_section(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                  boots: Mapping[str, Any],
                  groups: Mapping[str, list[str]], pairs: list[tuple[str, str]], config: AuditConfig) -> dict:
    """Chunked − truncated AUROC per slice on the audit's own draws, truncation before/after, verdict change."""
    names = list(scores)
    out = []
    for sl, r in rows.items():
        boot = boots[sl].boot
        for base, chunked in pairs:
            i, j = names.index(base), names.index(chunked)
            d = paired_difference(boot, j, i)
            tb, tc = _trunc(scores[base], r), _trunc(scores[chunked], r)
            out.append({"scorer": base, "chunked": chunked, "slice": sl, "auroc": boot.point[i],
                        "auroc_chunked": boot.point[j], "diff": d.estimate, "ci_low": d.ci_low,
                        "ci_high": d.ci_high, "n": d.n, "excludes_zero": bool(d.ci_low > 0 or d.ci_high < 0),
                        "pairs_truncated": tb["pairs_truncated"], "pairs_truncated_chunked": tc["pairs_truncated"],
                        "mean_chunks": tc["mean_chunks"]})
    plain = [n for n in names if n not in {c for _, c in pairs}]

    def verdicts_of(metrics: list[str]) -> dict[str, dict]:
        return world_verdicts(groups, metrics, world_boots(table, rows, {n: scores[n].scores for n in metrics}, config))

    before = verdicts_of(plain)
    verdicts = []
    for base, chunked in pairs:
        after = verdicts_of([chunked if n == base else n for n in plain])
        verdicts += [{"scorer": base, "chunked": chunked, **row} for row in
                     compare_verdicts(before, after, {base: chunked})]
    return {"pairs": [{"scorer": b, "chunked": c} for b, c in pairs], "rows": out, "verdicts": verdicts}


# ---- 3 + 6: evidence length ----

def length_section(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                   groups: Mapping[str, list[str]], words: np.ndarray, config: AuditConfig) -> dict:
    """AUROC per shared length bin (slices of a construct) and per within-slice half, on the slice's audit draws."""
    names = list(scores)
    construct_of = {d: c for c, ds in groups.items() for d in ds}
    edges = {c: quantile_edges(np.concatenate([words[rows[d]] for d in ds]), N_LENGTH_BINS) for c, ds in groups.items()}
    cells: dict[str | None, list] = {c: [] for c in groups}  # no construct (None): no bin, never read
    best: dict[str | None, dict[int, dict[str, str]]] = {c: {} for c in groups}
    halves = []
    for sl, r in rows.items():
        c = construct_of.get(sl)
        k = max(edges[c].size - 1, 1) if c else 0
        b = assign_bins(words[r], edges[c]) if c else np.zeros(r.size, dtype=np.int64)
        masks = np.vstack([b == j for j in range(k)] + list(median_halves(words[r])))
        res = subset_bootstrap(np.vstack([scores[n].scores[r] for n in names]), table.labels[r],
                               [table.groups[i] for i in r], masks, n_boot=config.n_boot,
                               rng=slice_rng(config.seed, sl))
        for j in range(k):
            for i, n in enumerate(names):
                lo, hi, _ = percentile_ci(res.replicates[i, j], LEVEL)
                cells[c].append({"dataset": sl, "bin": j, "scorer": n, "auroc": res.point[i, j], "ci_low": lo,
                                 "ci_high": hi, "n": int(res.n[i, j]), "n_pos": int(res.n_pos[i, j])})
            n_neg = res.n[:, j] - res.n_pos[:, j]
            if (np.isfinite(res.point[:, j]) & (res.n_pos[:, j] >= MIN_PER_CLASS) & (n_neg >= MIN_PER_CLASS)).any():
                best[c].setdefault(j, {})[sl] = ranking(names, res.point[:, j])[0]
        halves.append(_halves_row(sl, c, words[r], names, res, k))
    bins = []
    for c in sorted(groups):
        e = edges[c]
        k = max(e.size - 1, 1)
        bins.append({"construct": c, "edges": e.tolist(), "n_bins": k, "cells": cells[c],
                     "best": [{"bin": j, "range": [float(e[j]), float(e[min(j + 1, e.size - 1)])],
                               "best_per_dataset": best[c].get(j, {}),
                               "same_best": len(best[c].get(j, {})) >= 2 and len(set(best[c][j].values())) == 1}
                               for j in range(k)]})
    return {"measure": "evidence words", "n_bins": N_LENGTH_BINS, "bins": bins, "halves": halves}


def _halves_row(dataset: str, construct: str | None, w: np.ndarray, names: list[str], res: SubsetAUROC,
                k: int) -> dict:
    short, long = k, k + 1
    per = []
    for i, n in enumerate(names):
        lo, hi, _ = percentile_ci(res.replicates[i, long] - res.replicates[i, short], LEVEL)
        diff = res.point[i, long] - res.point[i, short]
        per.append({"scorer": n, "auroc_short": res.point[i, short], "auroc_long": res.point[i, long],
                    "diff": diff, "ci_low": lo, "ci_high": hi,
                    "n_short": int(res.n[i, short]), "n_long": int(res.n[i, long]),
                    "excludes_zero": bool(np.isfinite(lo) and (lo > 0 or hi < 0))})
    rs, rl = ranking(names, res.point[:, short]), ranking(names, res.point[:, long])
    return {"slice": dataset, "construct": construct, "median_words": float(np.median(w)), "scorers": per,
            "best_short": rs[0], "best_long": rl[0], "ranking_changed": rs != rl}


def spearman_rows(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                  words: np.ndarray) -> list[dict]:
    names = list(scores)
    out = []
    for sl, r in rows.items():
        rho, p, n = class_spearman(np.vstack([scores[x].scores[r] for x in names]), words[r], table.labels[r])
        for i, name in enumerate(names):
            out.append({"slice": sl, "scorer": name, "rho_neg": rho[i, 0], "p_neg": p[i, 0],
                        "n_neg": int(n[i, 0]), "rho_pos": rho[i, 1], "p_pos": p[i, 1], "n_pos": int(n[i, 1])})
    return out


# ---- 4 + 5: dataset-level stability ----

def lodo_section(groups: Mapping[str, list[str]], names: Sequence[str], boots: Mapping[str, Any],
                 unit: str = "AUROC") -> list[dict]:
    """Per construct: the recommendation on all datasets, then with each one dropped (`unit`: the statistic's
    label, AUROC or a correlation's)."""
    out: list[dict[str, Any]] = []
    for c, datasets in sorted(groups.items()):
        mat = construct_matrix(datasets, names, {d: boots[d].boot for d in datasets})
        if mat is None or len(datasets) < 3:
            out.append({"construct": c, "status": "insufficient",
                        "reason": "needs three datasets (dropping one must leave two) and two metrics defined on all"})
            continue
        full = _verdict(c, mat, unit)
        drops = []
        for d in datasets:
            v = _verdict(c, drop_dataset(mat, d), unit)
            drops.append({"dropped": d, **v, "recommended_changed": v["recommended"] != full["recommended"],
                          "verdict_changed": v["verdict"] != full["verdict"],
                          "portability_changed": sorted(v["portable"]) != sorted(full["portable"])})
        out.append({"construct": c, "status": "ok", "full": full, "drops": drops,
                    "stable": not any(x["recommended_changed"] or x["verdict_changed"] for x in drops)})
    return out


@dataclass(frozen=True)
class _StatisticSlice:
    """A slice's graded-statistic bootstrap where `lodo_section` reads a slice's `.boot`."""

    boot: Any


def statistic_lodo_section(slices: Sequence[Mapping[str, Any]], names: Sequence[str], graded: Mapping[str, Any],
                           statistic: str) -> list[dict]:
    """The leave-one-dataset-out verdicts under a graded transfer statistic (`--statistic`), so that they drop
    datasets from the same matrix the transfer section recommends from; each row names its statistic.

    Args:
        slices: the audit's slice records.
        names: the metrics.
        graded: slice → its StatisticBoot (slices without one are left out, as the transfer section leaves them).
        statistic: the transfer statistic.

    Returns:
        `lodo_section`'s rows, each with `statistic`.
    """
    groups, _ = construct_groups(slices, {s["slice"]: "" if s["slice"] in graded else "no graded statistic"
                                          for s in slices})
    rows = lodo_section(groups, names, {d: _StatisticSlice(graded[d]) for d in graded},
                        STATISTIC_LABELS.get(statistic, statistic))
    return [{**r, "statistic": statistic} for r in rows]


def exchangeability_section(table: PairTable, rows: Mapping[str, np.ndarray], scores: Mapping[str, ScoreBatch],
                            groups: Mapping[str, list[str]], transfer: Mapping[str, Any],
                            config: AuditConfig) -> list[dict]:
    out = []
    for c, datasets in sorted(groups.items()):
        entry = transfer.get("constructs", {}).get(c, {})
        if entry.get("status") != "ok":
            continue
        metrics = entry["metrics"]
        r = np.concatenate([rows[d] for d in datasets])
        ds = np.concatenate([np.full(rows[d].size, j) for j, d in enumerate(datasets)])
        keys = np.array([f"{j}\x1f{table.groups[i]}" for j, i in zip(ds, r)], dtype=object)
        uniq, row_cluster = np.unique(keys.astype(str), return_inverse=True)
        cluster_ds = np.array([int(u.split("\x1f", 1)[0]) for u in uniq])
        res = exchangeability_test(np.vstack([scores[m].scores[r] for m in metrics]), table.labels[r], row_cluster,
                                   cluster_ds, config.n_perm,
                                   slice_rng(config.seed, f"sensitivity:exchangeability:{c}"))
        out.append({"construct": c, "datasets": datasets, "metrics": metrics, **to_record(res),
                    "p_interaction_residual": entry["decomposition"]["p_interaction"],
                    "caveat": EXCHANGEABILITY_CAVEAT})
    return out


# ---- the section ----

def sensitivity_section(table: PairTable, keys: Sequence[str], scores: Mapping[str, ScoreBatch],
                        boots: Mapping[str, Any],
                        slices: Sequence[Mapping[str, Any]], transfer: Mapping[str, Any], config: AuditConfig,
                        window: WindowRescore | None = None,
                        words: np.ndarray | None = None, graded: Mapping[str, Any] | None = None) -> dict:
    """The `sensitivity` block of results.json; `window` is the audit's rescoring at another token window; `words`:
    evidence_words of every row, when the caller counted them already; `graded`: slice → StatisticBoot under a
    graded `--statistic`, which the leave-one-dataset-out verdicts then use (the other parts stay AUROC-based)."""
    groups, _ = construct_groups(slices)
    key_arr = np.asarray(keys, dtype=object)
    rows = {s["slice"]: np.flatnonzero(key_arr == s["slice"]) for s in slices if s["slice"] in boots}
    words = evidence_words(table.evidences) if words is None else words
    out: dict[str, Any] = {
        "level": LEVEL,
        "notes": ["every bootstrap replays the audit's draws for the slice, so differences are paired with its CIs",
                  f"length = evidence words; bins are the {N_LENGTH_BINS}-quantiles of the pooled word counts of a "
                  "construct's datasets, so its datasets are compared at matched length; a bin names a best metric "
                  f"for a dataset only with at least {MIN_PER_CLASS} rows of each label there",
                  "verdicts are `select`'s recommendation (lowest-regret metric) and the portable metrics"],
    }
    if window is not None:
        out["window"] = window_section(table, rows, scores, window.scores, groups, window.scorers, window.skipped,
                                       window.window, config)
        out["window"]["scoring"] = [to_record(st) for st in window.scoring]
    pairs = chunk_pairs(list(scores))
    if pairs:
        out["chunking"] = chunk_section(table, rows, scores, boots, groups, pairs, config)
    out["length"] = length_section(table, rows, scores, groups, words, config)
    out["length_spearman"] = spearman_rows(table, rows, scores, words)
    if config.statistic != "auroc" and graded is not None:
        out["statistic"] = config.statistic
        out["notes"].append(graded_note(config.statistic))
        out["lodo"] = statistic_lodo_section(slices, list(scores), graded, config.statistic)
        out["exchangeability"] = []
    else:
        out["lodo"] = lodo_section(groups, list(scores), boots)
        out["exchangeability"] = exchangeability_section(table, rows, scores, groups, transfer, config)
    return plain(out)


def graded_note(statistic: str) -> str:
    """Which parts of the section a graded `--statistic` changes, and which stay AUROC-based."""
    label = STATISTIC_LABELS.get(statistic, statistic)
    return (f"the leave-one-dataset-out verdicts compare the metrics by their {label}, as the transfer section does; "
            "window, chunking, matched length and the length correlation compare AUROCs of the binary label (where "
            "there is one); the exchangeability permutation is defined on AUROCs and is not run under --statistic "
            f"{statistic} (the transfer section's residual permutation tests the interaction on the statistic)")
