"""The one console renderer: every table and summary a command prints, drawn from plain results.

One grid (`grid`) and one number format (report.fmt, where a missing value is `—`), so the terminal prints
numbers as the Markdown and HTML report do. `format_answer` is what `audit` and `demo` print first: per
construct the metric to use, whether it is portable and its leave-one-dataset-out regret, then the AUROC
table with its caveat marks. Everything here reads results as saved; nothing computes a statistic.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from attrib_audit.audit.systems import pick_ranker
from attrib_audit.report import fmt
from attrib_audit.report.verdict import pick

MISSING = fmt.DASH


def grid(head: Sequence[str] | None, rows: Sequence[Sequence[str]], *, indent: str = "", rule: bool = False,
         align: str = "") -> list[str]:
    """Columns padded to their widest cell (`align`: one '<' or '>' per column, default '<'), two spaces apart;
    `head` None: no header line; `rule`: a dashed line under the header."""
    lines = ([list(head)] if head is not None else []) + [list(r) for r in rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(lines[0]))] if lines else []
    sides = align.ljust(len(widths), "<")

    def line(cols: Sequence[str]) -> str:
        cells = (c.rjust(w) if a == ">" else c.ljust(w) for c, w, a in zip(cols, widths, sides))
        return (indent + "  ".join(cells)).rstrip()

    rule_line = [line(["-" * w for w in widths])] if rule and head is not None else []
    return [line(lines[0]), *rule_line, *map(line, lines[1:])] if head is not None else list(map(line, lines))


def _num(x: Any, digits: int = 3) -> str:
    return fmt.num(x, digits)


def _ci(r: Mapping[str, Any], key: str = "estimate") -> str:
    return fmt.ci(r[key], r["ci_low"], r["ci_high"])


def _signed(r: Mapping[str, Any]) -> str:
    """A difference with its CI, `+0.012 [-0.010, 0.034]`; `—` when there is none."""
    if r.get("diff") is None:
        return MISSING
    return f"{fmt.num(r['diff'], signed=True)} [{_num(r['ci_low'])}, {_num(r['ci_high'])}]"


# ---- audit and demo: the answer first ------------------------------------------------------------------------

def format_verdicts(results: Mapping[str, Any]) -> str:
    """Per construct: the metric to use, whether it is portable, and what it costs on a new dataset."""
    tr = results.get("transfer")
    if not tr:
        return ""
    out = ["Which metric to use, per construct (held-out regret: AUROC lost on a left-out dataset, mean [95% CI]):"]
    for c, e in tr["constructs"].items():
        if e["status"] != "ok":
            out.append(f"  {c}: no verdict — {e['reason']}")
            continue
        p, r = pick(e), e["regret"]["selector"]
        f, short = p.regret, short_names(e["datasets"])
        where = f"{len(e['datasets'])} datasets"
        if p.portable:
            head = f"  {c} ({where}): use {p.metric} — portable" + ("" if p.paired else " (not under the paired test)")
        else:
            head = f"  {c} ({where}): no metric is portable; lowest regret: {p.metric}"
        out.append(f"{head}; regret {fmt.ci(f['mean'], f['ci_low'], f['ci_high'])}, worst {_num(f['max'])} on "
                   f"{short.get(f['worst_dataset'], f['worst_dataset'])}; naive selector {fmt.ci(r['mean'], r['ci_low'], r['ci_high'])}")
    if tr["excluded_slices"]:
        out.append(f"  left out of transfer: {', '.join(x['slice'] for x in tr['excluded_slices'])} (reasons in the report)")
    if not tr["constructs"]:
        out.append("  no construct with a usable slice; nothing was pooled (declare constructs with --construct)")
    return "\n".join(out)


def format_table(results: Mapping[str, Any]) -> str:
    """AUROC [95% CI] per slice (rows) and scorer (columns), with n and the caveat marks ✂ ✗ ⊓."""
    names = [s["scorer"] for s in results["scorers"]]
    cell = {(r["scorer"], r["slice"]): r for r in results["auroc"]}
    trunc = {(r["scorer"], r["slice"]): r for r in results["truncation"]}
    clamped = {(r["scorer"], r["slice"]): r.get("n_clamped", 0) for r in results.get("failures", [])}
    rows = []
    for sl in results["slices"]:
        row = [sl["slice"], str(sl["n"]), str(sl["n_pos"])]
        for name in names:
            r = cell.get((name, sl["slice"]))
            if r is None or r["auroc"] is None:
                row.append("undefined (one class)" if sl["status"] == "one_class" else MISSING)
                continue
            t = trunc.get((name, sl["slice"]))
            mark = f" ✂{t['pairs_truncated']}" if t and t["pairs_truncated"] else ""
            mark += f" ✗{r['n_failed']}" if r.get("n_failed") else ""
            mark += f" ⊓{clamped[(name, sl['slice'])]}" if clamped.get((name, sl["slice"])) else ""
            row.append(_ci(r, "auroc") + mark)
        rows.append(row)
    notes = ["AUROC [95% clustered-bootstrap CI]; ✂k = k pairs cut at the scorer's window; ✗k = k failed rows excluded."]
    if any(clamped.values()):
        notes.append("⊓k = k judge answers outside [0, 1], clamped to the nearest end and kept.")
    for u in results.get("unavailable", []):
        notes.append(f"not run: {u['scorer']} ({u['reason']})")
    return "\n".join(grid(["slice", "n", "pos", *names], rows, rule=True) + [""] + notes)


def format_answer(results: Mapping[str, Any], verbose: bool = False) -> str:
    """What `audit` and `demo` print: the verdicts, the AUROC table, and with `verbose` every other section."""
    parts = [format_verdicts(results), format_table(results)]
    if results.get("systems"):
        parts.append(format_systems_brief(results["systems"]))
    if verbose:
        parts += [format_transfer(results), format_sensitivity(results)]
        if results.get("systems"):
            parts.append(format_systems(results["systems"]))
    return "\n\n".join(p.strip("\n") for p in parts if p)


# ---- transfer ---------------------------------------------------------------------------------------------------

_SIGN = {1: " +", 0: "", -1: " −"}


def short_names(datasets: Sequence[str]) -> dict[str, str]:
    """Drop a `dataset:` prefix every slice shares, for printing (results.json keeps full names)."""
    prefixes = {d.split(":", 1)[0] for d in datasets}
    if len(prefixes) == 1 and all(":" in d for d in datasets):
        return {d: d.split(":", 1)[1] for d in datasets}
    return {d: d for d in datasets}


def _rename(obj: Any, names: Mapping[str, str]) -> Any:
    """A copy of a construct entry with every dataset name (as key or string value) shortened."""
    if isinstance(obj, Mapping):
        return {names.get(k, k): _rename(v, names) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rename(v, names) for v in obj]
    return names.get(obj, obj) if isinstance(obj, str) else obj


def format_construct(c: str, e: Mapping[str, Any]) -> list[str]:
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
    out.append("Best per dataset: " + "; ".join(f"{b['dataset']}: {b['best']} {_ci(b, 'auroc')}"
                                                 for b in e["best_per_dataset"]))
    out.append("Portability (AUROC within the best metric's 95% CI on every dataset; paired: CI of best − m holds 0):")
    for p in e["portability"]:
        plain = "portable" if p["portable"] else "not portable (breaks on " + ", ".join(p["breaks_on"]) + ")"
        paired = "yes" if p["paired_portable"] else "no (" + ", ".join(p["paired_breaks_on"]) + ")"
        out.append(f"  {p['metric']}: {plain}; paired: {paired}")
    t = e["kendall_tau"]
    out.append("Kendall τ-b between datasets' metric rankings (p):")
    out += grid(["", *ds], [[a, *(("1" if i == j else f"{_num(t['tau'][i][j], 2)} ({fmt.pvalue(t['p'][i][j])})")
                                 for j in range(len(ds)))] for i, a in enumerate(ds)], indent="  ")
    w = e["kendall_w"]
    out.append(f"Kendall's W = {_num(w['w'])} over {w['n_items']} metrics × {w['n_raters']} datasets (null mean "
               f"{_num(w['null_mean'])}); rank-permutation p, concordance = {fmt.pvalue(w['p_concordance'])}, "
               f"discordance = {fmt.pvalue(w['p_discordance'])} ({w['n_perm']} permutations)")
    r = e["regret"]
    out.append("Leave-one-dataset-out regret (best AUROC − metric's, mean over held-out datasets [95% CI]):")
    out += grid(["metric", "mean", "95% CI", "max", "worst on"],
                [[f["metric"], _num(f["mean"]), f"[{_num(f['ci_low'])}, {_num(f['ci_high'])}]", _num(f["max"]),
                  f["worst_dataset"]] for f in r["fixed"]], indent="  ")
    s = r["selector"]
    out.append(f"  naive best-on-average selector: {_ci(s, 'mean')}; "
               "picks " + ", ".join(f"{d}→{m}" for d, m in s["picks"].items()))
    gap = s["minus_best_fixed_ci"]
    out.append(f"  lowest-regret fixed metric: {r['lowest_regret_metric']}; selector − it = "
               f"{fmt.ci(s['minus_best_fixed'], gap[0], gap[1])}")
    first = next((x for x in e["eps_regret"] if x["metrics"]), None)
    out.append("ε-regret: " + (f"smallest grid ε with a metric within ε of the best everywhere: {first['eps']:.2f} "
                               f"({', '.join(first['metrics'])})" if first else "no metric is within any grid ε of the "
                               f"best on every dataset (grid up to {e['eps_regret'][-1]['eps']:.2f})"))
    out.append("Paired best − rest [95% CI] (+/−: the CI excludes 0):")
    for d in ds:
        pr = [p for p in e["paired_best_vs_rest"] if p["dataset"] == d]
        if pr:
            out.append(f"  {d} (best {pr[0]['metric_a']}): " + "; ".join(
                f"{p['metric_b']} {_signed(p)}{_SIGN[p['sign']]}"
                for p in pr))
    flips = e["sign_flips"]
    out.append("Sign flips (difference CI excludes 0 in opposite directions): " + (
        "none" if not flips else "; ".join(f"{f['metric_a']} − {f['metric_b']}: " + ", ".join(
            f"{d} {v:+.3f}" for d, v in {**f["a_better_on"], **f["b_better_on"]}.items()) for f in flips)))
    dc = e["decomposition"]
    out.append(f"Two-way decomposition of AUROC variance: dataset {_num(dc['share_dataset'], 2)}, metric "
               f"{_num(dc['share_metric'], 2)}, interaction {_num(dc['share_interaction'], 2)}; residual permutation "
               f"(dataset difficulty fixed) p_interaction = {fmt.pvalue(dc['p_interaction'])}, "
               f"p_metric = {fmt.pvalue(dc['p_metric'])}")
    ba = {(b["scorer"], b["dataset"]): b for b in e["balanced_accuracy"]}
    out.append("Balanced accuracy, threshold chosen on the OTHER datasets of the construct (never on the slice):")
    out += grid(["metric", *ds], [[m, *(_num(ba[(m, d)]["test_balanced_accuracy"]) for d in ds)] for m in e["metrics"]],
                indent="  ")
    out.append("Spearman ρ of AUROC vs mean evidence words / sentences across datasets (descriptive, "
               f"n = {len(ds)} datasets):")
    out.append("  " + "; ".join(f"{x['scorer']} {_num(x['rho_words'], 2)} / {_num(x['rho_sentences'], 2)}"
                                for x in e["length_correlates"]))
    return out


def format_transfer(results: Mapping[str, Any]) -> str:
    """The transfer detail: AUPRC and evidence length per slice, then each construct's statistics."""
    tr = results.get("transfer")
    if not tr:
        return ""
    names = [s["scorer"] for s in results["scorers"]]
    out = ["AUPRC per slice (chance = prevalence) and evidence length (words / sentences, mean):"]
    out += grid(["slice", "prev", *names, "words", "sents"],
                [[s["slice"], _num(s["prevalence"], 2), *(_num(s["auprc"][n]["auprc"]) for n in names),
                  f"{s['evidence_length']['words_mean']:.0f}", f"{s['evidence_length']['sentences_mean']:.1f}"]
                 for s in tr["slices"]], indent="  ")
    for x in tr["excluded_slices"]:
        out.append(f"excluded from transfer: {x['slice']} ({x['reason']})")
    for c, e in tr["constructs"].items():
        out += [""] + format_construct(c, e)
    if not tr["constructs"]:
        out += ["", "transfer: no construct with a usable slice; nothing was pooled."]
    return "\n".join(out)


