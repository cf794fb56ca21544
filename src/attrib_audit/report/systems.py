"""The system-level section of the report: per slice, the metric to rank systems with, agreement with the human
ranking beside the label ceiling, item level vs system level, the per-system table, the reversal table, and two
figures (human pass rate vs metric mean per system with CIs on both axes; a rank chart human vs each metric).
Every number is copied from results.json's `systems` block; ranks in the rank chart order the saved point values."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from attrib_audit.audit.results import SystemsSlice
from attrib_audit.audit.systems import pick_ranker
from attrib_audit.report import fmt, style
from attrib_audit.report.blocks import Block, Note, Para, Section, Table, guard
from attrib_audit.report.figcache import cached_figure
from attrib_audit.stats.auroc import average_ranks
from attrib_audit.stats.systems import Reversal, SystemLevel
from attrib_audit.stats.types import Estimate

REVERSAL_COLOUR = "#D55E00"  # Okabe–Ito vermillion: a system in a reversal of this metric
QUIET = "#9a9a9a"


def _est(e: Estimate | None, signed: bool = False) -> str:
    return fmt.DASH if e is None else fmt.ci(e.estimate, e.ci_low, e.ci_high, signed=signed)


def _file(sl: str) -> str:
    """A plot file name for a slice (slice names are data: only safe characters reach the file system)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", sl).strip("._")[:60] or "slice"


def _metrics(level: SystemLevel) -> list[str]:
    return [a.metric for a in level.agreement if a.summary == "mean"]


def _panels(n: int, width: float, height: float, extra: float, **kw):
    """A figure with one panel per metric, four to a row; unused panels hidden."""
    plt = style.pyplot()

    cols = min(n, 4)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, squeeze=False, layout="constrained",
                             figsize=(width * cols + 0.4, height * rows + extra), **kw)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes


def _save(fig, axes, ylabel: str, plots: Path, kind: str, sl: str, caption: str):
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel)
    return style.save(fig, plots, f"systems_{kind}_{_file(sl)}", f"{sl}: {caption}")


def _reversals(level: SystemLevel, m: str) -> list[Reversal]:
    return [r for r in level.reversals if r.metric == m and r.summary == "mean"]


@cached_figure
def scatter(sl: str, level: SystemLevel, plots: Path, index: int):
    """Per metric: each system at (metric mean, human pass rate), both with their 95% CIs."""
    metrics = _metrics(level)
    rows = level.systems
    agree = {a.metric: a for a in level.agreement if a.summary == "mean"}
    human = np.array([[r.human.estimate, r.human.ci_low, r.human.ci_high] for r in rows], dtype=float)
    with style.rc():
        fig, axes = _panels(len(metrics), 3.3, 3.2, 0.3, sharey=True)
        for j, (ax, m) in enumerate(zip(axes.ravel(), metrics)):
            x = np.array([[r.mean[m].estimate, r.mean[m].ci_low, r.mean[m].ci_high] for r in rows], dtype=float)
            ok = np.isfinite(x).all(axis=1) & np.isfinite(human).all(axis=1)
            ax.errorbar(x[ok, 0], human[ok, 0], xerr=np.abs(x[ok, 1:].T - x[ok, 0]),
                        yerr=np.abs(human[ok, 1:].T - human[ok, 0]), fmt=style.marker(j), color=style.colour(j),
                        ecolor=style.colour(j), elinewidth=0.8, capsize=1.5, markersize=4)
            for q in np.flatnonzero(ok):
                ax.annotate(rows[q].system, (x[q, 0], human[q, 0]), xytext=(3, 2), textcoords="offset points",
                            fontsize=6.5, color="#333333", parse_math=False)
            t = agree[m].tau
            ax.set_title(f"{m}: τ-b {fmt.ci(t.estimate, t.ci_low, t.ci_high, 2)}", loc="left",
                         parse_math=False)
            ax.set_xlabel(f"mean {m} score", parse_math=False)
            ax.grid(color="#eeeeee", linewidth=0.6)
        return _save(fig, axes, "human pass rate (share labelled supported)", plots, f"scatter_{index}", sl,
                     "each system's human pass rate against its mean metric score, with 95% bootstrap CIs over "
                     "inputs on both axes; a metric that ranks systems like the humans puts them on a rising line.")


@cached_figure
def bump(sl: str, level: SystemLevel, plots: Path, index: int):
    """Per metric: each system's rank by the human pass rate (left) and by the metric's mean (right)."""
    metrics = _metrics(level)
    rows = level.systems
    names = [r.system for r in rows]
    s = len(rows)
    human = average_ranks(-np.array([r.human.estimate for r in rows], dtype=float))  # 1 = highest rate
    with style.rc():
        fig, axes = _panels(len(metrics), 2.5, 0.2 * s + 1.1, 0.0)
        for ax, m in zip(axes.ravel(), metrics):
            ranks = average_ranks(-np.array([r.mean[m].estimate for r in rows], dtype=float))
            hot = {n for r in _reversals(level, m) for n in (r.human_prefers, r.metric_prefers)}
            for q, name in enumerate(names):
                c = REVERSAL_COLOUR if name in hot else QUIET
                ax.plot([0, 1], [human[q], ranks[q]], color=c, linewidth=1.6 if name in hot else 0.9, marker="o",
                        markersize=3)
            for x, side, ha in ((-0.06, human, "right"), (1.06, ranks, "left")):
                for r in np.unique(side):  # systems tied on a rank share one label
                    tied = [n for n, v in zip(names, side) if v == r]
                    ax.text(x, r, ", ".join(tied), ha=ha, va="center", fontsize=6.5,
                            color=REVERSAL_COLOUR if hot & set(tied) else QUIET, parse_math=False)
            ax.set_xlim(-0.6, 1.6)
            ax.set_ylim(s + 0.6, 0.4)
            ax.set_xticks([0, 1], ["human", m], parse_math=False)
            ax.set_yticks([1, s], ["1", str(s)])
            ax.set_title(f"{m}: {len(_reversals(level, m))} reversals", loc="left", parse_math=False)
        return _save(fig, axes, "rank (1 = highest)", plots, f"ranks_{index}", sl,
                     "rank of each system by its human pass rate (left) and by each metric's mean score (right; ties "
                     "share the mean rank). Vermillion: systems in a reversal of that metric (the labels "
                     "significantly prefer one system, the metric the other).")


