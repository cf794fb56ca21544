"""Judge agreement (agreement.json): Cohen's κ with clustered CIs per slice, and the confusion matrices."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from attrib_audit.audit.agreement import Agreement, Kappa
from attrib_audit.report import fmt, style
from attrib_audit.report.blocks import Block, Note, Para, Section, Table, guard
from attrib_audit.report.figcache import cached_figure

POOLED = "all slices (pooled)"


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text).strip("_").lower()


def _rows(pair: Agreement) -> list[tuple[str, Kappa]]:
    """(slice name, κ) for the pooled row and each slice."""
    return [(POOLED, pair.overall)] + [(k.slice or POOLED, k) for k in pair.slices]


@cached_figure
def confusion_plot(pair: Agreement, plots: Path) -> Any:
    plt = style.pyplot()

    rows = _rows(pair)
    n = len(rows)
    cols = min(n, 5)
    grid_rows = -(-n // cols)
    with style.rc():
        fig, axes = plt.subplots(grid_rows, cols, squeeze=False, layout="constrained",
                                 figsize=(1.9 * cols + 0.6, 2.0 * grid_rows + 0.5))
        for ax in axes.ravel()[n:]:
            ax.set_visible(False)
        for ax, (name, r) in zip(axes.ravel(), rows):
            cm = np.asarray(r.confusion.counts, dtype=float)
            labels = ["not attr." if "not" in str(x) else "attr." for x in r.confusion.labels]
            ax.imshow(cm, cmap="Blues", vmin=0, vmax=max(cm.max(), 1))
            for (i, j), v in np.ndenumerate(cm):
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=9,
                        color="white" if v > 0.6 * cm.max() else "black")
            ax.set_xticks(range(len(labels)), labels)
            ax.set_yticks(range(len(labels)), labels)
            k = "κ undefined" if not fmt.finite(r.kappa) else f"κ = {r.kappa:.2f}"
            ax.set_title(f"{name.split(':', 1)[-1]}\n{k}", fontsize=8)
            for side in ax.spines.values():
                side.set_visible(False)
        fig.supxlabel(f"{pair.b} ({pair.b_from})")
        fig.supylabel(f"{pair.a} ({pair.a_from})")
        return style.save(fig, plots, f"kappa_{_slug(pair.a)}_vs_{_slug(pair.b)}",
                          f"Confusion matrices of {pair.a} (rows) against {pair.b} (columns), counts of pairs, "
                          "with Cohen's κ per slice.")


def pair_blocks(pair: Agreement, plots: Path) -> list[Block]:
    out: list[Block] = [Table(["slice", "Cohen's κ [95% CI]", "raw agreement", "n", "excluded (no rating)"],
                 [[name, fmt.ci(r.kappa, r.ci_low, r.ci_high) if fmt.finite(r.kappa) else "undefined",
                   fmt.pct(r.raw_agreement), str(r.n), str(r.n_excluded)] for name, r in _rows(pair)],
                 f"{pair.a} ({pair.a_from}) vs {pair.b} ({pair.b_from}); {pair.ci}.")]
    excluded = sum(r.n_excluded for r in pair.slices)
    if excluded:
        out.append(Note(f"{excluded} rows had no rating from one rater (e.g. a failed judgement) "
                        "and are left out of κ."))
    out += guard(f"The confusion matrices of {pair.a} vs {pair.b}", lambda: [confusion_plot(pair, plots)])
    return out


def build(inputs: Any, plots: Path) -> Section | None:
    if inputs.agreement is None or not inputs.agreement.pairs:
        return None
    sec = Section("agreement", "Judge agreement (Cohen's κ)")
    sec.add(Para(f"From {inputs.source('agreement')}: agreement between two raters (an LLM judge, another scorer "
                 "binarised at a threshold, or the human labels), per slice."))
    for pair in inputs.agreement.pairs:
        sec.add(*guard(f"Agreement {pair.a} vs {pair.b}", pair_blocks, pair, plots))
    return sec