# ---- sensitivity ------------------------------------------------------------------------------------------------

def _diff(r: Mapping[str, Any]) -> str:
    return _signed(r) + (" *" if r.get("diff") is not None and r.get("excludes_zero") else "")


def _changed(v: Mapping[str, Any]) -> list[str]:
    return [k.split("_")[0] for k in ("recommended_changed", "verdict_changed", "portability_changed") if v[k]]


def _verdict_lines(rows: list[dict], what: str) -> list[str]:
    out = []
    for v in rows:
        b, a = v["before"], v["after"]
        flags = _changed(v)
        out.append(f"  {v['construct']}{' (' + v['scorer'] + ' → ' + v['chunked'] + ')' if 'chunked' in v else ''}: "
                   f"{b['recommended']} [{b['verdict']}] → {a['recommended']} [{a['verdict']}]; portable "
                   f"{', '.join(b['portable']) or 'none'} → {', '.join(a['portable']) or 'none'}; "
                   + (f"CHANGED ({', '.join(flags)})" if flags else f"unchanged {what}"))
    return out


def format_sensitivity(results: Mapping[str, Any]) -> str:
    """The sensitivity detail: window, chunking, matched length, halves, single datasets, exchangeability."""
    sen = results.get("sensitivity")
    if not sen:
        return ""
    out = ["== sensitivity: length, truncation and single-dataset robustness (* = 95% CI excludes 0) =="]
    w = sen.get("window")
    if w:
        out.append(f"Window sensitivity: scorers rescored at {w['window']} tokens (AUROC at own window → at "
                   f"{w['window']}; alt − own [95% CI]; pairs cut own → alt):")
        if w["rows"]:
            out += grid(["slice", "scorer", "own", f"@{w['window']}", "difference", "cut"],
                        [[r["slice"], r["scorer"], _num(r["auroc"]), _num(r["auroc_alt"]), _diff(r),
                          f"{r['pairs_truncated']} → {r['pairs_truncated_alt']}"] for r in w["rows"]], indent="  ")
        for x in w["skipped"]:
            out.append(f"  not varied: {x['scorer']} ({x['reason']})")
        flips = [r for r in w["ranking"] if r["changed"]]
        out.append("  metric ranking changed on: " + ("; ".join(
            f"{r['slice']} ({' > '.join(r['ranking'])} → {' > '.join(r['ranking_alt'])})" for r in flips)
            if flips else "no slice"))
        out += _verdict_lines(w["verdicts"], f"at {w['window']} tokens")
    ch = sen.get("chunking")
    if ch:
        out.append("Chunked long evidence (chunked − truncated AUROC [95% CI]; pairs cut truncated → chunked; "
                   "windows per pair):")
        out += grid(["slice", "scorer", "truncated", "chunked", "difference", "cut", "windows"],
                    [[r["slice"], f"{r['scorer']} → {r['chunked']}", _num(r["auroc"]), _num(r["auroc_chunked"]),
                      _diff(r), f"{r['pairs_truncated']} → {r['pairs_truncated_chunked']}", f"{r['mean_chunks']:.2f}"]
                     for r in ch["rows"]], indent="  ")
        out.append("  verdict with the chunked variant in place of the truncated one:")
        out += _verdict_lines(ch["verdicts"], "with chunking")
    ln = sen["length"]
    for b in ln["bins"]:
        e = b["edges"]
        labels = [f"{e[j]:.0f}–{e[j + 1]:.0f}" if len(e) > 1 else f"{e[0]:.0f}" for j in range(b["n_bins"])]
        out.append(f"Matched length, construct '{b['construct']}': AUROC (n) per bin of evidence words, bins shared "
                   f"by its datasets ({', '.join(labels)}):")
        cell = {(c["dataset"], c["scorer"], c["bin"]): c for c in b["cells"]}
        short = short_names(list(dict.fromkeys(c["dataset"] for c in b["cells"])))
        out += grid(["dataset", "scorer", *labels],
                    [[short[d], s, *(f"{_num(cell[(d, s, j)]['auroc'])} ({cell[(d, s, j)]['n']})"
                                     for j in range(b["n_bins"]))]
                     for d, s in dict.fromkeys((c["dataset"], c["scorer"]) for c in b["cells"])], indent="  ")
        out.append("  best per bin: " + "; ".join(
            f"{labels[x['bin']]}: " + (", ".join(f"{short[d]}→{m}" for d, m in x["best_per_dataset"].items()) or "none")
            + (" (same on all)" if x["same_best"] and x["best_per_dataset"] else "") for x in b["best"]))
    out.append("Short vs long halves (split at each slice's median evidence words): long − short AUROC [95% CI]:")
    names = [s["scorer"] for s in ln["halves"][0]["scorers"]] if ln["halves"] else []
    out += grid(["slice", "median", "best short→long", *names],
                [[h["slice"], f"{h['median_words']:.0f}", f"{h['best_short']}→{h['best_long']}",
                  *(_diff(s) for s in h["scorers"])] for h in ln["halves"]], indent="  ")
    for x in sen["lodo"]:
        if x["status"] != "ok":
            out.append(f"Leave-one-dataset-out verdict, '{x['construct']}': not computed ({x['reason']})")
            continue
        f = x["full"]
        out.append(f"Leave-one-dataset-out verdict, '{x['construct']}': all datasets → {f['recommended']} "
                   f"[{f['verdict']}], portable {', '.join(f['portable']) or 'none'}; "
                   + ("stable under every drop" if x["stable"] else "CHANGES when a dataset is dropped"))
        out += grid(["dropped", "recommended", "verdict", "portable", "changed"],
                    [[d["dropped"], d["recommended"], d["verdict"], ", ".join(d["portable"]) or "none",
                      ", ".join(_changed(d)) or MISSING] for d in x["drops"]], indent="  ")
    for x in sen["exchangeability"]:
        out.append(f"Exchangeability permutation of dataset assignment, '{x['construct']}' (clusters shuffled across "
                   f"datasets, {x['n_perm']} permutations): p_interaction = {fmt.pvalue(x['p_interaction'])}, "
                   f"p_dataset = {fmt.pvalue(x['p_dataset'])}; residual permutation p_interaction = "
                   f"{fmt.pvalue(x['p_interaction_residual'])}")
        out.append(f"  caveat: {x['caveat']}")
    sp = sen["length_spearman"]
    if sp:
        names = list(dict.fromkeys(r["scorer"] for r in sp))
        cell = {(r["slice"], r["scorer"]): r for r in sp}
        out.append("Spearman ρ of score with evidence words within each label class (label 0 / label 1):")
        out += grid(["slice", *names], [[sl, *(f"{_num(cell[(sl, n)]['rho_neg'], 2)} / {_num(cell[(sl, n)]['rho_pos'], 2)}"
                                              for n in names)] for sl in dict.fromkeys(r["slice"] for r in sp)],
                    indent="  ")
    return "\n".join(out)


