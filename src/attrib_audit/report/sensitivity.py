"""The `sensitivity` block of results.json: window and chunking changes, matched-length AUROC, short vs long
halves (the plot), leave-one-dataset-out verdicts, the exchangeability permutation, length correlates."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from attrib_audit.report import fmt, style
from attrib_audit.report.blocks import Block, Note, Para, Section, Table, guard
from attrib_audit.report.correlations import statistic_label
from attrib_audit.report.figcache import cached_figure
from attrib_audit.report.inputs import ReportInputs

if TYPE_CHECKING:  # the records' module imports the statistics (scipy), which `--help` must not load
    from attrib_audit.audit.sensitivity import (
        ChunkRow,
        ChunkSection,
        ExchangeabilityRow,
        HalfScorer,
        HalvesRow,
        LengthSection,
        LodoDrop,
        LodoRow,
        SpearmanRow,
        VerdictChange,
        WindowRow,
        WindowSection,
    )


def _diff(r: WindowRow | ChunkRow | HalfScorer) -> str:
    return fmt.ci(r.diff, r.ci_low, r.ci_high, signed=True) + (" *" if r.excludes_zero else "")


def _changed(v: VerdictChange | LodoDrop) -> str:
    flags = (("recommended", v.recommended_changed), ("verdict", v.verdict_changed),
             ("portability", v.portability_changed))
    return ", ".join(k for k, on in flags if on) or "no"


def verdict_table(rows: Sequence[VerdictChange], caption: str) -> Table:
    return Table(["construct", "before", "after", "portable before", "portable after", "changed"],
                 [[v.construct + (f" ({v.scorer} → {v.chunked})" if v.chunked is not None else ""),
                   f"{v.before.recommended} [{v.before.verdict}]",
                   f"{v.after.recommended} [{v.after.verdict}]",
                   ", ".join(v.before.portable) or fmt.DASH, ", ".join(v.after.portable) or fmt.DASH,
                   _changed(v)] for v in rows], caption)


def window_blocks(w: WindowSection) -> list[Block]:
    n = w.window
    if not w.rows:
        return [Para(f"Window sensitivity at {n} tokens: no scorer of this run has a token window to vary ("
                     + "; ".join(f"{x.scorer}: {x.reason}" for x in w.skipped) + ").")]
    out: list[Block] = [Table(["slice", "scorer", "AUROC (own window)", f"AUROC @{n}",
                               f"@{n} − own [95% CI]", "pairs cut", "failed"],
                 [[r.slice, r.scorer, fmt.num(r.auroc), fmt.num(r.auroc_alt), _diff(r),
                   f"{r.pairs_truncated} → {r.pairs_truncated_alt}", f"{r.n_failed} → {r.n_failed_alt}"]
                  for r in w.rows],
                 f"Window sensitivity: every scorer with a token window rescored at {n} tokens "
                 "(* the paired CI excludes 0).")]
    for x in w.skipped:
        out.append(Para(f"Not varied: {x.scorer} ({x.reason})."))
    flips = [r for r in w.ranking if r.changed]
    out.append(Note("The metric ranking changes at the other window on " + "; ".join(
        f"{r.slice} ({' > '.join(r.ranking)} → {' > '.join(r.ranking_alt)})" for r in flips) + ".") if flips
        else Para(f"The metric ranking is the same at {n} tokens on every slice."))
    out.append(verdict_table(w.verdicts, f"Verdict per construct at the scorers' own windows and at {n} tokens."))
    return out


def chunk_blocks(ch: ChunkSection) -> list[Block]:
    return [Table(["slice", "scorer", "AUROC truncated", "AUROC chunked", "chunked − truncated [95% CI]", "pairs cut",
                   "windows / pair"],
                  [[r.slice, f"{r.scorer} → {r.chunked}", fmt.num(r.auroc), fmt.num(r.auroc_chunked),
                    _diff(r), f"{r.pairs_truncated} → {r.pairs_truncated_chunked}", f"{r.mean_chunks:.2f}"]
                   for r in ch.rows],
                  "Chunked long evidence: each scorer beside its variant that scores sentence windows fitting the "
                  "encoder and aggregates them, on the audit's own bootstrap draws (* the paired CI excludes 0)."),
            verdict_table(ch.verdicts, "Verdict per construct with the truncating scorer, and with its chunked "
                                       "variant in its place.")]


def length_blocks(ln: LengthSection) -> list[Block]:
    out: list[Block] = []
    for b in ln.bins:
        e = b.edges
        labels = [f"{e[j]:.0f}–{e[j + 1]:.0f} words" if len(e) > 1 else f"{e[0]:.0f} words" for j in range(b.n_bins)]
        cell = {(c.dataset, c.scorer, c.bin): c for c in b.cells}
        rows = [[d, s, *(f"{fmt.num(cell[(d, s, j)].auroc)} (n {cell[(d, s, j)].n})" for j in range(b.n_bins))]
                for d, s in dict.fromkeys((c.dataset, c.scorer) for c in b.cells)]
        out.append(Table(["dataset", "scorer", *labels], rows,
                         f"{b.construct}: AUROC per evidence-length bin, bins shared by the construct's datasets "
                         "(quantiles of their pooled word counts), so datasets are compared at matched length."))
        out.append(Para(f"{b.construct}, best metric per bin: " + "; ".join(
            f"{labels[x.bin]}: " + (", ".join(f"{d} → {m}" for d, m in x.best_per_dataset.items()) or fmt.DASH)
            + (" (the same on every dataset with enough rows)" if x.same_best else "") for x in b.best) + "."))
    halves = ln.halves
    if halves:
        names = [s.scorer for s in halves[0].scorers]
        out.append(Table(["slice", "median words", "best short → long", *(f"{n}: long − short" for n in names)],
                         [[h.slice, f"{h.median_words:.0f}", f"{h.best_short} → {h.best_long}",
                           *(_diff(s) for s in h.scorers)] for h in halves],
                         "Within each slice: AUROC on pairs above the median evidence length minus AUROC on those at "
                         "or below it, with a 95% CI from the slice's clustered bootstrap (* excludes 0)."))
    return out


def lodo_blocks(rows: Sequence[LodoRow]) -> list[Block]:
    out: list[Block] = []
    for x in rows:
        if x.status != "ok" or x.full is None:
            out.append(Para(f"{x.construct}: leave-one-dataset-out verdict not computed ({x.reason})."))
            continue
        f = x.full
        out.append(Table(["dropped", "recommended", "verdict", "portable", "changed"],
                         [["none (all datasets)", f.recommended or fmt.DASH, f.verdict,
                           ", ".join(f.portable) or fmt.DASH, ""]]
                         + [[d.dropped, d.outcome.recommended or fmt.DASH, d.outcome.verdict,
                             ", ".join(d.outcome.portable) or fmt.DASH, _changed(d)] for d in x.drops or []],
                         f"{x.construct}: the recommended metric and portable metrics with each dataset dropped"
                         + (f" (by {statistic_label(x.statistic)})" if x.statistic else "") + " — "
                         + ("stable under every drop." if x.stable else "the recommendation or verdict changes.")))
    return out


def exchangeability_blocks(rows: Sequence[ExchangeabilityRow]) -> list[Block]:
    out: list[Block] = []
    for x in rows:
        out.append(Para(f"{x.construct}: exchangeability permutation of dataset assignment (clusters shuffled "
                        f"across datasets, {x.test.n_perm} permutations): "
                        f"p(interaction) = {fmt.num(x.test.p_interaction, 4)}, "
                        f"p(dataset) = {fmt.num(x.test.p_dataset, 4)}; beside it, the residual permutation of the "
                        f"transfer section gives p(interaction) = {fmt.num(x.p_interaction_residual, 4)}."))
    if rows:
        out.append(Note(f"Caveat: {rows[0].caveat}."))
    return out


def spearman_table(rows: Sequence[SpearmanRow]) -> list[Block]:
    if not rows:
        return []
    names = list(dict.fromkeys(r.scorer for r in rows))
    cell = {(r.slice, r.scorer): r for r in rows}
    return [Table(["slice", *names],
                  [[sl, *(f"{fmt.num(cell[(sl, n)].rho_neg, 2)} / {fmt.num(cell[(sl, n)].rho_pos, 2)}"
                          for n in names)]
                   for sl in dict.fromkeys(r.slice for r in rows)],
                  "Spearman ρ of score with evidence words within each label class (label 0 / label 1): a score "
                  "that tracks length inside a class is partly measuring length.")]


@cached_figure
def halves_plot(ln: LengthSection, plots: Path):
    plt = style.pyplot()
    from matplotlib.lines import Line2D

    halves = ln.halves
    if not halves:
        return None
    names = [s.scorer for s in halves[0].scorers]
    panels: dict[str, list[HalvesRow]] = {}
    for h in halves:
        panels.setdefault(h.construct or "unspecified", []).append(h)
    m = len(names)
    step = 0.8 / max(m, 1)
    with style.rc():
        fig, axes = plt.subplots(len(panels), 1, squeeze=False, sharex=True, layout="constrained",
                                 figsize=(7.2, 1.1 + (0.22 * m + 0.25) * len(halves) + 0.3 * len(panels)),
                                 gridspec_kw={"height_ratios": [len(v) for v in panels.values()]})
        for ax, (construct, hs) in zip(axes[:, 0], panels.items()):
            for j in range(m):
                rows = [h.scorers[j] for h in hs]
                y = np.arange(len(hs)) + (j - (m - 1) / 2) * step
                d, lo, hi = (np.array(v, dtype=float) for v in zip(*((r.diff, r.ci_low, r.ci_high) for r in rows)))
                ok = np.isfinite(d) & np.isfinite(lo) & np.isfinite(hi)
                ax.errorbar(d[ok], y[ok], xerr=np.vstack([d[ok] - lo[ok], hi[ok] - d[ok]]), fmt="none",
                            ecolor=style.colour(j), elinewidth=1.2, capsize=2)
                ax.plot(d[ok], y[ok], linestyle="none", marker=style.marker(j), markersize=5, color=style.colour(j))
            style.slice_panel(ax, [h.slice for h in hs], construct, reference=0.0)
        axes[-1, 0].set_xlabel("AUROC on long-evidence half − AUROC on short half, 95% CI (dashed: no length effect)")
        fig.legend(handles=[Line2D([], [], color=style.colour(j), marker=style.marker(j), label=n)
                            for j, n in enumerate(names)], loc="outside upper center", ncol=min(m, 6), frameon=False)
        return style.save(fig, plots, "length_halves",
                          "Does evidence length move a metric's AUROC? Each slice split at its median evidence length; "
                          "long − short AUROC per metric with its 95% clustered-bootstrap CI.")


def build(inputs: ReportInputs, plots: Path) -> Section | None:
    sen = None if inputs.results is None else inputs.results.sensitivity
    if sen is None:
        return None
    sec = Section("sensitivity", "Sensitivity: length, truncation and single datasets")
    if sen.notes:
        sec.add(Para("Method notes: " + "; ".join(sen.notes) + "."))
    if sen.window:
        sec.add(*guard("The window sensitivity", window_blocks, sen.window))
    if sen.chunking:
        sec.add(*guard("The chunking comparison", chunk_blocks, sen.chunking))
    sec.add(*guard("The leave-one-dataset-out verdicts", lodo_blocks, sen.lodo))
    sec.add(*guard("The short/long plot", lambda: [f for f in [halves_plot(sen.length, plots)] if f]))
    sec.add(*guard("The matched-length tables", length_blocks, sen.length))
    sec.add(*guard("The exchangeability permutation", exchangeability_blocks, sen.exchangeability))
    sec.add(*guard("The length correlates", spearman_table, sen.length_spearman))
    return sec
