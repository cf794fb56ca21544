"""The transfer statistics of results.json (`transfer`): the headline verdict, portability,
leave-one-dataset-out regret with the naive selector, rank agreement, sign flips, companions."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from attrib_audit.audit.results import AurocRow, PairedRow
from attrib_audit.report import fmt, style
from attrib_audit.report.blocks import Block, Note, Para, Section, Table, guard
from attrib_audit.report.correlations import statistic_label
from attrib_audit.report.figcache import cached_figure
from attrib_audit.report.inputs import ReportInputs
from attrib_audit.report.verdict import one_dataset, pick, statistic_chance_warning

if TYPE_CHECKING:  # the records' module imports the statistics (scipy), which `--help` must not load
    from attrib_audit.audit.correlations import CorrelationSection
    from attrib_audit.audit.transfer import ConstructTransfer, MatrixStatistics, TransferSection
    from attrib_audit.stats.transfer import FixedRegret, SelectorRegret


def _regret_text(r: FixedRegret | SelectorRegret) -> str:
    return f"{fmt.ci(r.mean, r.ci_low, r.ci_high)} AUROC"


def verdict(construct: str, e: ConstructTransfer, st: MatrixStatistics,
            caveats: dict[tuple[str, str], str] | None = None) -> str:
    """Which metric to use for this construct and what the choice may cost, in plain words; `caveats`
    ((metric, dataset) → text) flags a recommended metric whose evidence was mostly cut."""
    reg = st.regret
    n = len(e.datasets)
    best = reg.lowest_regret_metric
    p = pick(st)
    f = p.regret
    if p.portable:
        head = (f"{construct} ({n} datasets): use {p.metric}, the portable metric with the lowest regret. It "
                f"is within the 95% CI of the best metric on every dataset"
                + ("" if p.paired else " (but not under the stricter paired test)")
                + f"; on the audited datasets it loses on average {_regret_text(f)} to each one's best metric "
                f"(in-sample regret), and at worst {fmt.num(f.max)} (on {f.worst_dataset}).")
        if p.others:
            head += f" Also portable: {', '.join(p.others)}."
    else:
        head = (f"{construct} ({n} datasets): no single metric is safe — every metric falls outside the best "
                f"metric's CI on at least one dataset. The lowest-regret choice, {best}, loses on average "
                f"{_regret_text(f)} on the audited datasets (in-sample regret), and {fmt.num(f.max)} on "
                f"{f.worst_dataset}.")
    known = caveats or {}
    cut = [f"{d} ({known[(p.metric, d)]})" for d in e.datasets if (p.metric, d) in known]
    if cut:
        head += f" Caveat: {p.metric}'s AUROC rests on truncated evidence on " + "; ".join(cut) + "."
    s = reg.selector
    gap = s.minus_best_fixed_ci
    head += (f" On a held-out dataset, picking the metric that was best on the other datasets (the naive selector) "
             f"costs {_regret_text(s)}; "
             f"its extra regret over always using {best} is "
             f"{fmt.ci(s.minus_best_fixed, gap[0], gap[1], signed=True)}.")
    return head


def _caveat(text: str) -> str:
    return f" Caution: {text}." if text else ""


def headline_blocks(transfer: TransferSection, caveats: dict[tuple[str, str], str] | None = None,
                    auroc: Sequence[AurocRow] | None = None, paired: Sequence[PairedRow] | None = None,
                    correlations: CorrelationSection | None = None) -> list[Block]:
    """The headline's paragraphs: per construct the transfer verdict, or with one dataset the on-target verdict
    (`auroc`/`paired`: results.json's rows, which also carry the chance tests; `correlations`: its correlation
    block, which a graded transfer statistic's on-target verdict reads)."""
    out: list[Block] = []
    for c, e in transfer.constructs.items():
        st = e.statistics if e.status == "ok" else None
        if st is not None:
            out += guard(f"The verdict for {c}", lambda e=e, c=c, st=st: [
                Para(verdict(c, e, st, caveats) + _caveat(statistic_chance_warning(
                    pick(st).metric, e.datasets, statistic=transfer.statistic, auroc=auroc or [],
                    correlations=correlations)))])
        elif len(e.datasets) == 1 and auroc is not None:
            out += guard(f"The verdict for {c}", lambda e=e, c=c: [
                Para(one_dataset(c, e.datasets[0], statistic=transfer.statistic, auroc=auroc, paired=paired or [],
                                 correlations=correlations).text)])
        else:
            out.append(Note(f"{c}: transfer not computed — {e.reason if e.reason is not None else e.status}."))
    for x in transfer.excluded_slices:
        out.append(Note(f"Left out of transfer: {x.slice} ({x.reason})."))
    return out


@cached_figure
def regret_plot(transfer: TransferSection, plots: Path):
    plt = style.pyplot()

    groups = {c: st for c, (_, st) in transfer.ok.items()}
    if not groups:
        return None
    rows: dict[str, list[tuple[str, Any]]] = {  # FixedRegret or SelectorRegret
        c: [(f.metric, f) for f in st.regret.fixed] + [("naive selector", st.regret.selector)]
        for c, st in groups.items()}
    heights = [len(r) for r in rows.values()]
    with style.rc():
        fig, axes = plt.subplots(len(rows), 1, squeeze=False, sharex=True, layout="constrained",
                                 figsize=(7.0, 0.9 + 0.42 * sum(heights) + 0.4 * len(rows)),
                                 gridspec_kw={"height_ratios": heights})
        metrics = sorted({f.metric for st in groups.values() for f in st.regret.fixed})
        for ax, (construct, items) in zip(axes[:, 0], rows.items()):
            for i, (name, r) in enumerate(items):
                selector = name == "naive selector"
                colour = "#777777" if selector else style.colour(metrics.index(name))
                lo, hi = r.ci_low, r.ci_high
                err = [[r.mean - lo], [hi - r.mean]] if fmt.finite(lo) and fmt.finite(hi) else None
                ax.barh(i, r.mean, color="white" if selector else colour, edgecolor=colour,
                        hatch="///" if selector else None,
                        height=0.6, xerr=err, error_kw={"ecolor": "#222222", "capsize": 3, "elinewidth": 1})
            ax.set_yticks(range(len(items)), [n for n, _ in items])
            ax.set_ylim(len(items) - 0.4, -0.6)
            ax.axvline(0, color="#555555", linewidth=0.8)
            ax.set_title(f"construct: {construct}", loc="left")
            ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
            ax.set_axisbelow(True)
        axes[-1, 0].set_xlabel("mean held-out regret (AUROC below the best metric on the left-out dataset), 95% CI")
        return style.save(fig, plots, "lodo_regret",
                          "Leave-one-dataset-out regret: for each fixed metric, and for the naive selector (hatched: "
                          "the metric best on the other datasets), how much AUROC is lost on the held-out dataset.")


def construct_blocks(c: str, e: ConstructTransfer, st: MatrixStatistics) -> list[Block]:
    out: list[Block] = [Para(f"Construct {c}: {len(e.datasets)} datasets ({', '.join(e.datasets)}); metrics "
                f"{', '.join(st.metrics)}.")]
    for x in e.excluded_metrics or []:
        out.append(Note(f"Left out: {x.scorer} ({x.reason})."))
    out.append(Table(["metric", "portable", "breaks on", "paired-portable", "paired breaks on"],
                     [[p.metric, "yes" if p.portable else "no", ", ".join(p.breaks_on) or fmt.DASH,
                       "yes" if p.paired_portable else "no", ", ".join(p.paired_breaks_on) or fmt.DASH]
                      for p in st.portability],
                     f"{c}: portability — AUROC within the 95% CI of the best metric on every dataset; paired: the "
                     "paired CI of best − metric includes 0 on every dataset."))
    reg = st.regret
    rows = [[f.metric, fmt.ci(f.mean, f.ci_low, f.ci_high), fmt.num(f.max), f.worst_dataset] for f in reg.fixed]
    s = reg.selector
    rows.append(["naive selector", fmt.ci(s.mean, s.ci_low, s.ci_high),
                 fmt.num(max(s.per_dataset.values())) if s.per_dataset else fmt.DASH,
                 "picks " + ", ".join(f"{d}→{m}" for d, m in s.picks.items())])
    out.append(Table(["metric", "mean held-out regret [95% CI]", "max regret", "worst on / picks"], rows,
                     f"{c}: leave-one-dataset-out regret (lowest-regret fixed metric: {reg.lowest_regret_metric})."))
    eps = next((x for x in st.eps_regret if x.metrics), None)
    if st.eps_regret:
        out.append(Para(f"ε-regret: the smallest ε on the grid for which some metric is within ε of the best on "
                        f"every dataset is {eps.eps:.2f} ({', '.join(eps.metrics)})." if eps else
                        "ε-regret: no metric is within any grid ε of the best on every dataset."))
    w, dc = st.kendall_w, st.decomposition
    out.append(Para(f"Rank agreement across datasets: Kendall's W = {fmt.num(w.w)} "
                    f"over {w.n_items} metrics × "
                    f"{w.n_raters} datasets (permutation p for concordance {fmt.num(w.p_concordance, 4)}, "
                    f"{w.n_perm} permutations; null mean {fmt.num(w.null_mean)})."))
    out.append(Para(f"Variance of AUROC: datasets {fmt.pct(dc.share_dataset)}, "
                    f"metrics {fmt.pct(dc.share_metric)}, "
                    f"metric × dataset interaction {fmt.pct(dc.share_interaction)} (residual permutation "
                    f"p = {fmt.num(dc.p_interaction, 4)}). "
                    "A large interaction means the metrics' order depends on the dataset."))
    flips = st.sign_flips
    out.append(Note(f"{c}: sign flips — " + "; ".join(
        f"{f.metric_a} − {f.metric_b} is clearly positive on {', '.join(f.a_better_on)} but clearly "
        f"negative on {', '.join(f.b_better_on)}" for f in flips) + ".") if flips else
        Para(f"{c}: no sign flips (no pair of metrics is clearly ordered in opposite directions on two datasets)."))
    if st.balanced_accuracy:
        ba = {(b.scorer, b.dataset): b.test_balanced_accuracy for b in st.balanced_accuracy}
        out.append(Table(["metric", *e.datasets],
                         [[m, *(fmt.num(ba.get((m, d))) for d in e.datasets)] for m in st.metrics],
                         f"{c}: balanced accuracy at a threshold chosen on the other datasets of the construct "
                         "(never on the slice itself)."))
    return out


def companions(transfer: TransferSection) -> list[Block]:
    slices = transfer.slices
    if not slices:
        return []
    names = list(slices[0].auprc)
    rows = [[s.slice, fmt.num(s.prevalence, 2), *(fmt.num(s.auprc[n].auprc) for n in names),
             f"{s.evidence_length.words_mean:.0f}",
             f"{s.evidence_length.sentences_mean:.1f}"] for s in slices]
    return [Table(["slice", "prevalence", *(f"AUPRC {n}" for n in names), "evidence words (mean)",
                   "evidence sentences (mean)"], rows, "AUPRC per slice (chance = prevalence) and evidence length.")]


def build(inputs: ReportInputs, plots: Path) -> Section | None:
    transfer = None if inputs.results is None else inputs.results.transfer
    if transfer is None:
        return None
    sec = Section("transfer", "Transfer across datasets")
    statistic = transfer.statistic
    if statistic != "auroc":
        sec.add(Note(f"The metrics are compared by their {statistic_label(statistic)} with the graded human rating "
                     f"(--statistic {statistic}), not by AUROC: wherever this section says AUROC, read "
                     f"{statistic_label(statistic)}; regret is that correlation lost against the best metric."))
    if transfer.notes:
        sec.add(Para("Method notes: " + "; ".join(transfer.notes) + "."))
    sec.add(*guard("The regret plot", lambda: [f for f in [regret_plot(transfer, plots)] if f]))
    for c, e in transfer.constructs.items():
        st = e.statistics if e.status == "ok" else None
        if st is None:
            sec.add(Note(f"{c}: not computed — {e.reason if e.reason is not None else e.status}."))
            continue
        sec.add(*guard(f"Transfer for {c}", construct_blocks, c, e, st))
    sec.add(*guard("The AUPRC table", companions, transfer))
    return sec