# ---- system level: do the metrics rank the systems as the labels do? ----------------------------------------------

def _est(e: Mapping[str, Any] | None, digits: int = 3, signed: bool = False) -> str:
    """An Estimate (stats.types) as `0.532 [0.301, 0.640]`."""
    return MISSING if not e else fmt.ci(e["estimate"], e["ci_low"], e["ci_high"], digits, signed)


def _inputs(entry: Mapping[str, Any]) -> str:
    d = entry["design"]
    return (f"{entry['n_systems']} systems × {d['n_used']} shared inputs" if d["paired"] else
            f"{entry['n_systems']} systems, inputs NOT shared")


def format_systems_brief(block: Mapping[str, Any]) -> str:
    """Per slice: the metric to rank systems with, its τ-b and pairwise accuracy [CI], the reversals (a few lines)."""
    out = ["System level: which metric ranks the systems as the human labels do (τ-b as measured with these inputs; "
           "ceiling = a ranking by the true human pass rates):"]
    for e in block["slices"]:
        if e["status"] != "ok":
            out.append(f"  {e['slice']}: not computed ({e['reason']})")
            continue
        p = pick_ranker(e)
        if p.metric is None:
            out.append(f"  {e['slice']} ({_inputs(e)}): no recommendation ({p.caveat})")
            continue
        tied = f"; not separable from {', '.join(p.tied_with)}" if p.tied_with else ""
        out.append(f"  {e['slice']} ({_inputs(e)}): rank with {p.metric} — τ-b {_est(p.tau)}, pairwise accuracy "
                   f"{_est(p.pairwise_accuracy)}{tied}; ceiling τ-b {_est(p.ceiling['tau'])}")
        clusters = e["human_clusters"]
        out.append("    reversals (labels prefer one system, the metric the other): "
                   + ", ".join(f"{m} {k}" for m, k in p.reversals.items())
                   + f"; the labels resolve {len(clusters['resolved'])} of {clusters['n_pairs']} system pairs")
        if e["design"]["caveat"]:
            out.append(f"    caveat: {e['design']['caveat']}")
    return "\n".join(out)


