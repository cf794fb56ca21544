"""Per-slice AUROC: the table (with truncation and failures next to each number), the heatmap,
the forest plot and the rank chart, all read from results.json."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from attrib_audit.report import fmt, style
from attrib_audit.report.blocks import Note, Para, Section, Table
from attrib_audit.report.figcache import cached_figure
from attrib_audit.report.view import AuditView
from attrib_audit.stats.auroc import average_ranks

MAJORITY_CUT = 0.5  # share of truncated pairs from which the forest plot draws a hollow marker


def auroc_table(view: AuditView, ci_text: str) -> Table:
    header = ["construct", "slice", "n", "pos"] + view.scorers
    rows = []
    for construct, slices in view.constructs.items():
        for sl in slices:
            meta = view.slices[sl]
            row = [construct, sl, str(meta.n), str(meta.n_pos)]
            for name in view.scorers:
                c = view.cell(name, sl)
                if c is None or not fmt.finite(c.auroc):
                    row.append((c.note if c else None) or
                               ("undefined (one class)" if meta.status == "one_class" else fmt.DASH))
                    continue
                caveat = view.caveat(name, sl)
                row.append(fmt.ci(c.auroc, c.ci_low, c.ci_high) + (f" ({caveat})" if caveat else ""))
            rows.append(row)
    return Table(header, rows, f"AUROC [{ci_text}] per slice; a caveat in brackets says how much of the evidence "
                               "behind that number was cut at the scorer's window, how many rows failed, "
                               "or how many judge "
                               "answers fell outside [0, 1] and were clamped.")


def _grid(view: AuditView, slices: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(point, low, high, share of pairs truncated), each (len(slices), n_scorers), NaN where undefined."""
    shape = (len(slices), len(view.scorers))
    point, lo, hi, cut = (np.full(shape, np.nan) for _ in range(4))
    for i, sl in enumerate(slices):
        for j, name in enumerate(view.scorers):
            c = view.cell(name, sl)
            for arr, v in ((point, c and c.auroc), (lo, c and c.ci_low), (hi, c and c.ci_high)):
                if fmt.finite(v):
                    arr[i, j] = v
            t = view.truncation.get((name, sl))
            if t and t.n:
                cut[i, j] = t.pairs_truncated / t.n
    return point, lo, hi, cut


@cached_figure
def heatmap(view: AuditView, plots: Path):
    plt = style.pyplot()
    from matplotlib.colors import Normalize

    grids = {c: _grid(view, s) for c, s in view.constructs.items()}
    allv = np.concatenate([g[0].ravel() for g in grids.values()])
    lowest = np.nanmin(allv) if np.isfinite(allv).any() else 0.5
    norm = Normalize(vmin=min(0.5, np.floor(lowest * 10) / 10), vmax=1.0)
    cmap = plt.get_cmap(style.HEATMAP_CMAP).with_extremes(bad="#dddddd")
    m = len(view.scorers)
    heights = [len(s) for s in view.constructs.values()]
    label = max(len(s) for s in view.slices) * 0.075  # inches of tick label, so titles are not clipped
    title = max(len(c) for c in view.constructs) * 0.09 + 1.0
    with style.rc():
        fig, axes = plt.subplots(len(heights), 1, squeeze=False, layout="constrained",
                                 figsize=(max(label + 1.15 * m, title) + 1.6,
                                          0.9 + 0.62 * sum(heights) + 0.35 * len(heights)),
                                 gridspec_kw={"height_ratios": heights})
        for ax, (construct, slices) in zip(axes[:, 0], view.constructs.items()):
            point, lo, hi, cut = grids[construct]
            image = ax.imshow(np.ma.masked_invalid(point), cmap=cmap, norm=norm, aspect="auto")
            for i in range(len(slices)):
                for j in range(m):
                    if not np.isfinite(point[i, j]):
                        ax.text(j, i, "n/a", ha="center", va="center", fontsize=8, color="#333333")
                        continue
                    r, g, b, _ = cmap(norm(point[i, j]))
                    ink = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"
                    text = f"{point[i, j]:.2f}"
                    if np.isfinite(lo[i, j]) and np.isfinite(hi[i, j]):
                        text += f"\n±{(hi[i, j] - lo[i, j]) / 2:.2f}"
                    if cut[i, j] > 0:
                        text += f"\ncut {fmt.pct(cut[i, j])}"
                    ax.text(j, i, text, ha="center", va="center", fontsize=8, color=ink, linespacing=1.1)
            ax.set_xticks(range(m), view.scorers)
            ax.set_yticks(range(len(slices)), slices)
            ax.tick_params(length=0)
            for side in ax.spines.values():
                side.set_visible(False)
            ax.set_title(f"construct: {construct}", loc="left")
            ax.set_ylabel("dataset slice")
        axes[-1, 0].set_xlabel("metric")
        fig.colorbar(image, ax=axes[:, 0].tolist(), label="AUROC (0.5 = chance)", shrink=0.9)
        return style.save(fig, plots, "auroc_heatmap",
                          "AUROC per metric and slice; ± is the half-width of the 95% clustered-bootstrap CI; "
                          "“cut k%” is the share of pairs truncated at the scorer's window; grey = undefined.")