def _slice_blocks(e: SystemsSlice, plots: Path, index: int) -> list[Block]:
    blocks: list[Block] = [Para(f"Slice {e.slice}: {e.n_systems} systems, {e.n_rows} rows.")]
    level = e.statistics
    if e.status != "ok" or level is None:
        return blocks + [Note(f"Not computed: {e.reason}.")]
    p = pick_ranker(e)
    blocks.append(Para(f"Metric to rank systems with: {p.metric or 'none'} [{p.verdict}]. {p.caveat}"))
    caveat = level.design.caveat
    if caveat:
        blocks.append(Note(caveat))
    blocks += [Para(n) for n in e.notes if n != caveat]
    ceil = level.ceiling
    rows = [[a.metric, a.summary, _est(a.tau), _est(a.pairwise_accuracy), _est(a.acc_eq), _est(a.pearson),
             str(a.metric_ties)] for a in level.agreement]
    rows.append(["ceiling (true human rates)", "—", _est(ceil["tau"]), _est(ceil["pairwise_accuracy"]),
                 _est(ceil["acc_eq"]), fmt.DASH, fmt.DASH])
    ties = level.agreement[0].human_ties if level.agreement else 0
    blocks.append(Table(["metric", "summary", "τ-b", "pairwise accuracy", "acc_eq", "Pearson r", "metric ties"], rows,
                        f"Agreement of each metric's system ranking with the human pass rates [95% CI], as measured "
                        f"with these inputs; the ceiling row is what a ranking by the true human rates would show. "
                        f"{ties} system pair(s) tie on the human rate and are left out of pairwise accuracy."))
    blocks.append(Table(["metric", "AUROC (pairs)", "τ-b (systems)", "note"],
                        [[x.metric, fmt.ci(x.auroc, x.auroc_ci_low, x.auroc_ci_high), _est(x.tau),
                          x.note or "the two levels agree"] for x in e.item_vs_system or []],
                        "Item level vs system level: AUROC over pairs beside τ-b over systems (mean score)."))
    metrics = list(level.systems[0].mean) if level.systems else []
    passed = list(level.systems[0].pass_rate) if level.systems else []
    order = sorted(level.systems, key=lambda r: -(r.human.estimate if fmt.finite(r.human.estimate) else -1))
    blocks.append(Table(["system", "inputs", "human pass rate", *(f"{m} mean" for m in metrics),
                         *(f"{m} pass rate" for m in passed)],
                        [[r.system, str(r.n_inputs), _est(r.human), *(_est(r.mean[m]) for m in metrics),
                          *(_est(r.pass_rate[m]) for m in passed)] for r in order],
                        "Per system (highest human pass rate first), 95% bootstrap CIs over inputs. "
                        + ("Pass rates use each metric's threshold from the other slices: "
                           + "; ".join(f"{m} ≥ {fmt.threshold(e.thresholds[m].threshold)}" for m in passed) + "."
                           if passed else "No pass rates: no threshold could be chosen on other slices.")))
    blocks += [scatter(e.slice, level, plots, index), bump(e.slice, level, plots, index)]
    c = level.human_clusters
    blocks.append(Para(f"Human significance clusters (best first; the labels cannot order the systems within one; "
                       f"{len(c.resolved)} of {c.n_pairs} system pairs resolved): "
                       + " > ".join("{" + ", ".join(k) + "}" for k in c.clusters) + "."))
    if level.differences:
        blocks.append(Table(["a − b", "summary", "τ-b difference", "pairwise accuracy difference"],
                            [[f"{d.metric_a} − {d.metric_b}", d.summary, _est(d.tau, True),
                              _est(d.pairwise_accuracy, True)] for d in level.differences],
                            "Metric vs metric: paired bootstrap differences (same draws) [95% CI]."))
    blocks.append(Table(["metric", "summary", "labels prefer", "metric prefers", "human rate difference",
                         "metric difference"],
                        [[r.metric, r.summary, r.human_prefers, r.metric_prefers,
                          _est(r.human_difference, True), _est(r.metric_difference, True)]
                         for r in level.reversals] or [["none", "", "", "", "", ""]],
                        "Reversals: system pairs where the labels prefer one system and the metric the other, both "
                        "paired 95% CIs excluding 0 (not corrected for the number of pairs)."))
    return blocks


def build(inputs: Any, plots: Path) -> Section | None:
    results = inputs.results
    if results is None or results.systems is None:
        return None
    block = results.systems
    sec = Section("systems", "System level: ranking generators")
    sec.add(Para("Does each metric order the systems (the generators that wrote the claims) the way the human labels "
                 f"do? {block.estimand[0].upper() + block.estimand[1:]}. {block.pairwise_accuracy[0].upper()}"
                 f"{block.pairwise_accuracy[1:]}. Pass rates: {block.threshold_rule}. CIs: "
                 f"{block.level:.0%} percentile, {block.n_boot} resamples of "
                 f"{' and '.join(reversed(block.resample))} (seed {block.seed})."))
    for i, e in enumerate(block.slices):
        sec.add(*guard(f"The system-level slice {e.slice}", _slice_blocks, e, plots, i))
    return sec
