"""`select` and `agree`: the metric to use per construct, and how well two raters agree."""
from __future__ import annotations

from typing import TYPE_CHECKING

from attrib_audit.audit.config import STATISTIC_LABELS
from attrib_audit.report import fmt
from attrib_audit.report.console.grid import grid

if TYPE_CHECKING:  # audit.recommend imports the statistics (scipy), which `--help` must not load
    from attrib_audit.audit.agreement import Agreement
    from attrib_audit.audit.recommend import Recommendation


def format_recommendation(r: Recommendation) -> str:
    """One `select` recommendation."""
    lines = [f"construct '{r.construct}' ({len(r.datasets)} datasets: {', '.join(r.datasets)})"]
    if r.statistic != "auroc":
        lines.append(f"  metrics compared by their {STATISTIC_LABELS.get(r.statistic, r.statistic)} with the graded "
                     "human rating (the audit's --statistic), not by AUROC")
    if r.metric is None:
        return "\n".join(lines + [f"  no recommendation: {r.caveat}"])
    if not fmt.finite(r.held_out_regret):  # audited on the target dataset itself (null in its JSON)
        return "\n".join(lines + [f"  recommended for {r.datasets[0]}: {r.metric}   [{r.verdict}]",
                                   f"  candidates: {', '.join(r.candidates)}", f"  caveat: {r.caveat}"])
    lines.append(f"  recommended for a new dataset: {r.metric}   [{r.verdict}]")
    lines.append(f"  candidates: {', '.join(r.candidates)} (regret is against the best candidate per dataset); "
                 f"portable: {', '.join(r.portable_metrics) or 'none'}")
    lo, hi = r.held_out_regret_ci if r.held_out_regret_ci is not None else (None, None)
    lines.append(f"  expected regret on a new dataset (leave-one-dataset-out selector): "
                 f"{fmt.ci(r.held_out_regret, lo, hi)}")
    rows = r.rows.values()
    lost = {m: sum(v.dropped_by[m] for v in rows) for m in r.candidates}
    if any(lost.values()):
        lines.append(f"  compared on the rows every candidate scored ({sum(v.n_used for v in rows)} of "
                     f"{sum(v.n for v in rows)}); failures removed "
                     + ", ".join(f"{m} {k}" for m, k in lost.items() if k))
    lines.append(f"  caveat: {r.caveat}")
    return "\n".join(lines)


def format_agreement(res: Agreement) -> str:
    """Cohen's κ per slice (audit.agreement.agreement's result)."""
    rows = []
    for row in [res.overall, *res.slices]:
        cm = row.confusion.counts
        kappa = fmt.ci(row.kappa, row.ci_low, row.ci_high) if fmt.finite(row.kappa) else "undefined"
        rows.append(["ALL" if row.slice is None else row.slice, kappa, str(row.n), str(row.n_excluded),
                     f"[[{cm[0][0]}, {cm[0][1]}], [{cm[1][0]}, {cm[1][1]}]]"])
    return "\n".join([f"Cohen's kappa: {res.a} ({res.a_from}) vs {res.b} ({res.b_from})",
                      *grid(["slice", "kappa [95% CI]", "n", "excluded",
                             f"confusion (rows {res.a}, cols {res.b}; 0, 1)"],
                            rows, indent="  ")])
