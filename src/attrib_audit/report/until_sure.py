"""The terminal view of a label-until-sure session: standings with both kinds of interval, the decision, caveats."""
from __future__ import annotations

from attrib_audit.report.fmt import ci, num
from attrib_audit.validate.until_sure import Report


def format_until_sure(r: Report) -> str:
    """Standings (prediction-powered AUROC per metric, its fixed-sample interval marked "not for stopping"), the
    anytime-valid paired intervals the stop rules read, then the decision and what it rests on."""
    k = len(r.metrics)
    width = max(len(m) for m in r.metrics)
    order = sorted(range(k), key=lambda i: -r.aurocs[i] if r.aurocs[i] == r.aurocs[i] else 1.0)
    lines = [f"label until sure: {r.pool}",
             f"{r.n_labels} labels ({r.n_supported} supported) of {r.visited} pairs walked in a pool of "
             f"{r.pool_size}; budget {r.budget}, {r.sampling} sampling",
             f"proxy: {r.proxy} ({r.proxy_note})", "",
             f"  {'metric':<{width}}  prediction-powered AUROC [95% fixed-sample CI, not for stopping]   λ"]
    for i in order:
        f = r.fixed[i]
        lines.append(f"  {r.metrics[i]:<{width}}  {ci(r.aurocs[i], f.low, f.high):<52}  {num(r.lams[i], 2)}")
    if r.pairs:
        level = r.alpha / max(k - 1, 1)
        lines += ["", f"  paired differences, anytime-valid ({1 - level:.1%} confidence sequences, valid under "
                      "optional stopping):"]
        for p in r.pairs:
            name = f"{r.metrics[p.a]} − {r.metrics[p.b]}"
            lines.append(f"  {name:<{2 * width + 3}}  {ci(p.estimate, p.low, p.high, signed=True)}")
    lines += ["", f"decision: {r.message}"]
    if r.decision in ("best", "tie"):
        lines.append(f"guarantee: the claim is false with probability at most {r.alpha:g}, however many labels "
                     "were looked at on the way (asymptotic confidence sequences, Waudby-Smith et al. 2021)")
    lines += [f"caveat: {c}" for c in r.caveats]
    return "\n".join(lines)
