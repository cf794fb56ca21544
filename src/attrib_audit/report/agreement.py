"""Judge agreement (agreement.json): Cohen's κ with clustered CIs per slice, and the confusion matrices."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from attrib_audit.report import fmt, style
from attrib_audit.report.blocks import Block, Note, Para, Section, Table, guard
from attrib_audit.report.figcache import cached_figure


def pairs(agreement: dict) -> list[dict]:
    """agreement.json holds one rater pair; a `pairs` list of them is read too."""
    if "pairs" in agreement:
        return list(agreement["pairs"])
    return [agreement]


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text).strip("_").lower()


@cached_figure
def confusion_plot(pair: dict, plots: Path):
    plt = style.pyplot()

    rows = [{"slice": "all slices (pooled)", **pair["overall"]}] if pair.get("overall") else []
    rows += pair.get("slices", [])
    n = len(rows)
    cols = min(n, 5)
    grid_rows = -(-n // cols)
    with style.rc():
        fig, axes = plt.subplots(grid_rows, cols, squeeze=False, layout="constrained",
                                 figsize=(1.9 * cols + 0.6, 2.0 * grid_rows + 0.5))
        for ax in axes.ravel()[n:]:
            ax.set_visible(False)
        for ax, r in zip(axes.ravel(), rows):
            cm = np.asarray(r["confusion"]["counts"], dtype=float)
            labels = ["not attr." if "not" in str(x) else "attr." for x in r["confusion"].get("labels", ["0", "1"])]
            ax.imshow(cm, cmap="Blues", vmin=0, vmax=max(cm.max(), 1))
            for (i, j), v in np.ndenumerate(cm):
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", fontsize=9,
                        color="white" if v > 0.6 * cm.max() else "black")
            ax.set_xticks(range(len(labels)), labels)
            ax.set_yticks(range(len(labels)), labels)
            k = "κ undefined" if not fmt.finite(r.get("kappa")) else f"κ = {r['kappa']:.2f}"
            ax.set_title(f"{r['slice'].split(':', 1)[-1]}\n{k}", fontsize=8)
            for side in ax.spines.values():
                side.set_visible(False)
        fig.supxlabel(f"{pair['b']} ({pair.get('b_from', '')})")
        fig.supylabel(f"{pair['a']} ({pair.get('a_from', '')})")
        return style.save(fig, plots, f"kappa_{_slug(pair['a'])}_vs_{_slug(pair['b'])}",
                          f"Confusion matrices of {pair['a']} (rows) against {pair['b']} (columns), counts of pairs, "
                          "with Cohen's κ per slice.")


def pair_blocks(pair: dict, plots: Path) -> list:
    rows = [{"slice": "all slices (pooled)", **pair["overall"]}] if pair.get("overall") else []
    rows += pair.get("slices", [])
    out: list[Block] = [Table(["slice", "Cohen's κ [95% CI]", "raw agreement", "n", "excluded (no rating)"],
                 [[r["slice"], fmt.ci(r.get("kappa"), r.get("ci_low"), r.get("ci_high")) if fmt.finite(r.get("kappa"))
                   else "undefined", fmt.pct(r.get("raw_agreement")), str(r.get("n", fmt.DASH)),
                   str(r.get("n_excluded", fmt.DASH))] for r in rows],
                 f"{pair['a']} ({pair.get('a_from', '?')}) vs {pair['b']} ({pair.get('b_from', '?')}); "
                 f"{pair.get('ci', 'clustered bootstrap CI')}.")]
    excluded = sum(r.get("n_excluded") or 0 for r in pair.get("slices", []))
    if excluded:
        out.append(Note(f"{excluded} rows had no rating from one rater (e.g. a failed judgement) "
                        "and are left out of κ."))
    out += guard(f"The confusion matrices of {pair['a']} vs {pair['b']}", lambda: [confusion_plot(pair, plots)])
    return out


def build(inputs, plots: Path) -> Section | None:
    if not inputs.agreement:
        return None
    sec = Section("agreement", "Judge agreement (Cohen's κ)")
    sec.add(Para(f"From {inputs.source('agreement')}: agreement between two raters (an LLM judge, another scorer "
                 "binarised at a threshold, or the human labels), per slice."))
    for pair in pairs(inputs.agreement):
        sec.add(*guard(f"Agreement {pair.get('a', '?')} vs {pair.get('b', '?')}", pair_blocks, pair, plots))
    return sec
