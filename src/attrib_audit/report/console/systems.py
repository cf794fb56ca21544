"""System level: do the metrics rank the systems as the labels do, and which to rank with."""
from __future__ import annotations

from attrib_audit.audit.results import SystemsBlock, SystemsSlice
from attrib_audit.audit.systems import RankerPick, pick_ranker
from attrib_audit.report import fmt
from attrib_audit.report.console.grid import MISSING, grid
from attrib_audit.stats.systems import AgreementDifference, InputDesign
from attrib_audit.stats.types import Estimate


def _est(e: Estimate | None, signed: bool = False) -> str:
    """An Estimate as `0.532 [0.301, 0.640]` (a NaN, results.json's null, prints as missing)."""
    return MISSING if e is None else fmt.ci(e.estimate, e.ci_low, e.ci_high, 3, signed)


# ---- system level: do the metrics rank the systems as the labels do? ----------------------------------------------
def _inputs(entry: SystemsSlice, d: InputDesign) -> str:
    return (f"{entry.n_systems} systems × {d.n_used} shared inputs" if d.paired else
            f"{entry.n_systems} systems, inputs NOT shared")


def format_systems_brief(section: SystemsBlock) -> str:
    """Per slice: the metric to rank systems with, its τ-b and pairwise accuracy [CI], the reversals (a few lines)."""
    out = ["System level: which metric ranks the systems as the human labels do (τ-b as measured with these inputs; "
           "ceiling = a ranking by the true human pass rates):"]
    for e in section.slices:
        level = e.statistics
        if e.status != "ok" or level is None:
            out.append(f"  {e.slice}: not computed ({e.reason})")
            continue
        p = pick_ranker(e)
        if p.metric is None or p.ceiling is None:
            out.append(f"  {e.slice} ({_inputs(e, level.design)}): no recommendation ({p.caveat})")
            continue
        tied = f"; not separable from {', '.join(p.tied_with)}" if p.tied_with else ""
        out.append(f"  {e.slice} ({_inputs(e, level.design)}): rank with {p.metric} — τ-b {_est(p.tau)}, pairwise "
                   f"accuracy {_est(p.pairwise_accuracy)}{tied}; ceiling τ-b {_est(p.ceiling['tau'])}")
        clusters = level.human_clusters
        out.append("    reversals (labels prefer one system, the metric the other): "
                   + ", ".join(f"{m} {k}" for m, k in p.reversals.items())
                   + f"; the labels resolve {len(clusters.resolved)} of {clusters.n_pairs} system pairs")
        if level.design.caveat:
            out.append(f"    caveat: {level.design.caveat}")
    return "\n".join(out)