def format_systems(block: Mapping[str, Any]) -> str:
    """Every system-level table of every slice: per system, agreement with the ceiling, item vs system, metric
    differences, reversals, the human significance clusters."""
    out = [f"== system level ({block['level']:.0%} CIs, {block['n_boot']} resamples of "
           f"{' and '.join(reversed(block['resample']))}, seed {block['seed']}) ==",
           f"  {block['estimand']}.", f"  {block['pairwise_accuracy']}.", f"  Pass rates: {block['threshold_rule']}."]
    for e in block["slices"]:
        out.append("")
        if e["status"] != "ok":
            out.append(f"-- {e['slice']}: not computed ({e['reason']})")
            continue
        out.append(f"-- {e['slice']}: {_inputs(e)} ({e['n_rows']} rows)")
        out += [f"  note: {n}" for n in e["notes"]]
        metrics = list(e["systems"][0]["mean"]) if e["systems"] else []
        passed = list(e["systems"][0]["pass_rate"]) if e["systems"] else []
        out.append("Per system, highest human pass rate first: human pass rate and each metric's mean score [95% CI "
                   "over inputs]" + (" and pass rate" if passed else "") + ":")
        order = sorted(e["systems"], key=lambda r: -(r["human"]["estimate"] if fmt.finite(r["human"]["estimate"]) else -1))
        out += grid(["system", "inputs", "human", *metrics, *(f"{m} pass" for m in passed)],
                    [[r["system"], str(r["n_inputs"]), _est(r["human"]), *(_est(r["mean"][m]) for m in metrics),
                      *(_est(r["pass_rate"][m]) for m in passed)] for r in order], indent="  ")
        c = e["human_clusters"]
        out.append(f"Human significance clusters (best first; within one the labels cannot order the systems; "
                   f"{len(c['resolved'])} of {c['n_pairs']} pairs resolved):")
        out.append("  " + " > ".join("{" + " ".join(k) + "}" for k in c["clusters"]))
        out.append("Agreement with the human ranking (summary: mean score, or pass rate at the transferred threshold):")
        rows = [[a["metric"], a["summary"], _est(a["tau"]), _est(a["pairwise_accuracy"]), _est(a["acc_eq"]),
                 _est(a["pearson"]), str(a["metric_ties"])] for a in e["agreement"]]
        ceil = e["ceiling"]
        rows.append(["ceiling", "true rates", _est(ceil["tau"]), _est(ceil["pairwise_accuracy"]), _est(ceil["acc_eq"]),
                     MISSING, MISSING])
        out += grid(["metric", "summary", "τ-b", "pairwise acc", "acc_eq", "Pearson r", "metric ties"], rows,
                    indent="  ")
        ties = e["agreement"][0]["human_ties"] if e["agreement"] else 0
        out.append(f"  {ties} system pair(s) tie on the human pass rate (left out of pairwise accuracy)")
        out.append("Item level vs system level (AUROC over pairs beside τ-b over systems, mean score):")
        out += grid(["metric", "AUROC", "τ-b", "note"],
                    [[x["metric"], fmt.ci(x["auroc"], x["auroc_ci_low"], x["auroc_ci_high"]), _est(x["tau"]),
                      x["note"] or "agree"] for x in e["item_vs_system"]], indent="  ")
        if e["differences"]:
            out.append("Metric vs metric (a − b, paired over the same draws; * = CI excludes 0):")
            star = lambda d: " *" if d["ci_low"] is not None and (d["ci_low"] > 0 or d["ci_high"] < 0) else ""  # noqa: E731
            out += grid(["a − b", "summary", "τ-b", "pairwise acc"],
                        [[f"{d['metric_a']} − {d['metric_b']}", d["summary"], _est(d["tau"], signed=True) + star(d["tau"]),
                          _est(d["pairwise_accuracy"], signed=True) + star(d["pairwise_accuracy"])]
                         for d in e["differences"]], indent="  ")
        out.append("Reversals (labels prefer A, the metric B; both paired CIs exclude 0; not corrected for the "
                   "number of pairs):")
        if e["reversals"]:
            out += grid(["metric", "summary", "labels prefer", "metric prefers", "human rate A − B", "metric A − B"],
                        [[r["metric"], r["summary"], r["human_prefers"], r["metric_prefers"],
                          _est(r["human_difference"], signed=True), _est(r["metric_difference"], signed=True)]
                         for r in e["reversals"]], indent="  ")
        else:
            out.append("  none")
    return "\n".join(out)


