"""The `transfer` section of an audit: per construct, does metric quality carry across its datasets?

Slices are grouped by their construct and statistics run inside one group only. A slice
whose construct is not declared ('unspecified') or that mixes constructs is listed as
excluded with the reason: the code never guesses that two datasets measure the same thing.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from attrib_audit.stats.bootstrap import BootstrapAUROC, slice_rng
from attrib_audit.stats.classification import average_precision, transferred_balanced_accuracy
from attrib_audit.stats.rank import kendall_tau_matrix, kendall_w_test, spearman
from attrib_audit.stats.transfer import (
    DEFAULT_EPS_GRID, AurocMatrix, best_per_dataset, decompose, eps_regret_sweep, lodo_regret, paired_best_vs_rest,
    portability, sign_flips,
)
from attrib_audit.text.sentences import split_sentences
from attrib_audit.text.tokenize import tokens

DEFAULT_N_PERM = 10_000
LEVEL = 0.95
THRESHOLD_NOTE = ("balanced accuracy uses, for each held-out dataset, the threshold that maximises balanced accuracy "
                  "on the pooled rows of the OTHER datasets of the construct; it is never tuned on the slice itself")


def clean(obj: Any) -> Any:
    """Plain JSON data: NaN/inf → None, numpy scalars/arrays and tuples → Python."""
    if isinstance(obj, Mapping):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return clean(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer, int)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def construct_groups(slices: Sequence[dict]) -> tuple[dict[str, list[str]], list[dict]]:
    """Usable slices per construct, and every other slice with the reason it is left out."""
    groups: dict[str, list[str]] = {}
    excluded = []
    for s in slices:
        c = s["construct"]
        if s["status"] != "ok":
            excluded.append({"slice": s["slice"], "construct": c, "reason": "one class in slice: AUROC undefined"})
        elif c == "unspecified":
            excluded.append({"slice": s["slice"], "construct": c, "reason": "construct not declared (set --construct "
                             "or a construct column); datasets of unknown construct are never pooled"})
        elif c.startswith("mixed:"):
            excluded.append({"slice": s["slice"], "construct": c, "reason": "slice mixes constructs; constructs are "
                             "never pooled (slice by dataset so each slice holds one construct)"})
        else:
            groups.setdefault(c, []).append(s["slice"])
    return groups, excluded


def build_matrix(datasets: Sequence[str], metrics: Sequence[str],
                 boots: Mapping[str, BootstrapAUROC]) -> tuple[AurocMatrix | None, list[dict], dict[str, dict]]:
    """The metric × dataset matrix on each dataset's rows where every kept metric has a score.

    A metric undefined on a dataset (own rows) is dropped with the reason; so is one whose
    failures leave the common rows with one class. Also returns, per dataset, the rows used
    and how many each metric's failures removed (`boots[d]` rows follow `metrics`).
    """
    pts = np.column_stack([boots[d].point for d in datasets])
    keep = np.isfinite(pts).all(axis=1)
    dropped = [{"scorer": m, "reason": "AUROC undefined on " + ", ".join(d for d, v in zip(datasets, pts[i])
                                                                        if not np.isfinite(v))}
               for i, m in enumerate(metrics) if not keep[i]]
    idx = np.flatnonzero(keep)
    while idx.size:
        al = {d: boots[d].aligned(idx) for d in datasets}
        bad = [d for d in datasets if not np.isfinite(al[d].point).all()]
        if not bad:
            break
        worst = int(idx[np.sum([al[d].dropped for d in bad], axis=0).argmax()])
        dropped.append({"scorer": metrics[worst], "reason": "its failures leave one class on the rows every metric "
                                                            "scored on " + ", ".join(bad)})
        idx = idx[idx != worst]
    if idx.size == 0:
        return None, dropped, {}
    mat = AurocMatrix.from_columns([metrics[i] for i in idx], datasets, [al[d].point for d in datasets],
                                   [al[d].replicates for d in datasets])
    rows = {d: {"n": int(boots[d].labels.size), "n_used": al[d].n,
                "dropped_by": {metrics[i]: int(k) for i, k in zip(idx, al[d].dropped)}} for d in datasets}
    return mat, dropped, rows


def matrix_statistics(mat: AurocMatrix, *, construct: str, seed: int, n_perm: int = DEFAULT_N_PERM,
                      eps_grid: Sequence[float] = DEFAULT_EPS_GRID) -> dict:
    """Every statistic that needs only the AUROC matrix and its replicates (also what `select` recomputes)."""
    tau = kendall_tau_matrix(mat.point)
    w = kendall_w_test(mat.point, n_perm, slice_rng(seed, f"transfer:W:{construct}"))
    return {
        "datasets": list(mat.datasets),
        "metrics": list(mat.metrics),
        "auroc": {m: dict(zip(mat.datasets, mat.point[i].tolist())) for i, m in enumerate(mat.metrics)},
        "best_per_dataset": [b.to_dict() for b in best_per_dataset(mat, LEVEL)],
        "portability": [p.to_dict() for p in portability(mat, LEVEL)],
        "kendall_tau": {"datasets": list(mat.datasets), "tau": tau.tau, "p": tau.pvalue, "method": tau.method.tolist(),
                        "note": "τ-b between two datasets' rankings of the metrics by AUROC; p as scipy.stats.kendalltau"},
        "kendall_w": w.to_dict(),
        "regret": lodo_regret(mat, LEVEL).to_dict(),
        "eps_regret": eps_regret_sweep(mat, eps_grid),
        "paired_best_vs_rest": [p.to_dict() for p in paired_best_vs_rest(mat, LEVEL)],
        "sign_flips": [f.to_dict() for f in sign_flips(mat, LEVEL)],
        "decomposition": decompose(mat, n_perm, slice_rng(seed, f"transfer:decomposition:{construct}")).to_dict(),
    }


def evidence_lengths(evidences: Sequence[str]) -> dict:
    words = np.array([len(tokens(e)) for e in evidences], dtype=np.float64)
    sents = np.array([len(split_sentences(e)) for e in evidences], dtype=np.float64)
    return {"words_mean": float(words.mean()), "words_median": float(np.median(words)),
            "sentences_mean": float(sents.mean()), "sentences_median": float(np.median(sents))}


def slice_companions(slices: Sequence[dict], rows: Mapping[str, np.ndarray], labels: np.ndarray,
                     evidences: Sequence[str], scores: Mapping[str, np.ndarray],
                     weights: np.ndarray | None = None) -> list[dict]:
    """AUPRC per scorer (failed rows left out and counted) and evidence length, for every two-class slice;
    with `weights` (a sample's 1/π) AUPRC and prevalence are Horvitz–Thompson estimates for the pool."""
    out = []
    for s in slices:
        if s["status"] != "ok":
            continue
        r = rows[s["slice"]]
        y = labels[r]
        w = np.ones(r.size) if weights is None else np.asarray(weights, dtype=np.float64)[r]
        auprc = {}
        for name, sc in scores.items():
            v = sc[r]
            ok = np.isfinite(v)
            auprc[name] = {"auprc": average_precision(v[ok], y[ok], w[ok]) if y[ok].any() else float("nan"),
                           "n": int(ok.sum()), "n_failed": int((~ok).sum())}
        out.append({"slice": s["slice"], "construct": s["construct"], "n": int(r.size),
                    "prevalence": float((w * y).sum() / w.sum()), "weighted": weights is not None, "auprc": auprc,
                    "evidence_length": evidence_lengths([evidences[i] for i in r])})
    return out


def balanced_accuracy_rows(datasets: Sequence[str], metrics: Sequence[str], rows: Mapping[str, np.ndarray],
                           labels: np.ndarray, scores: Mapping[str, np.ndarray]) -> list[dict]:
    out = []
    for m in metrics:
        for d in datasets:
            train = np.concatenate([rows[o] for o in datasets if o != d])
            xs, ys = scores[m][train], labels[train]
            xt, yt = scores[m][rows[d]], labels[rows[d]]
            ks, kt = np.isfinite(xs), np.isfinite(xt)
            row = {"scorer": m, "dataset": d, "threshold_from": [o for o in datasets if o != d],
                   "n_failed_excluded": int((~ks).sum() + (~kt).sum())}
            try:
                row.update(transferred_balanced_accuracy(xs[ks], ys[ks], xt[kt], yt[kt]).to_dict())
            except ValueError as exc:  # the other datasets' scored rows hold one class only
                row.update({"test_balanced_accuracy": None, "reason": str(exc)})
            out.append(row)
    return out


def length_correlates(mat: AurocMatrix, companions: Sequence[dict]) -> list[dict]:
    """Spearman ρ across the construct's datasets between each metric's AUROC and mean evidence length."""
    length = {c["slice"]: c["evidence_length"] for c in companions}
    words = np.array([length[d]["words_mean"] for d in mat.datasets])
    sents = np.array([length[d]["sentences_mean"] for d in mat.datasets])
    out = []
    for i, m in enumerate(mat.metrics):
        rw, pw = spearman(mat.point[i], words)
        rs, ps = spearman(mat.point[i], sents)
        out.append({"scorer": m, "rho_words": rw, "p_words": pw, "rho_sentences": rs, "p_sentences": ps,
                    "n_datasets": len(mat.datasets)})
    return out


def transfer_section(slices: Sequence[dict], boots: Mapping[str, Any], metrics: Sequence[str],
                     rows: Mapping[str, np.ndarray], labels: np.ndarray, evidences: Sequence[str],
                     scores: Mapping[str, np.ndarray], *, seed: int, n_perm: int = DEFAULT_N_PERM,
                     weights: np.ndarray | None = None) -> dict:
    """The whole `transfer` block of results.json; `boots` maps slice → SliceBoot (paired replicates)."""
    groups, excluded = construct_groups(slices)
    companions = slice_companions(slices, rows, labels, evidences, scores, weights)
    constructs = {}
    for c, datasets in sorted(groups.items()):
        entry: dict[str, Any] = {"datasets": datasets}
        if len(datasets) < 2:
            entry["status"] = "insufficient"
            entry["reason"] = "one dataset of this construct: transfer needs at least two"
            constructs[c] = entry
            continue
        mat, dropped, used = build_matrix(datasets, list(metrics), {d: boots[d].boot for d in datasets})
        entry["excluded_metrics"] = dropped
        entry["rows"] = used
        if mat is None or len(mat.metrics) < 2:
            entry["status"] = "insufficient"
            entry["reason"] = "fewer than two metrics defined on every dataset"
            constructs[c] = entry
            continue
        entry["status"] = "ok"
        entry.update(matrix_statistics(mat, construct=c, seed=seed, n_perm=n_perm))
        entry["balanced_accuracy"] = balanced_accuracy_rows(datasets, mat.metrics, rows, labels, scores)
        entry["length_correlates"] = length_correlates(mat, companions)
        constructs[c] = entry
    return clean({
        "level": LEVEL, "n_perm": n_perm,
        "notes": ["statistics run within one construct; constructs are never pooled",
                  "replicate b of the metric × dataset matrix joins resample b of every dataset (paired within a "
                  "dataset, independent across datasets); regret CIs recompute the best metric in every replicate, "
                  "so they lean positive when metrics are close",
                  "every comparison uses, per dataset, the rows where all of the construct's metrics have a score "
                  "(`rows`: rows used and rows each metric's failures removed); single-metric AUROCs use their own",
                  THRESHOLD_NOTE],
        "slices": companions,
        "excluded_slices": excluded,
        "constructs": constructs,
    })


_SIGN = {1: " +", 0: "", -1: " −"}


def _f(x: float | None, nd: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{nd}f}"


def _p(x: float | None) -> str:
    return "n/a" if x is None else (f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}")


def _grid(head: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    fmt = lambda cols: indent + "  ".join(c.ljust(w) for c, w in zip(cols, widths))  # noqa: E731
    return [fmt(head), *map(fmt, rows)]


def short_names(datasets: Sequence[str]) -> dict[str, str]:
    """Drop a `dataset:` prefix every slice shares, for printing (results.json keeps full names)."""
    prefixes = {d.split(":", 1)[0] for d in datasets}
    if len(prefixes) == 1 and all(":" in d for d in datasets):
        return {d: d.split(":", 1)[1] for d in datasets}
    return {d: d for d in datasets}


def format_construct(c: str, e: dict) -> list[str]:
    out = [f"== transfer within construct '{c}' ({len(e['datasets'])} datasets) =="]
    if e["status"] != "ok":
        return out + [f"  not computed: {e['reason']}"]
    for x in e.get("excluded_metrics", []):
        out.append(f"  left out: {x['scorer']} ({x['reason']})")
    short = short_names(e["datasets"])
    if any(k != v for k, v in short.items()):
        prefix = e["datasets"][0].split(":", 1)[0]
        out.append(f"  datasets are the slices {prefix}:<name>; printed by <name>")
    e = _rename(e, short)
    ds = e["datasets"]
    out.append("Best per dataset: " + "; ".join(f"{b['dataset']}: {b['best']} {_f(b['auroc'])} "
                                                 f"[{_f(b['ci_low'])}, {_f(b['ci_high'])}]" for b in e["best_per_dataset"]))
    out.append("Portability (AUROC within the best metric's 95% CI on every dataset; paired: CI of best − m holds 0):")
    for p in e["portability"]:
        plain = "portable" if p["portable"] else "not portable (breaks on " + ", ".join(p["breaks_on"]) + ")"
        paired = "yes" if p["paired_portable"] else "no (" + ", ".join(p["paired_breaks_on"]) + ")"
        out.append(f"  {p['metric']}: {plain}; paired: {paired}")
    t = e["kendall_tau"]
    out.append("Kendall τ-b between datasets' metric rankings (p):")
    out += _grid(["", *ds], [[a, *(("1" if i == j else f"{_f(t['tau'][i][j], 2)} ({_p(t['p'][i][j])})")
                                  for j in range(len(ds)))] for i, a in enumerate(ds)])
    w = e["kendall_w"]
    out.append(f"Kendall's W = {_f(w['w'])} over {w['n_items']} metrics × {w['n_raters']} datasets (null mean "
               f"{_f(w['null_mean'])}); rank-permutation p, concordance = {_p(w['p_concordance'])}, "
               f"discordance = {_p(w['p_discordance'])} ({w['n_perm']} permutations)")
    r = e["regret"]
    out.append("Leave-one-dataset-out regret (best AUROC − metric's, mean over held-out datasets [95% CI]):")
    out += _grid(["metric", "mean", "95% CI", "max", "worst on"],
                 [[f["metric"], _f(f["mean"]), f"[{_f(f['ci_low'])}, {_f(f['ci_high'])}]", _f(f["max"]),
                   f["worst_dataset"]] for f in r["fixed"]])
    s = r["selector"]
    out.append(f"  naive best-on-average selector: {_f(s['mean'])} [{_f(s['ci_low'])}, {_f(s['ci_high'])}]; "
               "picks " + ", ".join(f"{d}→{m}" for d, m in s["picks"].items()))
    out.append(f"  lowest-regret fixed metric: {r['lowest_regret_metric']}; selector − it = "
               f"{_f(s['minus_best_fixed'])} [{_f(s['minus_best_fixed_ci'][0])}, {_f(s['minus_best_fixed_ci'][1])}]")
    first = next((x for x in e["eps_regret"] if x["metrics"]), None)
    out.append("ε-regret: " + (f"smallest grid ε with a metric within ε of the best everywhere: {first['eps']:.2f} "
                               f"({', '.join(first['metrics'])})" if first else "no metric is within any grid ε of the "
                               f"best on every dataset (grid up to {e['eps_regret'][-1]['eps']:.2f})"))
    out.append("Paired best − rest [95% CI] (+/−: the CI excludes 0):")
    for d in ds:
        pr = [p for p in e["paired_best_vs_rest"] if p["dataset"] == d]
        if pr:
            out.append(f"  {d} (best {pr[0]['metric_a']}): " + "; ".join(
                f"{p['metric_b']} {p['diff']:+.3f} [{_f(p['ci_low'])}, {_f(p['ci_high'])}]{_SIGN[p['sign']]}"
                for p in pr))
    flips = e["sign_flips"]
    out.append("Sign flips (difference CI excludes 0 in opposite directions): " + (
        "none" if not flips else "; ".join(f"{f['metric_a']} − {f['metric_b']}: " + ", ".join(
            f"{d} {v:+.3f}" for d, v in {**f["a_better_on"], **f["b_better_on"]}.items()) for f in flips)))
    dc = e["decomposition"]
    out.append(f"Two-way decomposition of AUROC variance: dataset {_f(dc['share_dataset'], 2)}, metric "
               f"{_f(dc['share_metric'], 2)}, interaction {_f(dc['share_interaction'], 2)}; residual permutation "
               f"(dataset difficulty fixed) p_interaction = {_p(dc['p_interaction'])}, p_metric = {_p(dc['p_metric'])}")
    ba = {(b["scorer"], b["dataset"]): b for b in e["balanced_accuracy"]}
    out.append("Balanced accuracy, threshold chosen on the OTHER datasets of the construct (never on the slice):")
    out += _grid(["metric", *ds], [[m, *(_f(ba[(m, d)]["test_balanced_accuracy"]) for d in ds)] for m in e["metrics"]])
    out.append("Spearman ρ of AUROC vs mean evidence words / sentences across datasets (descriptive, "
               f"n = {len(ds)} datasets):")
    out.append("  " + "; ".join(f"{x['scorer']} {_f(x['rho_words'], 2)} / {_f(x['rho_sentences'], 2)}"
                                for x in e["length_correlates"]))
    return out


def _rename(obj: Any, names: Mapping[str, str]) -> Any:
    """A copy of a construct entry with every dataset name (as key or string value) shortened."""
    if isinstance(obj, dict):
        return {names.get(k, k): _rename(v, names) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rename(v, names) for v in obj]
    return names.get(obj, obj) if isinstance(obj, str) else obj


def format_transfer(results: dict) -> str:
    """The printed transfer report: AUPRC and evidence length per slice, then each construct's statistics."""
    tr = results.get("transfer")
    if not tr:
        return ""
    names = [s["scorer"] for s in results["scorers"]]
    out = ["", "AUPRC per slice (chance = prevalence) and evidence length (words / sentences, mean):"]
    out += _grid(["slice", "prev", *names, "words", "sents"],
                 [[s["slice"], _f(s["prevalence"], 2), *(_f(s["auprc"][n]["auprc"]) for n in names),
                   f"{s['evidence_length']['words_mean']:.0f}", f"{s['evidence_length']['sentences_mean']:.1f}"]
                  for s in tr["slices"]])
    for x in tr["excluded_slices"]:
        out.append(f"excluded from transfer: {x['slice']} ({x['reason']})")
    for c, e in tr["constructs"].items():
        out += [""] + format_construct(c, e)
    if not tr["constructs"]:
        out += ["", "transfer: no construct with a usable slice; nothing was pooled."]
    return "\n".join(out)
