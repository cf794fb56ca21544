"""Headline, paired differences and the truncation/failure counts, read from results.json."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Sequence

import numpy as np

from attrib_audit.audit.results import PairedRow, TruncationRow
from attrib_audit.report import fmt, style
from attrib_audit.report.blocks import Note, Para, Section, Table
from attrib_audit.report.figcache import cached_figure
from attrib_audit.report.transfer import headline_blocks
from attrib_audit.report.view import AuditView


def _winners(view: AuditView) -> list[str]:
    """Per construct, which metric has the highest point AUROC on how many slices (a description, not a test)."""
    lines = []
    for construct, slices in view.constructs.items():
        tally: dict[str, int] = defaultdict(int)
        defined = 0
        for sl in slices:
            raw = {n: c.auroc if (c := view.cell(n, sl)) else None for n in view.scorers}
            vals = {n: v for n, v in raw.items() if fmt.finite(v)}
            if vals:
                defined += 1
                top = max(vals.values())
                for n, v in vals.items():
                    if v == top:
                        tally[n] += 1
        if not defined:
            lines.append(f"{construct}: no slice has a defined AUROC.")
            continue
        ranked = sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append(f"{construct} ({len(slices)} slice{'s' * (len(slices) != 1)}): highest point AUROC — "
                     + ", ".join(f"{n} on {k} of {defined}" for n, k in ranked) + ".")
    return lines


def heavy_truncation(view: AuditView, threshold: float = 0.5) -> dict[tuple[str, str], str]:
    """(scorer, slice) → caveat, where at least `threshold` of the slice's pairs were cut."""
    return {(name, sl): view.caveat(name, sl) for (name, sl), t in sorted(view.truncation.items())
            if t.n and t.pairs_truncated / t.n >= threshold}


def headline(inputs, plots: Path) -> Section | None:
    results = inputs.results
    if results is None or not results.auroc:
        return None
    view = AuditView.of(results)
    sec = Section("headline", "Headline")
    heavy = heavy_truncation(view)
    if results.transfer is not None:
        sec.add(*headline_blocks(results.transfer, heavy, results.auroc, results.paired, results.correlations))
    else:
        sec.add(Note("These results hold no transfer statistics (portability verdicts, leave-one-dataset-out "
                     "regret), so this report cannot say which metric is safe to use on a new dataset; it "
                     "describes each slice only."))
        sec.add(*(Para(line) for line in _winners(view)))
    if heavy:
        sec.add(Note("Half or more of the pairs were truncated for: " + "; ".join(f"{n} on {sl}: {text}"
                                                                             for (n, sl), text in heavy.items())
                     + ". Those AUROCs judge the metric on cut evidence."))
    for u in results.unavailable:
        sec.add(Note(f"Not run: {u.scorer} ({u.reason})."))
    return sec


def _direction(p: PairedRow) -> str:
    if not p.excludes_zero:
        return "no clear difference (CI includes 0)"
    return f"{p.scorer_a} higher" if p.diff is not None and p.diff > 0 else f"{p.scorer_b} higher"