def format_ranker(r: Mapping[str, Any]) -> str:
    """One `select --level system` pick (audit.systems.RankerPick.to_dict())."""
    lines = [f"slice '{r['slice']}': metric to rank systems with"]
    if r["metric"] is None:
        return "\n".join(lines + [f"  no recommendation: {r['caveat']}"])
    lines.append(f"  recommended: {r['metric']}   [{r['verdict']}]")
    lines.append(f"  τ-b {_est(r['tau'])}, pairwise accuracy {_est(r['pairwise_accuracy'])}; ceiling τ-b "
                 f"{_est(r['ceiling']['tau'])}")
    lines.append(f"  candidates: {', '.join(r['candidates'])}; reversals: "
                 + ", ".join(f"{m} {k}" for m, k in r["reversals"].items()))
    lines.append(f"  caveat: {r['caveat']}")
    return "\n".join(lines)


# ---- select, agree ----------------------------------------------------------------------------------------------

def format_recommendation(r: Mapping[str, Any]) -> str:
    """One `select` recommendation (audit.select.Recommendation.to_dict())."""
    lines = [f"construct '{r['construct']}' ({len(r['datasets'])} datasets: {', '.join(r['datasets'])})"]
    if r["metric"] is None:
        return "\n".join(lines + [f"  no recommendation: {r['caveat']}"])
    if r["selector_regret"] is None:  # audited on the target dataset itself
        return "\n".join(lines + [f"  recommended for {r['datasets'][0]}: {r['metric']}   [{r['verdict']}]",
                                   f"  candidates: {', '.join(r['candidates'])}", f"  caveat: {r['caveat']}"])
    lines.append(f"  recommended for a new dataset: {r['metric']}   [{r['verdict']}]")
    lines.append(f"  candidates: {', '.join(r['candidates'])} (regret is against the best candidate per dataset); "
                 f"portable: {', '.join(r['portable_metrics']) or 'none'}")
    ci = r["selector_regret_ci"]
    lines.append(f"  expected regret on a new dataset (leave-one-dataset-out selector): "
                 f"{fmt.ci(r['selector_regret'], ci[0], ci[1])}")
    rows = r["rows"].values()
    lost = {m: sum(v["dropped_by"][m] for v in rows) for m in r["candidates"]}
    if any(lost.values()):
        lines.append(f"  compared on the rows every candidate scored ({sum(v['n_used'] for v in rows)} of "
                     f"{sum(v['n'] for v in rows)}); failures removed "
                     + ", ".join(f"{m} {k}" for m, k in lost.items() if k))
    lines.append(f"  caveat: {r['caveat']}")
    return "\n".join(lines)


def format_agreement(res: Mapping[str, Any]) -> str:
    """Cohen's κ per slice (audit.agreement.agreement's result)."""
    rows = []
    for row in [{"slice": "ALL", **res["overall"]}, *res["slices"]]:
        cm = row["confusion"]["counts"]
        rows.append([row["slice"], "undefined" if row["kappa"] is None else _ci(row, "kappa"), str(row["n"]),
                     str(row["n_excluded"]), f"[[{cm[0][0]}, {cm[0][1]}], [{cm[1][0]}, {cm[1][1]}]]"])
    return "\n".join([f"Cohen's kappa: {res['a']} ({res['a_from']}) vs {res['b']} ({res['b_from']})",
                      *grid(["slice", "kappa [95% CI]", "n", "excluded", f"confusion (rows {res['a']}, cols {res['b']}; 0, 1)"],
                            rows, indent="  ")])


# ---- the use cases: probe, provenance, plan ---------------------------------------------------------------------

def format_probe_table(results: Mapping[str, Any]) -> str:
    """Metric rows: base mean, tuned mean, tuned − base [CI]; then the rewrite statistics and the verdict."""
    rows = []
    for r in results["metrics"]:
        d = r["diff"]
        rows.append([r["metric"], _num(r["base"]["mean"]), _num(r["tuned"]["mean"]),
                     fmt.ci(d["mean"], d["ci_low"], d["ci_high"], signed=True) + (" *" if d["excludes_zero"] else "")])
    rw, cov = results["rewrite"], results["coverage"]
    out = [*grid(["metric", "base", "tuned", "tuned − base [95% CI]"], rows, rule=True), "",
           "rewrite detection (tuned vs base, same example):"]
    out += grid(None, [[label, fmt.ci(rw[name]["mean"], rw[name]["ci_low"], rw[name]["ci_high"])] for name, label in
                       (("altered", "share altered"), ("token_jaccard", "mean token Jaccard"),
                        ("heavy_rewrite", f"share with Jaccard < {results['config']['rewrite_jaccard_threshold']}"))],
                indent="  ")
    out += ["", f"{cov['n_compared']} examples compared; skipped: {cov['n_only_base']} only in base, "
            f"{cov['n_only_tuned']} only in tuned, {cov['n_unanswered']} answered by neither.",
            "* = 95% paired clustered-bootstrap CI excludes 0.", results["verdict"]]
    return "\n".join(out)


def _spread(s: Mapping[str, Any]) -> str:
    return f"{_num(s['mean'])} ± {_num(s['sd'])}"


