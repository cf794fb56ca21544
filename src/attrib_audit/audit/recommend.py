"""The decision rule behind `select`: which metric to recommend for a construct from its metric × dataset matrix
(transfer), or from one dataset's bootstrap (on target), and how far to trust it. Pure computation on statistics
already in memory; `audit.select` reads them from an audit folder.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from attrib_audit.audit.config import DEFAULT_EPS
from attrib_audit.audit.correlations import StatisticBoot
from attrib_audit.audit.transfer import LEVEL, RowsUsed
from attrib_audit.stats.bootstrap import BootstrapAUROC, percentile_ci
from attrib_audit.stats.chance import CHANCE_TEST, chance_pvalues, chance_test, holm
from attrib_audit.stats.transfer import AurocMatrix, best_per_dataset, lodo_regret, portability


@dataclass(frozen=True, kw_only=True)
class Recommendation:
    construct: str
    datasets: list[str]
    candidates: list[str]
    metric: str | None
    # transfers | near-best-unproven | does-not-transfer | best-on-target | tied-on-target | no-better-than-chance
    # | no-recommendation
    verdict: str
    in_sample_regret: float | None
    in_sample_regret_ci: tuple[float, float] | None
    worst_regret: float | None
    worst_dataset: str | None
    held_out_regret: float | None  # leave-one-dataset-out: the honest estimate for a new dataset
    held_out_regret_ci: tuple[float, float] | None
    folds_agreeing: int | None
    portable_metrics: list[str]
    caveat: str
    # per dataset: rows used, rows each candidate's failures removed
    rows: dict[str, RowsUsed] = field(default_factory=dict)
    statistic: str = "auroc"  # what the candidates were compared by (the audit's --statistic)
    # per candidate and dataset: one-sided p of AUROC > 0.5 (Holm-adjusted over the datasets), beats chance or not
    chance: dict[str, dict[str, dict]] = field(default_factory=dict)
    chance_test: str = CHANCE_TEST



def chance_table(mat: AurocMatrix, level: float = LEVEL, null: float = 0.5) -> dict[str, dict[str, dict]]:
    """Per metric and dataset of `mat`: the one-sided chance p-value, Holm-adjusted over the datasets, and the flag.

    Args:
        mat: point AUROCs and replicates (metrics × datasets).
        level: the CI level; the test runs at α = (1 − level) / 2.
        null: no skill: 0.5 for AUROC, 0 for a correlation.

    Returns:
        {metric: {dataset: {"p": raw, "p_holm": adjusted, "beats_chance": bool}}}.
    """
    out: dict[str, dict[str, dict]] = {}
    for i, m in enumerate(mat.metrics):
        raw = chance_pvalues(mat.point[i], mat.replicates[i], null)
        adj = holm(raw)
        out[m] = {d: {"p": float(raw[k]), "p_holm": float(adj[k]), "beats_chance": bool(adj[k] < (1 - level) / 2)}
                  for k, d in enumerate(mat.datasets)}
    return out


def recommend(construct: str, mat: AurocMatrix, eps: float = DEFAULT_EPS, rows: dict[str, RowsUsed] | None = None,
              unit: str = "AUROC") -> Recommendation:
    """Pick the lowest-regret metric and phrase the caveat its leave-one-dataset-out regret implies."""
    d = len(mat.datasets)
    lodo = lodo_regret(mat, LEVEL)
    port = {p.metric: p for p in portability(mat, LEVEL)}
    m = lodo.lowest_regret_metric
    fixed = next(f for f in lodo.fixed if f.metric == m)
    sel = lodo.selector
    agree = sum(p == m for p in sel.picks.values())
    portable = [p.metric for p in port.values() if p.portable]
    worst_sel = max(sel.per_dataset, key=lambda d: sel.per_dataset[d])
    width = float(np.mean([b.ci_high - b.ci_low for b in best_per_dataset(mat, LEVEL)]))
    held_out = (f"choosing the best-on-average metric from the other datasets cost {sel.mean:.3f} {unit} "
                "on the held-out "
                f"dataset on average (95% CI [{sel.ci_low:.3f}, {sel.ci_high:.3f}]; "
                f"worst {sel.per_dataset[worst_sel]:.3f} "
                f"on {worst_sel}); the rule picked {m} in {agree} of {d} folds")
    committed = (f"always using {m} cost {fixed.mean:.3f} [{fixed.ci_low:.3f}, {fixed.ci_high:.3f}] "
                 "against the per-dataset "
                 f"best, up to {fixed.max:.3f} on {fixed.worst_dataset}")
    few = " Only two datasets: each fold learns from a single dataset." if d == 2 else ""
    if port[m].portable and port[m].paired_portable and sel.ci_high <= eps:
        verdict = "transfers"
        caveat = (f"{m} stayed within the best metric's 95% CI on all {d} datasets of '{construct}', and {held_out}, "
                  f"within ε = {eps:g}. Confirm on a labelled sample of the new dataset if you can.")
    elif port[m].portable:
        verdict = "near-best-unproven"
        caveat = (f"{m} is within the best metric's 95% CI on every audited dataset of '{construct}' (those CIs are "
                  f"{width:.2f} {unit} wide on average, so this screen is only as sharp as they are), but {held_out}. "
                  f"That CI does not rule out a regret above ε = {eps:g}; {committed}. "
                  f"Use {m} as a provisional default "
                  "and validate it on labelled pairs of the new dataset.")
    else:
        verdict = "does-not-transfer"
        lead = (f"No audited metric is portable across the {d} datasets of '{construct}'" if not portable else
                f"{m} has the lowest mean regret but is not portable (breaks on {', '.join(port[m].breaks_on)}); "
                f"portable: {', '.join(portable)}")
        caveat = (f"{lead}. {held_out[0].upper() + held_out[1:]}; {committed}. "
                  f"{m} is only a provisional default: label a "
                  "sample of the new dataset and audit it before trusting any metric.")
    chance = chance_table(mat, null=0.5 if unit == "AUROC" else 0.0)
    weak = [d for d, c in chance[m].items() if not c["beats_chance"]]
    if len(weak) == d and not any(c["beats_chance"] for per in chance.values() for c in per.values()):
        return no_recommendation(construct, list(mat.datasets), "no candidate is better than chance on any dataset "
                                 f"of '{construct}' ({chance_test(unit)}): none is recommended", chance, unit=unit)
    if weak:
        caveat = (f"{m} is not better than chance on {', '.join(weak)} (Holm-adjusted one-sided p "
                  + ", ".join(f"{chance[m][x]['p_holm']:.3g}" for x in weak) + "). " + caveat)
    return Recommendation(construct=construct, datasets=list(mat.datasets), candidates=list(mat.metrics), metric=m,
                          verdict=verdict, in_sample_regret=fixed.mean,
                          in_sample_regret_ci=(fixed.ci_low, fixed.ci_high), worst_regret=fixed.max,
                          worst_dataset=fixed.worst_dataset, held_out_regret=sel.mean,
                          held_out_regret_ci=(sel.ci_low, sel.ci_high), folds_agreeing=agree, portable_metrics=portable,
                          caveat=caveat + few, rows=rows or {}, chance=chance, chance_test=chance_test(unit))


def no_recommendation(construct: str, datasets: list[str], reason: str,
                      chance: dict[str, dict[str, dict]] | None = None, *, unit: str = "AUROC") -> Recommendation:
    """A construct with no recommended metric, and why (no candidate better than chance when `chance` is given)."""
    verdict = "no-better-than-chance" if chance else "no-recommendation"
    return Recommendation(construct=construct, datasets=datasets, candidates=list(chance or []), metric=None,
                          verdict=verdict, in_sample_regret=None, in_sample_regret_ci=None,
                          worst_regret=None, worst_dataset=None, held_out_regret=None, held_out_regret_ci=None,
                          folds_agreeing=None, portable_metrics=[], caveat=reason, chance=chance or {},
                          chance_test=chance_test(unit))


def on_target(construct: str, dataset: str, names: list[str], boot: BootstrapAUROC | StatisticBoot,
              unit: str = "AUROC") -> Recommendation:
    """One audited dataset: if it is the target (e.g. a labelled sample of it), the metric to use is its best one;
    the paired bootstrap says which others it cannot be told apart from. Nothing here speaks for other datasets.

    Candidates are compared on the rows every one of them scored (`boot.aligned`)."""
    ok = [j for j in range(len(names)) if np.isfinite(boot.point[j])]
    if len(ok) < 2:
        return no_recommendation(construct, [dataset], f"fewer than two candidate metrics have a {unit} on {dataset}: "
                                                       "nothing to choose between")
    al = boot.aligned(ok)
    rows = {dataset: RowsUsed(n=boot.n_rows, n_used=al.n,
                              dropped_by={names[j]: int(k) for j, k in zip(ok, al.dropped)})}
    if not np.isfinite(al.point).all():
        return no_recommendation(construct, [dataset],
                                 f"the rows every candidate scored on {dataset} leave {unit} undefined: "
                                 "compare fewer candidates (--scorers)")
    null = 0.5 if unit == "AUROC" else 0.0
    p = chance_pvalues(al.point, al.replicates, null)
    alpha = (1 - LEVEL) / 2
    chance = {names[j]: {dataset: {"p": float(p[i]), "p_holm": float(p[i]), "beats_chance": bool(p[i] < alpha)}}
              for i, j in enumerate(ok)}
    good = [i for i in range(len(ok)) if chance[names[ok[i]]][dataset]["beats_chance"]]
    if not good:
        t = int(al.point.argmax())
        lo, hi, _ = percentile_ci(al.replicates[t], LEVEL)
        rec = no_recommendation(construct, [dataset], (
            f"no candidate is better than chance on {dataset} (best: {names[ok[t]]}, {unit} {al.point[t]:.3f} "
            f"[{lo:.3f}, {hi:.3f}], one-sided p = {p[t]:.3g} in a Wald z test of {unit} > {null:g} with the "
            f"clustered-bootstrap standard error, at α = {alpha:g}). None is recommended: a better metric, "
            "or more labels (`attrib-audit plan`), is needed before any of them can be trusted here."), chance,
            unit=unit)
        return replace(rec, rows=rows)
    b = max(good, key=lambda i: al.point[i])
    best, point = ok[b], al.point[b]
    tied = [names[ok[i]] for i in good if i != b and percentile_ci(al.replicates[b] - al.replicates[i], LEVEL)[0] <= 0]
    weak = [names[j] for i, j in enumerate(ok) if i not in good]
    also = f" Not better than chance (never a choice): {', '.join(weak)}." if weak else ""
    if tied:
        verdict = "tied-on-target"
        caveat = (f"{names[best]} has the highest {unit} on {dataset} ({point:.3f}) among the candidates better than "
                  f"chance, but the paired 95% CI does not separate it from {', '.join(tied)}: any of these will do "
                  "here (choose the cheapest), or label more pairs (`attrib-audit plan --detect`). This holds for this "
                  "dataset only.")
    else:
        verdict = "best-on-target"
        rivals = "every other candidate" if len(ok) == len(good) else "every other candidate better than chance"
        caveat = (f"{names[best]} beats {rivals} on {dataset} ({unit} {point:.3f}, better than chance: one-sided p = "
                  f"{p[b]:.3g}; each paired 95% CI excludes zero). This holds for this dataset only; a dataset that "
                  "was not audited needs its own labels.")
    return Recommendation(construct=construct, datasets=[dataset], candidates=[names[j] for j in ok],
                          metric=names[best], verdict=verdict, in_sample_regret=None, in_sample_regret_ci=None,
                          worst_regret=None, worst_dataset=None, held_out_regret=None, held_out_regret_ci=None,
                          folds_agreeing=None, portable_metrics=[], caveat=caveat + also, rows=rows, chance=chance,
                          chance_test=chance_test(unit))
