"""The provenance diagnostic (provenance.json): top-1 accuracy against the random baseline, the
confusable-evidence fooled rates over seeds, and the α-sweep lines; one dataset at a time."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from attrib_audit.provenance.result import DatasetProvenance, Spread
from attrib_audit.report import fmt, style
from attrib_audit.report.agreement import _slug
from attrib_audit.report.blocks import Block, Note, Para, Section, Table, guard
from attrib_audit.report.figcache import cached_figure
from attrib_audit.stats.types import Estimate


def _est(e: Estimate | None, signed: bool = False) -> str:
    return fmt.DASH if e is None else fmt.ci(e.estimate, e.ci_low, e.ci_high, signed=signed)


def _spread(s: Spread | None) -> str:
    if s is None or not fmt.finite(s.mean):
        return fmt.DASH
    return f"{s.mean:.3f} ± {fmt.num(s.sd)} (min {fmt.num(s.min)}, max {fmt.num(s.max)})"


@cached_figure
def provenance_plot(d: DatasetProvenance, plots: Path) -> Any:
    plt = style.pyplot()
    from matplotlib.lines import Line2D

    clean = d.clean
    names = list(clean.rankers)
    summary = d.confusable.summary
    sweep = d.alpha_sweep.series if d.alpha_sweep is not None else None
    with style.rc():
        fig, axes = plt.subplots(1, 2 if sweep else 1, squeeze=False, layout="constrained",
                                 figsize=(10.0 if sweep else 6.0, 1.6 + 0.45 * len(names)))
        ax = axes[0, 0]
        for i, name in enumerate(names):
            t = clean.rankers[name].top1
            ax.errorbar(t.estimate, i - 0.12, xerr=[[t.estimate - t.ci_low], [t.ci_high - t.estimate]],
                        fmt="o", color=style.colour(0), capsize=2)
            s = summary.get(name)
            if s:
                ax.errorbar(s.top1.mean, i + 0.12, xerr=s.top1.sd,
                            fmt="s", color=style.colour(1), capsize=2)
                ax.errorbar(s.fooled.mean, i + 0.12, xerr=s.fooled.sd, fmt="^", color=style.colour(3),
                            markerfacecolor="white", capsize=2)
        ax.axvline(clean.random_baseline.estimate, color="#555555", linestyle="--", linewidth=0.9)
        ax.set_yticks(range(len(names)), names)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of answer units (clean: 95% CI; confusable: mean ± sd over seeds)")
        ax.set_title(f"{d.dataset}: top-1 provenance accuracy", loc="left")
        ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
        handles = [Line2D([], [], color=style.colour(0), marker="o", label="top-1, clean pool (95% CI)"),
                   Line2D([], [], color="#555555", linestyle="--", label="random baseline (clean)")]
        if summary:
            handles[1:1] = [Line2D([], [], color=style.colour(1), marker="s", label="top-1, confusable pool (± sd)"),
                            Line2D([], [], color=style.colour(3), marker="^", markerfacecolor="white",
                                   label="fooled rate (top-1 is a distractor)")]
        fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), frameon=False)
        if sweep is not None and d.alpha_sweep is not None:
            ax = axes[0, 1]
            alpha = np.asarray(sweep.alpha, dtype=float)
            ax.plot(alpha, sweep.clean_top1, color=style.colour(0), marker="o", label="top-1, clean")
            lows = [e.ci_low for e in d.alpha_sweep.clean]
            highs = [e.ci_high for e in d.alpha_sweep.clean]
            if len(lows) == alpha.size and all(fmt.finite(x) for x in lows + highs):
                ax.fill_between(alpha, lows, highs, color=style.colour(0), alpha=0.15, linewidth=0)
            if sweep.confusable_top1_mean is not None:
                m = np.asarray(sweep.confusable_top1_mean)
                sd = np.asarray(sweep.confusable_top1_sd if sweep.confusable_top1_sd is not None else 0.0)
                ax.plot(alpha, m, color=style.colour(1), marker="s", label="top-1, confusable (mean)")
                ax.fill_between(alpha, m - sd, m + sd, color=style.colour(1), alpha=0.15, linewidth=0)
                ax.plot(alpha, sweep.confusable_fooled_mean, color=style.colour(3), marker="^",
                        markerfacecolor="white", label="fooled rate, confusable")
            ax.set_xlabel("α (score = α·lexical + (1−α)·semantic)")
            ax.set_ylabel("share of answer units")
            ax.set_ylim(0, 1)
            ax.set_title("α sweep", loc="left")
            ax.grid(color="#e5e5e5", linewidth=0.6)
        return style.save(fig, plots, f"provenance_{_slug(d.dataset)}",
                          f"{d.dataset}: top-1 provenance accuracy per ranker on the clean pool (95% clustered CI) "
                          "and with confusable distractors added (mean ± sd over seeds), against the random baseline; "
                          "right: the α sweep between the lexical and the semantic score (band: CI or ± sd).")


def dataset_blocks(d: DatasetProvenance, plots: Path) -> list[Block]:
    clean, conf = d.clean, d.confusable
    summary = conf.summary
    skipped = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in d.skipped.items())
    out: list[Block] = [Para(f"{d.dataset}: {d.n_examples} examples, "
                             f"{clean.n_units} answer units, "
                f"{fmt.num(clean.mean_pool_size, 1)} candidate passages per unit on average"
                + (f"; skipped: {skipped}" if skipped else "") + ".")]
    rows = []
    for name, r in clean.rankers.items():
        s = summary.get(name)
        rows.append([name, _est(r.top1), _est(r.vs_lexical, signed=True) if name != "lexical" else fmt.DASH,
                     _spread(s.top1 if s else None), _spread(s.fooled if s else None), str(r.n_tied)])
    rows.append(["random baseline", _est(clean.random_baseline), fmt.DASH, _spread(conf.random_baseline),
                 fmt.DASH, fmt.DASH])
    out.append(Table(["ranker", "top-1, clean [95% CI]", "− lexical [95% CI]",
                      f"top-1, confusable (k={conf.k}, {conf.seeds} seeds)", "fooled rate",
                      "units with tied top score"], rows,
                     "Top-1 provenance accuracy: share of answer units whose highest-scoring passage is a gold one."))
    out += guard(f"The provenance plot of {d.dataset}", lambda: [provenance_plot(d, plots)])
    files = [[x.path, str(x.examples), x.sha256] for x in d.data]
    if files:
        out.append(Table(["file", "examples", "sha256"], files, f"{d.dataset}: input files."))
    return out


def build(inputs, plots: Path) -> Section | None:
    prov = inputs.provenance
    if not prov:
        return None
    sec = Section("provenance", "Provenance diagnostic")
    sec.add(Para(f"From {inputs.source('provenance')}: which passage does each answer unit come from? A separate "
                 "construct from support, never pooled with the AUROC audit."))
    for u in prov.unavailable:
        sec.add(Note(f"Not run: {u.ranker} ({u.reason})."))
    for sig, t in prov.embedding_truncation.items():
        if t.texts_truncated:
            sec.add(Note(f"{sig}: {t.texts_truncated} of {t.texts} texts cut at {t.window} "
                         f"tokens ({t.tokens_truncated} tokens lost)."))
    for name, f in prov.scorer_failures.items():
        if f.failed_pairs or f.truncated_pairs:
            sec.add(Note(f"{name}: {f.failed_pairs} failed and {f.truncated_pairs} truncated pairs."))
    for d in prov.datasets:
        sec.add(*guard(f"Provenance for {d.dataset}", dataset_blocks, d, plots))
    signatures = prov.config.signatures
    if signatures:
        sec.add(Table(["ranker", "signature"], [[k, str(v)] for k, v in signatures.items()], "Ranker signatures."))
    return sec
