"""`plan`: how many labels a question needs, from simulation and from the threshold certificate."""
from __future__ import annotations

from typing import TYPE_CHECKING

from attrib_audit.report import fmt
from attrib_audit.report.console.grid import _num, _threshold, grid

if TYPE_CHECKING:  # validate.plan imports the statistics, which `--help` must not load
    from attrib_audit.validate.plan import GatePlan, SamplePlan


def format_plan(plan: SamplePlan) -> str:
    """One scenario of `plan` (validate.plan.plan): the simulated curve and the sample size it recommends."""
    best, runner = plan.best, plan.runner
    m = plan.pairs_per_cluster
    lines = [f"plan for {plan.title}: best metric {best} (AUROC {plan.best_auroc:.3f})",
             *(f"  {n}" for n in plan.notes),
             f"  {m} pair{'s' if m > 1 else ''} per cluster, intra-cluster correlation {plan.icc:.2f}; "
             f"{plan.sims} simulated samples × {plan.n_boot} clustered-bootstrap resamples per n"]
    pool = plan.pool
    head = (["n pairs", f"half-width({best})"] + (["half-width(pool)"] if pool else [])
            + ([f"power({best} > {runner})"] if runner is not None else []))
    rows = [[str(r.n), _num(r.half_width), *([_num(r.half_width_pool)] if pool else []),
             *([_num(r.power, 2)] if runner is not None else [])]
            + ([f"({r.undefined} one-class samples)"] if r.undefined else []) for r in plan.rows]
    width = len(head) + any(r.undefined for r in plan.rows)
    lines += grid(head + [""] * (width - len(head)), [r + [""] * (width - len(r)) for r in rows], indent="  ",
                  align=">" * len(head))
    goals = " and ".join(plan.goals)
    if pool:
        lines.append(f"  {plan.pool_note}")
    if plan.recommended_n is not None:
        lines.append(f"  recommendation: label {plan.recommended_n} pairs ({goals})")
    elif pool:
        last = plan.rows[-1]
        got = [f"half-width {_num(last.half_width)}"] + (
            [f"power {_num(last.power, 2)}"] if last.power is not None else [])
        lines.append(f"  out of reach: even labelling the whole pool of {pool} pairs does not meet {goals}; all "
                     f"{pool} give {', '.join(got)}. Relax the targets, or find more pairs like these")
    else:
        lines.append(f"  recommendation: more than {plan.rows[-1].n} pairs are needed for {goals}; "
                     "widen --grid or relax the targets")
    if plan.hanley_mcneil is not None:
        lines.append(f"  cross-check: the Hanley–McNeil formula (independent pairs) "
                     f"needs n ≈ {plan.hanley_mcneil.n}")
    return "\n".join(lines)


def format_gate_plan(plan: GatePlan) -> str:
    """One slice and scorer of `plan` with a gate target (validate.plan.gate_plans)."""
    head = f"plan for {plan.title}: a threshold certified for {plan.target} at delta {plan.delta:g} " \
           f"(unit: {plan.unit}; {plan.n} pairs" \
           + (f", {plan.n_failed} failed" if plan.n_failed else "") + ")"
    if plan.certified_threshold is not None:
        sp = plan.supported_pass
        cost = "" if sp is None else f"; it passes {fmt.pct(sp)} of supported answers" + (
            " — certified but useless: `threshold --min-supported-pass RATE` certifies a floor on that share too"
            if sp < 0.5 else "")
        return (f"{head}\n  already certified: t={_threshold(plan.certified_threshold)}{cost} "
                "(attrib-audit threshold gives its rates)")
    lines = [head, f"  not certified: {plan.reason}"]
    for n, what in ((plan.fewest_labels, "the cheapest threshold"),
                    (plan.label_need, "the loosest threshold under the target")):
        if n is not None:
            lines.append(f"  {what} t={_threshold(n.threshold)} ({n.unit}: risk {_num(n.risk)}): "
                         + (f"label {n.labels_needed} pairs in all ({n.more_labels} more), {n.assumption}"
                            if n.labels_needed is not None else
                            "no number of labels certifies it (risk not below the target)"))
    reach = plan.pool_reach
    if reach is not None and reach.reachable:
        lines.append(f"  the pool of {plan.pool} pairs can reach it: {reach.labels} labels at the rates seen")
    elif reach is not None:
        lines.append(f"  out of reach: the pool holds {plan.pool} pairs, fewer than this needs; with all of them "
                     f"labelled, at the rates seen, the best it can certify is {reach.reachable_target}")
    sim = plan.simulated
    if sim is not None:
        lines.append(f"  simulated: {sim.sims} samples of {sim.n} pairs from this slice's scores "
                     f"({sim.pairs_per_cluster} per cluster, intra-cluster correlation {sim.icc:.2f}) certify a "
                     f"threshold in {fmt.pct(sim.certified_share)} of draws")
    if plan.fewest_labels is None:
        lines.append("  recommendation: no number of labels certifies this target on data like these")
    return "\n".join(lines)
