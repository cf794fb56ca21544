"""The use cases beside the audit: the probe's before/after table and the provenance diagnostic."""
from __future__ import annotations

from attrib_audit.probe.compare import ProbeComparison
from attrib_audit.provenance.result import ProvenanceRun, Spread
from attrib_audit.report import fmt
from attrib_audit.report.console.grid import MISSING, _num, grid
from attrib_audit.stats.types import Estimate


def format_probe_table(results: ProbeComparison) -> str:
    """Metric rows: base mean, tuned mean, tuned − base [CI]; then the rewrite statistics and the verdict."""
    rows = []
    for r in results.metrics:
        d = r.diff
        rows.append([r.metric, _num(r.base.mean), _num(r.tuned.mean),
                     fmt.ci(d.mean, d.ci_low, d.ci_high, signed=True) + (" *" if d.excludes_zero else "")])
    rw, cov = results.rewrite, results.coverage
    out = [*grid(["metric", "base", "tuned", "tuned − base [95% CI]"], rows, rule=True), "",
           "rewrite detection (tuned vs base, same example):"]
    out += grid(None, [[label, fmt.ci(rw[name].mean, rw[name].ci_low, rw[name].ci_high)] for name, label in
                       (("altered", "share altered"), ("token_jaccard", "mean token Jaccard"),
                        ("heavy_rewrite", f"share with Jaccard < {results.config.rewrite_jaccard_threshold}"))],
                indent="  ")
    out += ["", f"{cov.n_compared} examples compared; skipped: {cov.n_only_base} only in base, "
            f"{cov.n_only_tuned} only in tuned, {cov.n_unanswered} answered by neither.",
            "* = 95% paired clustered-bootstrap CI excludes 0.", results.verdict]
    return "\n".join(out)


def _est(e: Estimate) -> str:
    return fmt.ci(e.estimate, e.ci_low, e.ci_high)


def _spread(s: Spread | None) -> str:
    return f"{_num(s.mean)} ± {_num(s.sd)}" if s is not None else MISSING


def format_provenance(results: ProvenanceRun) -> str:
    """Per dataset: top-1 accuracy [CI] per ranker vs the random baseline, confusable results, the α sweep."""
    lines: list[str] = []
    for d in results.datasets:
        clean, conf = d.clean, d.confusable
        lines.append(f"== {d.dataset}: {d.n_examples} examples, {d.n_units} units, "
                     f"{clean.mean_pool_size:.1f} passages per unit; skipped: {d.skipped or 'none'}")
        head = ["ranker", "clean top-1 [95% CI]", "vs random", "vs lexical [95% CI]"]
        if conf.summary:
            head += [f"confusable k={conf.k} top-1 (mean ± sd, {conf.seeds} seeds)", "fooled (mean ± sd)"]
        rows = []
        base = clean.random_baseline.estimate
        for name, r in clean.rankers.items():
            row = [name, _est(r.top1), fmt.num(r.top1.estimate - base, signed=True),
                   _est(r.vs_lexical) if r.vs_lexical is not None else MISSING]
            if conf.summary:
                row += [_spread(conf.summary[name].top1), _spread(conf.summary[name].fooled)]
            rows.append(row)
        rb = ["random", _est(clean.random_baseline), "", ""]
        if conf.summary:
            rb += [_spread(conf.random_baseline), ""]
        lines += grid(head, rows + [rb], rule=True)
        sw = d.alpha_sweep
        if sw:
            lines += ["", f"alpha sweep: {sw.formula}"]
            s = sw.series
            rows = [[f"{a:.1f}", _est(c)] +
                    ([f"{_num(s.confusable_top1_mean[i])} ± {_num(s.confusable_top1_sd[i])}",
                      _num(s.confusable_fooled_mean[i])]
                     if s.confusable_top1_mean is not None and s.confusable_top1_sd is not None
                     and s.confusable_fooled_mean is not None else [])
                    for i, (a, c) in enumerate(zip(sw.alpha, sw.clean))]
            lines += grid(["alpha", "clean top-1 [95% CI]"]
                          + (["confusable top-1", "fooled"] if s.confusable_top1_mean is not None else []),
                          rows, rule=True)
        lines.append("")
    lines.append("top-1 = share of units whose best-scored passage is gold; fooled = share whose best is a distractor "
                 "from another example; CIs: clustered bootstrap over example groups.")
    for u in results.unavailable:
        lines.append(f"not run: {u.ranker} ({u.reason})")
    for sig, t in results.embedding_truncation.items():
        if t.texts_truncated:
            lines.append(f"truncation: {t.texts_truncated} of {t.texts} texts cut at {t.window} tokens "
                         f"({t.tokens_truncated} tokens) by {sig}")
    return "\n".join(lines)