def format_provenance(results: Mapping[str, Any]) -> str:
    """Per dataset: top-1 accuracy [CI] per ranker vs the random baseline, confusable results, the α sweep."""
    lines: list[str] = []
    for d in results["datasets"]:
        clean, conf = d["clean"], d["confusable"]
        lines.append(f"== {d['dataset']}: {d['n_examples']} examples, {d['n_units']} units, "
                     f"{clean['mean_pool_size']:.1f} passages per unit; skipped: {d['skipped'] or 'none'}")
        head = ["ranker", "clean top-1 [95% CI]", "vs random", "vs lexical [95% CI]"]
        if conf["summary"]:
            head += [f"confusable k={conf['k']} top-1 (mean ± sd, {conf['seeds']} seeds)", "fooled (mean ± sd)"]
        rows = []
        base = clean["random_baseline"]["estimate"]
        for name, r in clean["rankers"].items():
            row = [name, _ci(r["top1"]), fmt.num(r["top1"]["estimate"] - base, signed=True),
                   _ci(r["vs_lexical"]) if "vs_lexical" in r else MISSING]
            if conf["summary"]:
                row += [_spread(conf["summary"][name]["top1"]), _spread(conf["summary"][name]["fooled"])]
            rows.append(row)
        rb = ["random", _ci(clean["random_baseline"]), "", ""]
        if conf["summary"]:
            rb += [_spread(conf["random_baseline"]), ""]
        lines += grid(head, rows + [rb], rule=True)
        sw = d.get("alpha_sweep")
        if sw:
            lines += ["", f"alpha sweep: {sw['formula']}"]
            s = sw["series"]
            conf_cols = "confusable_top1_mean" in s
            rows = [[f"{a:.1f}", _ci(c)] + ([f"{_num(s['confusable_top1_mean'][i])} ± {_num(s['confusable_top1_sd'][i])}",
                                            _num(s["confusable_fooled_mean"][i])] if conf_cols else [])
                    for i, (a, c) in enumerate(zip(sw["alpha"], sw["clean"]))]
            lines += grid(["alpha", "clean top-1 [95% CI]"] + (["confusable top-1", "fooled"] if conf_cols else []),
                          rows, rule=True)
        lines.append("")
    lines.append("top-1 = share of units whose best-scored passage is gold; fooled = share whose best is a distractor "
                 "from another example; CIs: clustered bootstrap over example groups.")
    for u in results.get("unavailable", []):
        lines.append(f"not run: {u['ranker']} ({u['reason']})")
    for sig, t in results.get("embedding_truncation", {}).items():
        if t["texts_truncated"]:
            lines.append(f"truncation: {t['texts_truncated']} of {t['texts']} texts cut at {t['window']} tokens "
                         f"({t['tokens_truncated']} tokens) by {sig}")
    return "\n".join(lines)


def format_plan(plan: Mapping[str, Any]) -> str:
    """One scenario of `plan` (validate.plan.plan): the simulated curve and the sample size it recommends."""
    best, runner = plan["best"], plan["runner"]
    m = plan["pairs_per_cluster"]
    lines = [f"plan for {plan['title']}: best metric {best} (AUROC {plan['best_auroc']:.3f})",
             *(f"  {n}" for n in plan["notes"]),
             f"  {m} pair{'s' if m > 1 else ''} per cluster, intra-cluster correlation {plan['icc']:.2f}; "
             f"{plan['sims']} simulated samples × {plan['n_boot']} clustered-bootstrap resamples per n"]
    head = ["n pairs", f"half-width({best})"] + ([f"power({best} > {runner})"] if runner is not None else [])
    rows = [[str(r["n"]), _num(r["half_width"]), *([_num(r["power"], 2)] if runner is not None else [])]
            + ([f"({r['undefined']} one-class samples)"] if r["undefined"] else []) for r in plan["rows"]]
    width = len(head) + any(r["undefined"] for r in plan["rows"])
    lines += grid(head + [""] * (width - len(head)), [r + [""] * (width - len(r)) for r in rows], indent="  ",
                  align=">" * len(head))
    goals = " and ".join(plan["goals"])
    if plan["recommended_n"] is not None:
        lines.append(f"  recommendation: label {plan['recommended_n']} pairs ({goals})")
    else:
        lines.append(f"  recommendation: more than {plan['rows'][-1]['n']} pairs are needed for {goals}; "
                     "widen --grid or relax the targets")
    if "hanley_mcneil_n" in plan:
        lines.append(f"  cross-check: the Hanley–McNeil formula (independent pairs) needs n ≈ {plan['hanley_mcneil_n']}")
    return "\n".join(lines)


def format_gate_plan(plan: Mapping[str, Any]) -> str:
    """One slice and scorer of `plan` with a gate target (validate.plan.gate_plans)."""
    head = f"plan for {plan['title']}: a threshold certified for {plan['target']} at delta {plan['delta']:g} " \
           f"(unit: {plan['unit']}; {plan['n']} pairs" + (f", {plan['n_failed']} failed" if plan["n_failed"] else "") + ")"
    if plan["certified_threshold"] is not None:
        return f"{head}\n  already certified: t={_threshold(plan['certified_threshold'])} (attrib-audit threshold gives its rates)"
    lines = [head, f"  not certified: {plan['reason']}"]
    for key, what in (("fewest_labels", "the cheapest threshold"), ("label_need", "the loosest threshold under the target")):
        n = plan[key]
        if n:
            lines.append(f"  {what} t={_threshold(n['threshold'])} ({n['unit']}: risk {_num(n['risk'])}): "
                         + (f"label {n['labels_needed']} pairs in all ({n['more_labels']} more), {n['assumption']}"
                            if n["labels_needed"] is not None else "no number of labels certifies it (risk not below the target)"))
    sim = plan["simulated"]
    if sim:
        lines.append(f"  simulated: {sim['sims']} samples of {sim['n']} pairs from this slice's scores "
                     f"({sim['pairs_per_cluster']} per cluster, intra-cluster correlation {sim['icc']:.2f}) certify a "
                     f"threshold in {fmt.pct(sim['certified_share'])} of draws")
    if not plan["fewest_labels"]:
        lines.append("  recommendation: no number of labels certifies this target on data like these")
    return "\n".join(lines)


# ---- threshold: deployable gates (audit.thresholds) ----------------------------------------------------------------

RATE_NAMES = {"false_pass": "false-pass", "precision": "precision", "catch": "catch"}


def _threshold(t: Any) -> str:
    return fmt.threshold(t)


def _rate(rates: Mapping[str, Any] | None, kind: str) -> str:
    return MISSING if not rates else _ci(rates[kind])


def _held_out(e: Mapping[str, Any], which: str, kind: str) -> str:
    """The cross-fitted rate of the certified or naive threshold, with the folds that fitted one when not all did."""
    h = e["held_out"]
    if not h or e[f"{which}_threshold"] is None:
        return MISSING
    if not h[which]:  # e.g. certified on the whole slice, but no fold's training part has enough labels
        return f"{MISSING} (0/{h['folds']} folds)" if h["folds"] else MISSING
    done = h[f"{which}_folds"]
    return _rate(h[which], kind) + (f" ({done}/{h['folds']} folds)" if done < h["folds"] else "")


