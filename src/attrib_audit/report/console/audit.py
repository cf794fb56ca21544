"""What `audit` and `demo` print: the answer first, then the AUROC table with its caveat marks."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from attrib_audit.report import fmt
from attrib_audit.report.console.grid import MISSING, _ci, _num, grid, short_names
from attrib_audit.report.console.sensitivity import format_sensitivity
from attrib_audit.report.console.systems import format_systems, format_systems_brief
from attrib_audit.report.console.transfer import format_transfer
from attrib_audit.report.correlations import statistic_label
from attrib_audit.report.verdict import one_dataset, pick, statistic_chance_warning


def format_verdicts(results: Mapping[str, Any]) -> str:
    """Per construct: the metric to use, whether it is portable, and what it costs on a new dataset."""
    tr = results.get("transfer")
    if not tr:
        return ""
    unit = statistic_label(tr.get("statistic", "auroc"))
    out = [f"Which metric to use, per construct (regret: {unit} lost to each dataset's best, mean [95% CI], in-sample; "
           "naive selector: held-out regret, picked without that dataset):"]
    for c, e in tr["constructs"].items():
        if e["status"] != "ok" and len(e["datasets"]) == 1:
            out.append("  " + one_dataset(c, e["datasets"][0], results).text)
            continue
        if e["status"] != "ok":
            out.append(f"  {c}: no verdict — {e['reason']}")
            continue
        p, r = pick(e), e["regret"]["selector"]
        f, short = p.regret, short_names(e["datasets"])
        where = f"{len(e['datasets'])} datasets"
        if p.portable:
            head = f"  {c} ({where}): use {p.metric} — portable" + ("" if p.paired else " (not under the paired test)")
        else:
            head = f"  {c} ({where}): no metric is portable; lowest regret: {p.metric}"
        out.append(f"{head}; regret {fmt.ci(f['mean'], f['ci_low'], f['ci_high'])}, worst {_num(f['max'])} on "
                   f"{short.get(f['worst_dataset'], f['worst_dataset'])}; naive selector "
                   f"{fmt.ci(r['mean'], r['ci_low'], r['ci_high'])}")
        warning = statistic_chance_warning(p.metric, e["datasets"], results, short)
        if warning:
            out.append(f"    caution: {warning}")
    if tr["excluded_slices"]:
        out.append(f"  left out of transfer: {', '.join(x['slice'] for x in tr['excluded_slices'])} "
                   "(reasons in the report)")
    if not tr["constructs"]:
        out.append("  no construct with a usable slice; nothing was pooled (declare constructs with --construct)")
    return "\n".join(out)


def format_table(results: Mapping[str, Any]) -> str:
    """AUROC [95% CI] per slice (rows) and scorer (columns), with n and the caveat marks ✂ ✗ ⊓."""
    names = [s["scorer"] for s in results["scorers"]]
    cell = {(r["scorer"], r["slice"]): r for r in results["auroc"]}
    trunc = {(r["scorer"], r["slice"]): r for r in results["truncation"]}
    clamped = {(r["scorer"], r["slice"]): r.get("n_clamped", 0) for r in results.get("failures", [])}
    rows = []
    for sl in results["slices"]:
        row = [sl["slice"], str(sl["n"]), str(sl["n_pos"])]
        for name in names:
            r = cell.get((name, sl["slice"]))
            if r is None or r["auroc"] is None:
                row.append("undefined (one class)" if sl["status"] == "one_class" else MISSING)
                continue
            t = trunc.get((name, sl["slice"]))
            mark = f" ✂{t['pairs_truncated']}" if t and t["pairs_truncated"] else ""
            mark += f" ✗{r['n_failed']}" if r.get("n_failed") else ""
            mark += f" ⊓{clamped[(name, sl['slice'])]}" if clamped.get((name, sl["slice"])) else ""
            row.append(_ci(r, "auroc") + mark)
        rows.append(row)
    notes = ["AUROC [95% clustered-bootstrap CI]; ✂k = k pairs cut at the scorer's window; "
             "✗k = k failed rows excluded."]
    notes += weighted_note(results["slices"])
    if any(clamped.values()):
        notes.append("⊓k = k judge answers outside [0, 1], clamped to the nearest end and kept.")
    for u in results.get("unavailable", []):
        notes.append(f"not run: {u['scorer']} ({u['reason']})")
    return "\n".join(grid(["slice", "n", "pos", *names], rows, rule=True) + [""] + notes)


def weighted_note(slices: Sequence[Mapping[str, Any]]) -> list[str]:
    """Which slices' AUROCs are weighted back to a pool (a sampled file), said in words."""
    out = []
    for sl in slices:
        if sl.get("weighting"):
            size = f"{sl['pool_size']:.0f}-pair " if fmt.finite(sl.get("pool_size")) else ""
            out.append(f"{sl['slice']}: weighted to the {size}pool by inclusion probabilities (each labelled pair "
                       "stands for 1/inclusion_prob pool pairs), so its AUROCs describe the pool, not the sample.")
    return out


def format_answer(results: Mapping[str, Any], verbose: bool = False) -> str:
    """What `audit` and `demo` print: the verdicts, the AUROC table, and with `verbose` every other section."""
    parts = [format_verdicts(results), format_table(results)]
    if results.get("systems"):
        parts.append(format_systems_brief(results["systems"]))
    if verbose:
        parts += [format_transfer(results), format_sensitivity(results)]
        if results.get("systems"):
            parts.append(format_systems(results["systems"]))
    return "\n\n".join(p.strip("\n") for p in parts if p)
