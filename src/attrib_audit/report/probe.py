"""The answer-level probe (probe.json): metric deltas with paired CIs beside the rewrite statistics,
so a reader sees when the text changed a lot while the metrics did not move."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from attrib_audit.probe.compare import MeanCI, ProbeComparison
from attrib_audit.report import fmt, style
from attrib_audit.report.blocks import Block, Para, Section, Table, guard
from attrib_audit.report.figcache import cached_figure

REWRITE_LABELS = {"altered": "share of answers altered", "token_jaccard": "mean token Jaccard (tuned vs base)",
                  "heavy_rewrite": "share heavily rewritten"}


def _est(e: MeanCI, signed: bool = False) -> str:
    return fmt.ci(e.mean, e.ci_low, e.ci_high, signed=signed)


@cached_figure
def probe_plot(probe: ProbeComparison, plots: Path) -> Any:
    plt = style.pyplot()

    rows = probe.metrics
    rewrite = probe.rewrite
    with style.rc():
        fig, (left, right) = plt.subplots(1, 2, layout="constrained", gridspec_kw={"width_ratios": [3, 2]},
                                          figsize=(9.0, 1.2 + 0.36 * max(len(rows), len(rewrite))))
        for i, r in enumerate(rows):
            d = r.diff
            moved = d.excludes_zero
            left.errorbar(d.mean, i, xerr=[[d.mean - d.ci_low], [d.ci_high - d.mean]], fmt="o",
                          color=style.colour(0), markerfacecolor=style.colour(0) if moved else "white", capsize=2)
        left.axvline(0, color="#555555", linestyle="--", linewidth=0.8)
        left.set_yticks(range(len(rows)), [r.metric for r in rows])
        left.set_ylim(len(rows) - 0.5, -0.5)
        left.set_xlabel("tuned − base, in each metric's own units (95% paired CI)")
        left.set_title("answer-level metrics: did they move?", loc="left")
        left.grid(axis="x", color="#e5e5e5", linewidth=0.6)
        names = list(rewrite)
        for i, k in enumerate(names):
            e = rewrite[k]
            right.barh(i, e.mean, color=style.colour(1), height=0.45,
                       xerr=[[e.mean - e.ci_low], [e.ci_high - e.mean]], error_kw={"capsize": 3})
        right.set_yticks(range(len(names)), [REWRITE_LABELS.get(k, k) for k in names])
        right.set_ylim(len(names) - 0.5, -0.5)
        right.set_xlim(0, 1)
        right.set_xlabel("share of examples (Jaccard: 0–1), 95% CI")
        right.set_title("how much the text changed", loc="left")
        return style.save(fig, plots, "probe_deltas",
                          "Left: per answer-level metric, tuned − base with its paired CI (filled: CI excludes 0). "
                          "Right: rewrite statistics between the two systems' answers to the same questions.")


def probe_blocks(probe: ProbeComparison, plots: Path) -> list[Block]:
    out: list[Block] = [Para(probe.verdict)] if probe.verdict else []
    out.append(Table(["metric", "base", "tuned", "tuned − base [95% CI]", "moved"],
                     [[r.metric, _est(r.base), _est(r.tuned), _est(r.diff, signed=True),
                       "yes" if r.diff.excludes_zero else "no"] for r in probe.metrics],
                     f"Answer-level metrics ({probe.config.ci})."))
    out.append(Table(["rewrite statistic", "value [95% CI]"],
                     [[REWRITE_LABELS.get(k, k), _est(e)] for k, e in probe.rewrite.items()],
                     f"Rewrite detection; heavily rewritten = token Jaccard < "
                     f"{probe.config.rewrite_jaccard_threshold}."))
    out += guard("The probe plot", lambda: [probe_plot(probe, plots)])
    cov = probe.coverage
    out.append(Para(f"{cov.n_compared} examples compared; left out: "
                    f"{cov.n_only_base} only in base, {cov.n_only_tuned} only in tuned, "
                    f"{cov.n_unanswered} answered by neither."))
    files = [[k, v.path, v.sha256] for k, v in probe.data.items()]
    if files:
        out.append(Table(["input", "file", "sha256"], files, "Probe inputs."))
    return out


def build(inputs, plots: Path) -> Section | None:
    if not inputs.probe:
        return None
    sec = Section("probe", "Answer-level probe")
    sec.add(Para(f"From {inputs.source('probe')}: two systems' answers to the same questions, scored by answer-level "
                 "metrics; the point is to see whether the metrics notice how much the answers changed."))
    return sec.add(*probe_blocks(inputs.probe, plots))
