"""The terminal view of a label-until-sure session: standings with both kinds of interval, the decision, caveats."""
from __future__ import annotations

import numpy as np

from attrib_audit.report.fmt import ci, num
from attrib_audit.validate.until_sure import Report, UntilSurePlan


def until_sure_text(r: Report) -> str:
    """Standings (prediction-powered AUROC per metric, its fixed-sample interval marked "not for stopping"), the
    anytime-valid paired intervals the stop rules read, then the decision and what it rests on."""
    k = len(r.metrics)
    width = max(len(m) for m in r.metrics)
    order = sorted(range(k), key=lambda i: -r.aurocs[i] if r.aurocs[i] == r.aurocs[i] else 1.0)
    lines = [f"label until sure: {r.pool}",
             f"{r.n_labels} labels ({r.n_supported} supported) of {r.visited} pairs walked in a pool of "
             f"{r.pool_size}; budget {r.budget}, {r.sampling} sampling",
             f"proxy: {r.proxy} ({r.proxy_note})", "",
             f"  {'metric':<{width}}  {'AUROC [95% CI]':<22}  λ     (prediction-powered; fixed-sample CIs, not for "
             "stopping)"]
    for i in order:
        f = r.fixed[i]
        lines.append(f"  {r.metrics[i]:<{width}}  {ci(r.aurocs[i], f.low, f.high):<22}  {num(r.lams[i], 2)}")
    if r.pairs:
        level = r.alpha / max(k - 1, 1)
        lines += ["", "  paired differences: anytime-valid confidence sequence, each bound one-sided at "
                      f"{1 - level:.1%} (valid under optional stopping) | fixed-sample 95% CI (not for stopping)"]
        for p, f in zip(r.pairs, r.fixed_pairs):
            name = f"{r.metrics[p.a]} − {r.metrics[p.b]}"
            lines.append(f"  {name:<{2 * width + 3}}  {ci(p.estimate, p.low, p.high, signed=True):<26}  "
                         f"| [{num(f.low, 3, True)}, {num(f.high, 3, True)}]")
    lines += ["", f"decision: {r.message}"]
    if r.decision in ("best", "tie"):
        lines.append(f"guarantee: asymptotically, the claim is false with probability at most {r.alpha:g}, however "
                     "many labels were looked at on the way (time-uniform CLT confidence sequences, Waudby-Smith et "
                     "al. 2021)")
    lines += [f"caveat: {c}" for c in r.caveats]
    return "\n".join(lines)


def until_sure_plan_text(p: UntilSurePlan) -> str:
    """Labels to a decision per design (median and quartiles of the simulated sessions) beside the fixed sample."""
    fixed = [n for n in p.fixed_n if n is not None]
    lines = [f"plan --until-sure: {p.pool} ({', '.join(p.metrics)}; δ {p.delta:g}, α {p.alpha:g}, budget {p.budget})",
             f"proxy: {p.proxy} ({p.proxy_note})",
             f"{p.sims} simulated sessions per design, labels drawn as Bernoulli(p̂): as good as the proxy's "
             "calibration", ""]
    for arm in p.arms:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(arm.decisions.items()))
        wins = ", ".join(f"{k} {v}" for k, v in sorted(arm.winners.items(), key=lambda kv: -kv[1]))
        lines.append(f"  {arm.sampling:<8} median {arm.median_labels:.0f} labels used (IQR "
                     f"{arm.q25:.0f}–{arm.q75:.0f}); ended: {kinds}" + (f"; best: {wins}" if wins else ""))
    if fixed:
        lines.append(f"  fixed    {int(np.median(fixed))} labels (median over the simulated pools; a sample sized "
                     "in advance with the pool's true AUROCs, power 0.8)")
    if len(fixed) < len(p.fixed_n):
        lines.append(f"  fixed    {len(p.fixed_n) - len(fixed)} of {len(p.fixed_n)} simulated pools need more labels "
                     "than the pool holds")
    return "\n".join(lines)
