"""System level: do the metrics rank the systems as the labels do, and which to rank with."""
from __future__ import annotations

from typing import Any, Mapping

from attrib_audit.audit.results import SystemsBlock
from attrib_audit.audit.systems import pick_ranker
from attrib_audit.files.records import to_record
from attrib_audit.report import fmt
from attrib_audit.report.console.grid import MISSING, _est, grid


# ---- system level: do the metrics rank the systems as the labels do? ----------------------------------------------
def _inputs(entry: Mapping[str, Any]) -> str:
    d = entry["design"]
    return (f"{entry['n_systems']} systems × {d['n_used']} shared inputs" if d["paired"] else
            f"{entry['n_systems']} systems, inputs NOT shared")


def format_systems_brief(section: SystemsBlock) -> str:
    """Per slice: the metric to rank systems with, its τ-b and pairwise accuracy [CI], the reversals (a few lines)."""
    block = to_record(section)  # the ranker is picked from the slices' JSON form (audit.systems.pick_ranker)
    out = ["System level: which metric ranks the systems as the human labels do (τ-b as measured with these inputs; "
           "ceiling = a ranking by the true human pass rates):"]
    for e in block["slices"]:
        if e["status"] != "ok":
            out.append(f"  {e['slice']}: not computed ({e['reason']})")
            continue
        p = pick_ranker(e)
        if p.metric is None or p.ceiling is None:
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


def format_systems(section: SystemsBlock) -> str:
    """Every system-level table of every slice: per system, agreement with the ceiling, item vs system, metric
    differences, reversals, the human significance clusters."""
    block = to_record(section)  # the statistics' nested tables, as results.json holds them
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
        order = sorted(e["systems"],
                       key=lambda r: -(r["human"]["estimate"] if fmt.finite(r["human"]["estimate"]) else -1))
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
                        [[f"{d['metric_a']} − {d['metric_b']}", d["summary"],
                          _est(d["tau"], signed=True) + star(d["tau"]),
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