def format_systems(section: SystemsBlock) -> str:
    """Every system-level table of every slice: per system, agreement with the ceiling, item vs system, metric
    differences, reversals, the human significance clusters."""
    out = [f"== system level ({section.level:.0%} CIs, {section.n_boot} resamples of "
           f"{' and '.join(reversed(section.resample))}, seed {section.seed}) ==",
           f"  {section.estimand}.", f"  {section.pairwise_accuracy}.", f"  Pass rates: {section.threshold_rule}."]
    for e in section.slices:
        out.append("")
        level = e.statistics
        if e.status != "ok" or level is None:
            out.append(f"-- {e.slice}: not computed ({e.reason})")
            continue
        out.append(f"-- {e.slice}: {_inputs(e, level.design)} ({e.n_rows} rows)")
        out += [f"  note: {n}" for n in e.notes]
        metrics = list(level.systems[0].mean) if level.systems else []
        passed = list(level.systems[0].pass_rate) if level.systems else []
        out.append("Per system, highest human pass rate first: human pass rate and each metric's mean score [95% CI "
                   "over inputs]" + (" and pass rate" if passed else "") + ":")
        order = sorted(level.systems, key=lambda r: -(r.human.estimate if fmt.finite(r.human.estimate) else -1))
        out += grid(["system", "inputs", "human", *metrics, *(f"{m} pass" for m in passed)],
                    [[r.system, str(r.n_inputs), _est(r.human), *(_est(r.mean[m]) for m in metrics),
                      *(_est(r.pass_rate[m]) for m in passed)] for r in order], indent="  ")
        c = level.human_clusters
        out.append(f"Human significance clusters (best first; within one the labels cannot order the systems; "
                   f"{len(c.resolved)} of {c.n_pairs} pairs resolved):")
        out.append("  " + " > ".join("{" + " ".join(k) + "}" for k in c.clusters))
        out.append("Agreement with the human ranking (summary: mean score, or pass rate at the transferred threshold):")
        rows = [[a.metric, a.summary, _est(a.tau), _est(a.pairwise_accuracy), _est(a.acc_eq),
                 _est(a.pearson), str(a.metric_ties)] for a in level.agreement]
        ceil = level.ceiling
        rows.append(["ceiling", "true rates", _est(ceil["tau"]), _est(ceil["pairwise_accuracy"]), _est(ceil["acc_eq"]),
                     MISSING, MISSING])
        out += grid(["metric", "summary", "τ-b", "pairwise acc", "acc_eq", "Pearson r", "metric ties"], rows,
                    indent="  ")
        ties = level.agreement[0].human_ties if level.agreement else 0
        out.append(f"  {ties} system pair(s) tie on the human pass rate (left out of pairwise accuracy)")
        out.append("Item level vs system level (AUROC over pairs beside τ-b over systems, mean score):")
        out += grid(["metric", "AUROC", "τ-b", "note"],
                    [[x.metric, fmt.ci(x.auroc, x.auroc_ci_low, x.auroc_ci_high), _est(x.tau), x.note or "agree"]
                     for x in e.item_vs_system or []], indent="  ")
        if level.differences:
            out.append("Metric vs metric (a − b, paired over the same draws; * = CI excludes 0):")
            out += grid(["a − b", "summary", "τ-b", "pairwise acc"],
                        [[f"{d.metric_a} − {d.metric_b}", d.summary, *_difference_cells(d)]
                         for d in level.differences], indent="  ")
        out.append("Reversals (labels prefer A, the metric B; both paired CIs exclude 0; not corrected for the "
                   "number of pairs):")
        if level.reversals:
            out += grid(["metric", "summary", "labels prefer", "metric prefers", "human rate A − B", "metric A − B"],
                        [[r.metric, r.summary, r.human_prefers, r.metric_prefers,
                          _est(r.human_difference, signed=True), _est(r.metric_difference, signed=True)]
                         for r in level.reversals], indent="  ")
        else:
            out.append("  none")
    return "\n".join(out)


def _difference_cells(d: AgreementDifference) -> list[str]:
    """τ-b and pairwise accuracy differences, starred where the CI excludes 0."""
    def star(e: Estimate) -> str:
        return " *" if fmt.finite(e.ci_low) and (e.ci_low > 0 or e.ci_high < 0) else ""
    return [_est(d.tau, signed=True) + star(d.tau), _est(d.pairwise_accuracy, signed=True) + star(d.pairwise_accuracy)]


def format_ranker(r: RankerPick) -> str:
    """One `select --level system` pick (audit.systems.rankers_from_results)."""
    lines = [f"slice '{r.slice}': metric to rank systems with"]
    if r.metric is None:
        return "\n".join(lines + [f"  no recommendation: {r.caveat}"])
    lines.append(f"  recommended: {r.metric}   [{r.verdict}]")
    lines.append(f"  τ-b {_est(r.tau)}, pairwise accuracy {_est(r.pairwise_accuracy)}; ceiling τ-b "
                 f"{_est(r.ceiling['tau'] if r.ceiling else None)}")
    lines.append(f"  candidates: {', '.join(r.candidates)}; reversals: "
                 + ", ".join(f"{m} {k}" for m, k in r.reversals.items()))
    lines.append(f"  caveat: {r.caveat}")
    return "\n".join(lines)