def sign_flips(view: AuditView, paired: Sequence[PairedRow]) -> list[str]:
    """Pairs whose saved CI excludes 0 in opposite directions on two slices of one construct."""
    construct_of = {sl: c for c, slices in view.constructs.items() for sl in slices}
    sides: dict[tuple, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for p in paired:
        if p.excludes_zero and fmt.finite(p.diff) and p.slice in construct_of:
            sides[(construct_of[p.slice], p.scorer_a, p.scorer_b)][int(np.sign(p.diff))].append(p.slice)
    return [f"{c}: {a} − {b} is positive on {', '.join(s[1])} but negative on {', '.join(s[-1])}"
            for (c, a, b), s in sorted(sides.items()) if s[1] and s[-1]]


@cached_figure
def paired_plot(view: AuditView, paired: Sequence[PairedRow], plots: Path):
    plt = style.pyplot()
    from matplotlib.lines import Line2D

    pairs = sorted({(p.scorer_a, p.scorer_b) for p in paired})
    cell = {(p.scorer_a, p.scorer_b, p.slice): p for p in paired}
    heights = [len(s) for s in view.constructs.values()]
    step = 0.8 / len(pairs)
    with style.rc():
        fig, axes = plt.subplots(len(heights), 1, squeeze=False, sharex=True, layout="constrained",
                                 figsize=(7.2, 1.1 + (0.2 * len(pairs) + 0.25) * sum(heights) + 0.3 * len(heights)),
                                 gridspec_kw={"height_ratios": heights})
        for ax, (construct, slices) in zip(axes[:, 0], view.constructs.items()):
            for k, (a, b) in enumerate(pairs):  # one bar set and two marker sets per pair, as the forest plot draws
                shown = [(i, p) for i, p in ((i, cell.get((a, b, sl))) for i, sl in enumerate(slices))
                         if p and all(fmt.finite(x) for x in (p.diff, p.ci_low, p.ci_high))]
                if not shown:
                    continue
                y = np.array([i for i, _ in shown]) + (k - (len(pairs) - 1) / 2) * step
                x, lo, hi = (np.array(v, dtype=np.float64) for v in zip(*((p.diff, p.ci_low, p.ci_high)
                                                                            for _, p in shown)))
                filled = np.array([p.excludes_zero for _, p in shown])
                ax.errorbar(x, y, xerr=np.vstack([x - lo, hi - x]), fmt="none", ecolor=style.colour(k), elinewidth=1.1,
                            capsize=2)
                for mask, face in ((filled, style.colour(k)), (~filled, "white")):
                    ax.plot(x[mask], y[mask], linestyle="none", marker=style.marker(k), markersize=5,
                            markerfacecolor=face, markeredgecolor=style.colour(k))
            style.slice_panel(ax, slices, construct, reference=0.0)
        axes[-1, 0].set_xlabel("AUROC difference A − B with 95% paired-bootstrap CI")
        handles = [Line2D([], [], color=style.colour(k), marker=style.marker(k), label=f"{a} − {b}")
                   for k, (a, b) in enumerate(pairs)]
        fig.legend(handles=handles, loc="outside upper center", ncol=min(len(pairs), 3), frameon=False)
        return style.save(fig, plots, "paired_differences",
                          "Paired AUROC differences per slice; a filled marker means the CI excludes 0, "
                          "hollow means no clear difference.")


def paired(inputs, plots: Path) -> Section | None:
    results = inputs.results
    rows = results.paired if results is not None else []
    if results is None or not rows:
        return None
    view = AuditView.of(results)
    sec = Section("paired", "Paired differences")
    sec.add(Para("Differences of AUROC between two metrics on the same bootstrap resamples of a slice (paired), "
                 "so the interval reflects the comparison rather than two separate intervals."))
    lost = [p for p in rows if any(p.n_dropped.values())]
    if lost:
        sec.add(Note("Each difference uses only the rows both metrics scored: " + "; ".join(
            f"{p.scorer_a} − {p.scorer_b} on {p.slice}: {p.n} rows ("
            + ", ".join(f"{k} failed on {v}" for k, v in p.n_dropped.items() if v) + ")" for p in lost) + "."))
    if results.transfer is None:  # the transfer section draws its own sign flips
        flips = sign_flips(view, rows)
        sec.add(Note("Sign flips (CI excludes 0 in opposite directions on two slices of one construct): "
                     + "; ".join(flips) + ".") if flips else
                Para("No sign flips: no pair of metrics is clearly ordered one way on one slice and the other way "
                     "on another slice of the same construct."))
    sec.add(paired_plot(view, rows, plots))
    order = {sl: i for i, sl in enumerate(view.slices)}
    body = [[f"{p.scorer_a} − {p.scorer_b}", p.slice, fmt.ci(p.diff, p.ci_low, p.ci_high, signed=True), str(p.n),
             _direction(p)]
            for p in sorted(rows, key=lambda p: (p.scorer_a, p.scorer_b, order.get(p.slice, 1 << 30)))]
    sec.add(Table(["pair (A − B)", "slice", "difference [95% CI]", "n", "reading"], body))
    return sec


def _truncation_cell(t: TruncationRow | None) -> str:
    if t is None:
        return fmt.DASH
    text = "none cut" if not t.pairs_truncated else (
        f"{t.pairs_truncated}/{t.n} pairs ({fmt.pct(t.pairs_truncated / t.n)}), "
        f"{fmt.pct(t.share_tokens_cut)} of tokens")
    chunks = t.mean_chunks
    return text + (f"; {fmt.num(chunks, 2)} windows per pair" if fmt.finite(chunks) and chunks != 1 else "")


def evidence(inputs, plots: Path) -> Section | None:
    results = inputs.results
    if results is None or not (results.truncation or results.failures):
        return None
    view = AuditView.of(results)
    sec = Section("evidence", "Truncation and failures")
    sec.add(Para("How much evidence each scorer saw: pairs cut at the scorer's input window (and the share of "
                 "input tokens cut), the mean number of evidence windows scored, and rows that failed "
                 "(e.g. an unparseable judge answer), which are excluded from AUROC, never imputed."))
    header = ["construct", "slice"] + view.scorers
    trows, frows, examples = [], [], []
    for construct, slices in view.constructs.items():
        for sl in slices:
            tr, fr = [construct, sl], [construct, sl]
            for name in view.scorers:
                t = view.truncation.get((name, sl))
                tr.append(_truncation_cell(t))
                f = view.failures.get((name, sl))
                fr.append(fmt.DASH if f is None else f"{f.n_failed}/{f.n}"
                          + (f" ({f.n_clamped} clamped)" if f.n_clamped else ""))
                if f and f.examples:
                    examples.append(f"{name} on {sl}: " + " | ".join(map(str, f.examples)))
            trows.append(tr)
            frows.append(fr)
    sec.add(Table(header, trows, "Truncation per scorer and slice: pairs cut at the window "
                  "(share of input tokens cut); "
                  "mean evidence windows when chunked."))
    if any(f.n_failed or f.n_clamped for f in view.failures.values()):
        sec.add(Table(header, frows, "Failed rows per scorer and slice (excluded from AUROC); clamped: judge answers "
                                     "outside [0, 1] set to the nearest end and kept."))
        sec.add(*(Para("Failure examples — " + e) for e in examples))
    elif view.failures:
        sec.add(Para("No scorer failed on any row."))
    return sec