def _more_labels(e: Mapping[str, Any]) -> str:
    if e["certified_threshold"] is not None or e["status"] != "ok":
        return MISSING
    f = e["fewest_labels"]
    if not f or f["more_labels"] is None:
        return "no amount"
    return f"+{f['more_labels']} (t={_threshold(f['threshold'])})"


_SHORT = (("too few labels", "too few labels"), ("one class", "one class"), ("no threshold meets", "unmet in-sample"),
          ("not certified", "not certified"), ("no scores", "no scores"))


def _short_reason(reason: str | None) -> str:
    """The kind of a certificate's one-line reason, for a table cell (the line itself is printed below the table)."""
    return next((short for start, short in _SHORT if (reason or "").startswith(start)), (reason or MISSING).split(":")[0])


def _by_construct(entries: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for e in entries:
        out.setdefault(e["construct"], []).append(e)
    return out


def _units(rows: Sequence[Mapping[str, Any]]) -> str:
    units = sorted({e["unit"] for e in rows if e["unit"]})
    return "/".join(units) or MISSING


def _transfer_counts(rows: Sequence[Mapping[str, Any]], which: str) -> tuple[int, int]:
    cells = [c for e in rows if e["transfer"] for c in e["transfer"][which] if not c["in_sample"]]
    return sum(c["broken"] for c in cells), len(cells)


def format_threshold_matrix(rows: Sequence[Mapping[str, Any]], which: str, kind: str,
                            names: Mapping[str, str]) -> list[str]:
    """One transfer matrix: rows the slice a threshold was fitted on, columns the slice it is applied to."""
    slices = rows[0]["transfer"]["slices"]
    body = []
    for e in rows:
        cells = {c["applied_to"]: c for c in e["transfer"][which]}
        if not cells:
            continue
        body.append([f"{names[e['slice']]} (t={_threshold(e[f'{which}_threshold'])})",
                     *(_ci(cells[s][kind]) + (" !" if cells[s]["broken"] else "") + (" ·" if cells[s]["in_sample"] else "")
                       for s in slices)])
    if not body:
        return [f"    {which}: no slice has a {which} threshold"]
    return [f"    {which} thresholds:"] + grid(["fitted on \\ applied to", *(names[s] for s in slices)], body,
                                                indent="      ")


def format_thresholds(results: Mapping[str, Any], verbose: bool = False) -> str:
    """What `threshold` prints: per construct and slice the deployable threshold or why none, with held-out rates;
    `verbose` adds every reason, the certificates, the transfer matrices and calibration."""
    cfg = results["config"]
    t = cfg["target"]
    kind = t["kind"]
    rate = RATE_NAMES[kind]
    sign = "≤" if kind == "false_pass" else "≥"
    out = [f"Deployable thresholds (pass when score ≥ t): {rate} {sign} {t['level']:g} with probability ≥ "
           f"{1 - cfg['delta']:g} (Learn-then-Test). held-out = cross-fitted on whole groups; +labels = the fewest "
           "more labelled pairs that would certify some threshold, at the rates seen (-v: what looser ones need)."]
    for c, rows in _by_construct(results["entries"]).items():
        order = {sl: i for i, sl in enumerate(dict.fromkeys(e["slice"] for e in rows))}
        rows = sorted(rows, key=lambda e: order[e["slice"]])  # per slice, its scorers in the file's order
        names = short_names(list(dict.fromkeys(e["slice"] for e in rows)))
        out.append(f"\nconstruct {c} (unit of exchangeability: {_units(rows)}):")
        out += grid(["slice", "scorer", "certified t", f"held-out {rate}", "+labels", "naive t", f"in-sample {rate}",
                     f"held-out {rate}"],
                    [[names[e["slice"]], e["scorer"],
                      _threshold(e["certified_threshold"]) if e["certified_threshold"] is not None
                      else "none: " + _short_reason(e["certified_reason"]),
                      _held_out(e, "certified", kind), _more_labels(e), _threshold(e["naive_threshold"]),
                      _rate(e["in_sample"]["naive"], kind), _held_out(e, "naive", kind)] for e in rows],
                    indent="  ", rule=True)
        why: dict[tuple[str, str], list[str]] = {}
        for e in rows:
            if e["certified_threshold"] is None:
                why.setdefault((e["slice"], e["certified_reason"]), []).append(e["scorer"])
        scorers = list(dict.fromkeys(e["scorer"] for e in rows))
        for (sl, reason), who in why.items():
            out.append(f"  {names[sl]} ({'every scorer' if len(who) == len(scorers) > 1 else ', '.join(who)}): "
                       f"{reason}")
        counts = [(s, _transfer_counts([e for e in rows if e["scorer"] == s], "certified"),
                   _transfer_counts([e for e in rows if e["scorer"] == s], "naive")) for s in scorers]
        if any(n for _, (_, n), (_, m) in counts for n in (n, m)):
            out.append("  transfer to the other slices, cells whose CI breaks the target: " + "; ".join(
                f"{s} certified {b}/{n}, naive {b2}/{n2}" for s, (b, n), (b2, n2) in counts)
                + ("" if verbose else " (-v: the matrices)"))
        elif rows[0]["transfer_reason"]:
            out.append(f"  transfer: {rows[0]['transfer_reason']}")
        if verbose:
            out += _threshold_details(rows, kind, names, scorers)
    if not verbose:
        out.append("\n-v: every reason, certificate, label count, transfer matrix and the calibration (ECE)")
    return "\n".join(out)


def _threshold_details(rows: Sequence[Mapping[str, Any]], kind: str, names: Mapping[str, str],
                       scorers: Sequence[str]) -> list[str]:
    out = ["  assumption: " + a for a in dict.fromkeys(e["assumption"] for e in rows if e["assumption"])]
    for e in rows:
        head = f"  {names[e['slice']]} {e['scorer']}: n {e['n']} ({e['n_pos']} supported, {e['n_groups']} groups"
        head += f", {e['n_failed']} failed" if e["n_failed"] else ""
        head += ", weighted" if e["weighted"] else ""
        out.append(head + ")")
        c = e["certificate"]
        if c and c["threshold"] is not None:
            out.append(f"    certified t={c['threshold']!r}: {RATE_NAMES[kind]} {_num(c['certified_rate'])} in-sample on "
                       f"{c['n_effective']:.4g} {c['unit']}s that count, risk bound {_num(c['upper_bound'])} ≤ "
                       f"{_num(1 - e['target']['level'] if kind != 'false_pass' else e['target']['level'])} "
                       f"(p = {fmt.pvalue(c['p_value'])}, {c['p_value_method']}, {c['tested']} of {c['candidates']} "
                       "thresholds tested)")
        else:
            out.append(f"    certified: none — {e['certified_reason']}")
        out.append(f"    naive t={e['naive_threshold']!r}" if e["naive_threshold"] is not None
                   else f"    naive: none — {e['naive_reason']}")
        for key, what in (("label_need", "the loosest threshold under the target"), ("fewest_labels", "the cheapest threshold")):
            n = e[key]
            if n and e["certified_threshold"] is None:
                out.append(f"    labels to certify {what} t={_threshold(n['threshold'])} (risk {_num(n['risk'])} on "
                           f"{n['unit']}): " + (f"{n['labels_needed']} in all, {n['more_labels']} more"
                                                if n["labels_needed"] is not None else "no amount (risk not below target)"))
        h = e["held_out"]
        if h and h["reason"]:
            out.append(f"    held-out: {h['reason']}")
        cal = e["calibration"]
        rel = cal["reliability"]
        out.append("    calibration: " + (f"ECE {_ci(rel['ece'])} ({len(rel['count'])} bins)" if rel else
                                          f"not computed — {cal['reason']}"))
        if "recalibration" in cal:
            r = cal["recalibration"]
            out.append(f"    recalibrated ({r['method']}, held-out over {r['folds']} folds): ECE {_ci(r['held_out']['ece'])}"
                       + (f", improvement {fmt.ci(r['improvement']['estimate'], r['improvement']['ci_low'], r['improvement']['ci_high'], signed=True)}"
                          if r["improvement"] else "") if r else f"    recalibration: not computed — {cal['recalibration_reason']}")
            if cal.get("transfer"):
                broken = [names.get(x["applied_to"], x["applied_to"]) for x in cal["transfer"]
                          if not x["holds"] and not x["held_out"]]
                out.append("    its map on the other slices: " + ("holds on all" if not broken else
                                                                   "fails on " + ", ".join(broken)))
            elif cal.get("transfer_reason"):
                out.append(f"    its map on the other slices: not computed — {cal['transfer_reason']}")
    for s in scorers:
        mine = [e for e in rows if e["scorer"] == s and e["transfer"]]
        if mine:
            out.append(f"  transfer matrix, {s}: {RATE_NAMES[kind]} [95% CI] (! = the CI breaks the target; · = in-sample)")
            for which in ("certified", "naive"):
                out += format_threshold_matrix(mine, which, kind, names)
    return out


# ---- models list (issue 26) -------------------------------------------------------------------------------------

def format_models(entries: Sequence[Mapping[str, Any]]) -> str:
    """`models list`: per scorer one aligned line (name, ready/absent, what it computes), then indented: where its
    weights resolve, what else it needs, how to install it, and its last known-answer check."""
    heads = grid(None, [[e["name"], "ready " if e["ready"] else "absent", e["description"]] for e in entries])
    lines = []
    for head, e in zip(heads, entries):
        lines += [head, f"    {e['where']}"]
        lines += [f"    {n}" for n in e.get("needs", ())]
        if not e["ready"]:
            lines.append(f"    install: {e['install']}")
        if e.get("check"):
            lines.append(f"    {e['check']}")
    return "\n".join(lines)


# ---- reproduce (issue 26) ---------------------------------------------------------------------------------------

def format_reproduce(rep: Mapping[str, Any]) -> str:
    """`reproduce`: per paper row and scorer that ran, the paper's AUROC beside ours with the difference and whether
    the paper's number lies outside our CI; then what could not run (data, weights) and why."""
    head = ["table", "row", "data", "n", "scorer", "paper", "ours [95% CI]", "ours − paper", "vs our CI"]
    rows, stand_ins = [], {}
    for r in rep["rows"]:
        d = r["data"]
        if not d:
            continue
        mark = "†" * stand_ins.setdefault(d["stand_in"], len(stand_ins) + 1) if d["stand_in"] else ""
        n = str(d["n"]) + (f" (paper {d['paper_n']})" if d["paper_n"] and d["paper_n"] != d["n"] else "")
        for c in r["cells"]:
            o = c["ours"]
            if o is None:
                continue
            verdict = {"differs": "DIFFERS", "within CI": "within"}.get(c["verdict"], MISSING)
            rows.append([r["table"], r["row"], f"stand-in{mark}" if mark else "paper's", n, c["scorer"],
                         c["paper"]["text"] if c["paper"] else MISSING, fmt.ci(o["auroc"], o["ci_low"], o["ci_high"]),
                         fmt.num(c["diff"], signed=True), verdict])
    s = rep["summary"]
    lines = [f"Reproducing {rep['paper']}", ""]
    lines += grid(head, rows, rule=True) if rows else ["no row of the paper could run here"]
    lines += ["", f"{s['cells_run']} cells run; {s['compared']} of the paper's {s['paper_numbers']} stated numbers "
                  f"compared, {s['differ']} outside our CI (DIFFERS). CI: {rep['settings']['ci']}. A paper number is "
                  "an interval: ± half its last digit, or the range the text gives; * = derived from a stated difference."]
    for note, i in stand_ins.items():
        lines.append(f"{'†' * i} {note}")
    for r in rep["rows"]:
        if r["data"] and r["data"]["status"] != "ok":
            lines.append(f"{r['table']}:{r['row']}: {r['data']['status']} in {r['data']['title']}")
    if rep["absent_data"]:
        lines += ["", "absent data (not run):"]
        lines += [f"  {a['title']} ({', '.join(a['rows'])}): {a['reason']}" for a in rep["absent_data"]]
    if rep["absent_scorers"]:
        lines += ["", "absent scorers (not run):"]
        lines += [f"  {a['scorer']} ({a['model'] or 'built in'}; {a['paper_numbers']} paper number"
                  f"{'s' if a['paper_numbers'] != 1 else ''} not compared): {a['reason']}" for a in rep["absent_scorers"]]
    return "\n".join(lines)
