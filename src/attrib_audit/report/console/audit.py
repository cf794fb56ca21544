"""What `audit` and `demo` print: the answer first, then the AUROC table with its caveat marks."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from attrib_audit.audit.results import AuditResults, AurocRow, PairedRow, SliceRow
from attrib_audit.report import fmt
from attrib_audit.report.console.grid import MISSING, _num, grid, short_names
from attrib_audit.report.console.sensitivity import format_sensitivity
from attrib_audit.report.console.systems import format_systems, format_systems_brief
from attrib_audit.report.console.transfer import format_transfer
from attrib_audit.report.correlations import statistic_label
from attrib_audit.report.verdict import one_dataset, pick, statistic_chance_warning

if TYPE_CHECKING:  # the records' module imports the statistics (scipy), which `--help` must not load
    from attrib_audit.audit.correlations import CorrelationSection
    from attrib_audit.audit.transfer import TransferSection


def format_verdicts(transfer: TransferSection, auroc: Sequence[AurocRow], paired: Sequence[PairedRow],
                    correlations: CorrelationSection | None = None) -> str:
    """Per construct: the metric to use, whether it is portable, and what it costs on a new dataset (`auroc`,
    `paired`: results.json's rows, for a construct of one dataset; `correlations`: its correlation block, read
    under a graded transfer statistic)."""
    unit = statistic_label(transfer.statistic)
    out = [f"Which metric to use, per construct (regret: {unit} lost to each dataset's best, mean [95% CI], in-sample; "
           "naive selector: held-out regret, picked without that dataset):"]
    for c, e in transfer.constructs.items():
        st = e.statistics if e.status == "ok" else None
        if st is None and len(e.datasets) == 1:
            out.append("  " + one_dataset(c, e.datasets[0], statistic=transfer.statistic, auroc=auroc, paired=paired,
                                          correlations=correlations).text)
            continue
        if st is None:
            out.append(f"  {c}: no verdict — {e.reason}")
            continue
        p, r = pick(st), st.regret.selector
        f, short = p.regret, short_names(e.datasets)
        where = f"{len(e.datasets)} datasets"
        if p.portable:
            head = f"  {c} ({where}): use {p.metric} — portable" + ("" if p.paired else " (not under the paired test)")
        else:
            head = f"  {c} ({where}): no metric is portable; lowest regret: {p.metric}"
        out.append(f"{head}; regret {fmt.ci(f.mean, f.ci_low, f.ci_high)}, worst {_num(f.max)} on "
                   f"{short.get(f.worst_dataset, f.worst_dataset)}; naive selector "
                   f"{fmt.ci(r.mean, r.ci_low, r.ci_high)}")
        warning = statistic_chance_warning(p.metric, e.datasets, statistic=transfer.statistic, auroc=auroc,
                                           correlations=correlations, names=short)
        if warning:
            out.append(f"    caution: {warning}")
    if transfer.excluded_slices:
        out.append(f"  left out of transfer: {', '.join(x.slice for x in transfer.excluded_slices)} "
                   "(reasons in the report)")
    if not transfer.constructs:
        out.append("  no construct with a usable slice; nothing was pooled (declare constructs with --construct)")
    return "\n".join(out)


def format_table(results: AuditResults) -> str:
    """AUROC [95% CI] per slice (rows) and scorer (columns), with n and the caveat marks ✂ ✗ ⊓."""
    names = results.scorer_names
    cell = {(r.scorer, r.slice): r for r in results.auroc}
    trunc = {(r.scorer, r.slice): r for r in results.truncation}
    clamped = {(r.scorer, r.slice): r.n_clamped for r in results.failures}
    rows = []
    for sl in results.slices:
        row = [sl.slice, str(sl.n), str(sl.n_pos)]
        for name in names:
            r = cell.get((name, sl.slice))
            if r is None or r.auroc is None:
                row.append("undefined (one class)" if sl.status == "one_class" else MISSING)
                continue
            t = trunc.get((name, sl.slice))
            mark = f" ✂{t.pairs_truncated}" if t and t.pairs_truncated else ""
            mark += f" ✗{r.n_failed}" if r.n_failed else ""
            mark += f" ⊓{clamped[(name, sl.slice)]}" if clamped.get((name, sl.slice)) else ""
            row.append(fmt.ci(r.auroc, r.ci_low, r.ci_high) + mark)
        rows.append(row)
    notes = ["AUROC [95% clustered-bootstrap CI]; ✂k = k pairs cut at the scorer's window; "
             "✗k = k failed rows excluded."]
    notes += weighted_note(results.slices)
    if any(clamped.values()):
        notes.append("⊓k = k judge answers outside [0, 1], clamped to the nearest end and kept.")
    for u in results.unavailable:
        notes.append(f"not run: {u.scorer} ({u.reason})")
    return "\n".join(grid(["slice", "n", "pos", *names], rows, rule=True) + [""] + notes)


def weighted_note(slices: Sequence[SliceRow]) -> list[str]:
    """Which slices' AUROCs are weighted back to a pool (a sampled file), said in words."""
    out = []
    for sl in slices:
        if sl.weighting:
            # Σ 1/inclusion_prob estimates the pool's size (exact only in expectation): said as an estimate
            size = (f"; together about {sl.pool_size:.0f}, the pool's size in expectation"
                    if fmt.finite(sl.pool_size) else "")
            out.append(f"{sl.slice}: weighted back to its pool by inclusion probabilities (each labelled pair "
                       f"stands for 1/inclusion_prob pool pairs{size}), so its AUROCs describe the pool, not the "
                       "sample.")
    return out


def format_answer(results: AuditResults, verbose: bool = False) -> str:
    """What `audit` and `demo` print: the verdicts, the AUROC table, and with `verbose` every other section."""
    transfer = results.transfer
    parts = [format_verdicts(transfer, results.auroc, results.paired, results.correlations)
             if transfer is not None else "",
             format_table(results)]
    if results.systems is not None:
        parts.append(format_systems_brief(results.systems))
    if verbose:
        if transfer is not None:
            parts.append(format_transfer(transfer, results.scorer_names))
        if results.sensitivity is not None:
            parts.append(format_sensitivity(results.sensitivity))
        if results.systems is not None:
            parts.append(format_systems(results.systems))
    return "\n\n".join(p.strip("\n") for p in parts if p)
