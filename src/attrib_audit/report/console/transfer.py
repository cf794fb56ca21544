"""The transfer section: does metric quality carry across a construct's datasets."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from attrib_audit.report import fmt
from attrib_audit.report.console.grid import MISSING, _num, grid, short_names

if TYPE_CHECKING:  # the records' module imports the statistics (scipy), which `--help` must not load
    from attrib_audit.audit.transfer import ConstructTransfer, TransferSection

_SIGN = {1: " *", 0: "", -1: " *"}  # the difference's own sign says which way


def signed_ci(diff: float, lo: float, hi: float) -> str:
    """A difference with its CI, `+0.012 [-0.010, 0.034]`; `—` when there is none (saved as null, read as NaN)."""
    if diff is None or math.isnan(diff):
        return MISSING
    return f"{fmt.num(diff, signed=True)} [{_num(lo)}, {_num(hi)}]"


def format_construct(c: str, e: ConstructTransfer) -> list[str]:
    """One construct's transfer statistics, dataset names shortened where they share a `dataset:` prefix."""
    out = [f"== transfer within construct '{c}' ({len(e.datasets)} datasets) =="]
    st = e.statistics if e.status == "ok" else None
    if st is None:
        return out + [f"  not computed: {e.reason}"]
    for x in e.excluded_metrics or []:
        out.append(f"  left out: {x.scorer} ({x.reason})")
    short = short_names(e.datasets)
    if any(k != v for k, v in short.items()):
        prefix = e.datasets[0].split(":", 1)[0]
        out.append(f"  datasets are the slices {prefix}:<name>; printed by <name>")

    def sh(d: str) -> str:
        return short.get(d, d)

    ds = [sh(d) for d in e.datasets]
    out.append("Best per dataset: " + "; ".join(f"{sh(b.dataset)}: {b.best} {fmt.ci(b.auroc, b.ci_low, b.ci_high)}"
                                                 for b in st.best_per_dataset))
    out.append("Portability (AUROC within the best metric's 95% CI on every dataset; paired: CI of best − m holds 0):")
    for p in st.portability:
        plain = "portable" if p.portable else "not portable (breaks on " + ", ".join(map(sh, p.breaks_on)) + ")"
        paired = "yes" if p.paired_portable else "no (" + ", ".join(map(sh, p.paired_breaks_on)) + ")"
        out.append(f"  {p.metric}: {plain}; paired: {paired}")
    t = st.kendall_tau
    out.append("Kendall τ-b between datasets' metric rankings (p):")
    out += grid(["", *ds], [[a, *(("1" if i == j else f"{_num(t.tau[i][j], 2)} ({fmt.pvalue(t.p[i][j])})")
                                 for j in range(len(ds)))] for i, a in enumerate(ds)], indent="  ")
    w = st.kendall_w
    out.append(f"Kendall's W = {_num(w.w)} over {w.n_items} metrics × {w.n_raters} datasets (null mean "
               f"{_num(w.null_mean)}); rank-permutation p, concordance = {fmt.pvalue(w.p_concordance)}, "
               f"discordance = {fmt.pvalue(w.p_discordance)} ({w.n_perm} permutations)")
    r = st.regret
    out.append("Leave-one-dataset-out regret (best AUROC − metric's, mean over held-out datasets [95% CI]):")
    out += grid(["metric", "mean", "95% CI", "max", "worst on"],
                [[f.metric, _num(f.mean), f"[{_num(f.ci_low)}, {_num(f.ci_high)}]", _num(f.max),
                  sh(f.worst_dataset)] for f in r.fixed], indent="  ")
    s = r.selector
    out.append(f"  naive best-on-average selector: {fmt.ci(s.mean, s.ci_low, s.ci_high)}; "
               "picks " + ", ".join(f"{sh(d)}→{m}" for d, m in s.picks.items()))
    gap = s.minus_best_fixed_ci
    out.append(f"  lowest-regret fixed metric: {r.lowest_regret_metric}; selector − it = "
               f"{fmt.ci(s.minus_best_fixed, gap[0], gap[1])}")
    first = next((x for x in st.eps_regret if x.metrics), None)
    out.append("ε-regret: " + (f"smallest grid ε with a metric within ε of the best everywhere: {first.eps:.2f} "
                               f"({', '.join(first.metrics)})" if first else "no metric is within any grid ε of the "
                               f"best on every dataset (grid up to {st.eps_regret[-1].eps:.2f})"))
    out.append("Paired best − rest [95% CI] (*: the CI excludes 0; unmarked: it holds 0, no difference shown):")
    for d in e.datasets:
        pr = [p for p in st.paired_best_vs_rest if p.dataset == d]
        if pr:
            out.append(f"  {sh(d)} (best {pr[0].metric_a}): " + "; ".join(
                f"{p.metric_b} {signed_ci(p.diff, p.ci_low, p.ci_high)}{_SIGN[p.sign]}" for p in pr))
    flips = st.sign_flips
    out.append("Sign flips (difference CI excludes 0 in opposite directions): " + (
        "none" if not flips else "; ".join(f"{f.metric_a} − {f.metric_b}: " + ", ".join(
            f"{sh(d)} {v:+.3f}" for d, v in {**f.a_better_on, **f.b_better_on}.items()) for f in flips)))
    dc = st.decomposition
    out.append(f"Two-way decomposition of AUROC variance: dataset {_num(dc.share_dataset, 2)}, metric "
               f"{_num(dc.share_metric, 2)}, interaction {_num(dc.share_interaction, 2)}; residual permutation "
               f"(dataset difficulty fixed) p_interaction = {fmt.pvalue(dc.p_interaction)}, "
               f"p_metric = {fmt.pvalue(dc.p_metric)}")
    if st.balanced_accuracy is not None:  # the AUROC's statistics only: a graded rating has no threshold to move
        ba = {(b.scorer, b.dataset): b.test_balanced_accuracy for b in st.balanced_accuracy}
        out.append("Balanced accuracy, threshold chosen on the OTHER datasets of the construct (never on the slice):")
        out += grid(["metric", *ds], [[m, *(_num(ba[(m, d)]) for d in e.datasets)] for m in st.metrics],
                    indent="  ")
    if st.length_correlates is not None:
        out.append("Spearman ρ of AUROC vs mean evidence words / sentences across datasets (descriptive, "
                   f"n = {len(ds)} datasets):")
        out.append("  " + "; ".join(f"{x.scorer} {_num(x.rho_words, 2)} / {_num(x.rho_sentences, 2)}"
                                    for x in st.length_correlates))
    return out


def format_transfer(transfer: TransferSection, names: Sequence[str]) -> str:
    """The transfer detail: AUPRC and evidence length per slice (`names`: the audit's scorers, in order), then each
    construct's statistics."""
    out = ["AUPRC per slice (chance = prevalence) and evidence length (words / sentences, mean):"]
    out += grid(["slice", "prev", *names, "words", "sents"],
                [[s.slice, _num(s.prevalence, 2), *(_num(s.auprc[n].auprc) for n in names),
                  f"{s.evidence_length.words_mean:.0f}", f"{s.evidence_length.sentences_mean:.1f}"]
                 for s in transfer.slices], indent="  ")
    for x in transfer.excluded_slices:
        out.append(f"excluded from transfer: {x.slice} ({x.reason})")
    for c, e in transfer.constructs.items():
        out += [""] + format_construct(c, e)
    if not transfer.constructs:
        out += ["", "transfer: no construct with a usable slice; nothing was pooled."]
    return "\n".join(out)