@cached_figure
def forest(view: AuditView, plots: Path):
    plt = style.pyplot()
    from matplotlib.lines import Line2D

    m = len(view.scorers)
    heights = [len(s) for s in view.constructs.values()]
    step = 0.8 / max(m, 1)
    with style.rc():
        fig, axes = plt.subplots(len(heights), 1, squeeze=False, sharex=True, layout="constrained",
                                 figsize=(7.2, 1.1 + (0.22 * m + 0.25) * sum(heights) + 0.3 * len(heights)),
                                 gridspec_kw={"height_ratios": heights})
        for ax, (construct, slices) in zip(axes[:, 0], view.constructs.items()):
            point, lo, hi, cut = _grid(view, slices)
            for j in range(m):
                y = np.arange(len(slices)) + (j - (m - 1) / 2) * step
                ok = np.isfinite(point[:, j]) & np.isfinite(lo[:, j]) & np.isfinite(hi[:, j])
                err = np.vstack([point[ok, j] - lo[ok, j], hi[ok, j] - point[ok, j]])
                ax.errorbar(point[ok, j], y[ok], xerr=err, fmt="none", ecolor=style.colour(j),
                            elinewidth=1.2, capsize=2)
                hollow = ok & (cut[:, j] >= MAJORITY_CUT)
                for mask, face in ((ok & ~hollow, style.colour(j)), (hollow, "white")):
                    ax.plot(point[mask, j], y[mask], linestyle="none", marker=style.marker(j), markersize=5,
                            markerfacecolor=face, markeredgecolor=style.colour(j))
            style.slice_panel(ax, slices, construct, reference=0.5)
        axes[-1, 0].set_xlabel("AUROC with 95% clustered-bootstrap CI (dashed line: chance, 0.5)")
        handles = [Line2D([], [], color=style.colour(j), marker=style.marker(j), linestyle="-", label=name)
                   for j, name in enumerate(view.scorers)]
        fig.legend(handles=handles, loc="outside upper center", ncol=min(m, 6), frameon=False)
        return style.save(fig, plots, "auroc_forest",
                          "AUROC and 95% CI per slice; a hollow marker means the scorer truncated at least "
                          f"{fmt.pct(MAJORITY_CUT)} of that slice's pairs.")


@cached_figure
def rank_chart(view: AuditView, plots: Path):
    """One panel per construct with two or more slices; None when no construct has two."""
    plt = style.pyplot()

    panels = {c: s for c, s in view.constructs.items() if len(s) >= 2}
    if not panels or len(view.scorers) < 2:
        return None
    m = len(view.scorers)
    with style.rc():
        cols = min(len(panels), 2)
        rows = -(-len(panels) // cols)
        widest = max(len(s) for s in panels.values())
        fig, axes = plt.subplots(rows, cols, squeeze=False, layout="constrained",
                                 figsize=(cols * max(3.6, 0.8 * widest + 1.2) + 1.0, 3.2 * rows))
        for ax in axes.ravel()[len(panels):]:
            ax.set_visible(False)
        for ax, (construct, slices) in zip(axes.ravel(), panels.items()):
            point = _grid(view, slices)[0]
            ranks = np.full(point.shape, np.nan)
            for i in range(len(slices)):
                ok = np.isfinite(point[i])
                if ok.any():
                    ranks[i, ok] = average_ranks(-point[i, ok])  # 1 = highest AUROC; ties share the mean rank
            x = np.arange(len(slices))
            for j, name in enumerate(view.scorers):
                ax.plot(x, ranks[:, j], color=style.colour(j), marker=style.marker(j), markersize=5, linewidth=1.6,
                        label=name)
            ax.set_xticks(x, [s.split(":", 1)[-1] for s in slices], rotation=30, ha="right")
            ax.set_yticks(range(1, m + 1))
            ax.set_ylim(m + 0.4, 0.6)
            ax.set_title(f"construct: {construct}", loc="left")
            ax.set_xlabel("dataset slice")
            ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
            ax.set_ylabel("rank of metric (1 = highest AUROC)")
        fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside right center", frameon=False)
        return style.save(fig, plots, "rank_chart",
                          "Rank of each metric's point AUROC per slice (1 = best; ties share the mean rank). "
                          "Crossing lines mean the metrics' order changes between datasets of one construct.")


def build(inputs, plots: Path) -> Section | None:
    results = inputs.results
    if results is None or not results.auroc:
        return None
    view = AuditView.of(results)
    ci_text = results.config.ci
    sec = Section("auroc", "AUROC per metric and slice")
    sec.add(Para(f"Each slice is scored against its human labels; the interval is the {ci_text}. "
                 "Constructs are shown separately and never pooled."))
    sec.add(auroc_table(view, ci_text), heatmap(view, plots), forest(view, plots))
    chart = rank_chart(view, plots)
    sec.add(chart if chart else Note("No rank chart: no construct has two or more slices with two or more metrics."))
    return sec
