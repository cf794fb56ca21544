"""Which metric a construct's saved transfer statistics point to: the one rule the report's headline and the
terminal both state (the portable metric with the lowest held-out regret; without one, the lowest-regret metric).

It chooses among recorded numbers only; nothing is recomputed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attrib_audit.audit.config import STATISTIC_LABELS
from attrib_audit.report import fmt


@dataclass(frozen=True)
class Pick:
    metric: str
    portable: bool  # within the best metric's 95% CI on every dataset
    paired: bool  # also under the stricter paired test
    regret: dict  # the metric's `regret.fixed` row: mean, ci_low, ci_high, max, worst_dataset
    others: list[str]  # the other portable metrics


def pick(e: dict) -> Pick:
    """The metric to use for a construct whose transfer entry (`transfer.constructs[c]`, status ok) is `e`."""
    fixed = {f["metric"]: f for f in e["regret"]["fixed"]}
    portable = [p["metric"] for p in e["portability"] if p["portable"]]
    paired = [p["metric"] for p in e["portability"] if p["paired_portable"]]
    if portable:
        m = min(portable, key=lambda x: fixed[x]["mean"]) if all(x in fixed for x in portable) else portable[0]
    else:
        m = e["regret"]["lowest_regret_metric"]
    return Pick(m, bool(portable), m in paired, fixed[m], [x for x in portable if x != m])


@dataclass(frozen=True)
class SliceVerdict:
    """The on-target answer for a construct audited on one labelled dataset: which metric, by how much, and
    whether it is better than chance at all (from the recorded AUROC rows, paired rows and chance tests)."""

    construct: str
    slice: str
    verdict: str  # at-chance | best | tied | undefined
    metric: str | None  # the metric to use; None when no candidate beats chance
    best: str | None  # the highest AUROC among all candidates (named when none beats chance)
    tied: list[str]  # candidates beating chance that the paired CI cannot separate from `metric`
    at_chance: list[str]  # candidates that do not beat chance
    text: str


def beats_chance(row: dict) -> bool:
    """A recorded AUROC row's chance flag; rows from before the chance test fall back to the CI's lower end."""
    if "beats_chance" in row:
        return bool(row["beats_chance"])
    return fmt.finite(row.get("ci_low")) and row["ci_low"] > 0.5


def _chance_p(row: dict) -> str:
    p = row.get("p_chance_holm", row.get("p_chance"))
    return f"one-sided p = {fmt.pvalue(p)}" if fmt.finite(p) else "CI lower end at or below 0.5"


def _paired(paired: list[dict], sl: str, a: str, b: str) -> dict | None:
    """The paired row of a − b on slice `sl` (sign flipped when it was recorded as b − a)."""
    for p in paired:
        if p["slice"] != sl or p.get("diff") is None:
            continue
        if (p["scorer_a"], p["scorer_b"]) == (a, b):
            return p
        if (p["scorer_a"], p["scorer_b"]) == (b, a):
            return {**p, "diff": -p["diff"], "ci_low": -p["ci_high"], "ci_high": -p["ci_low"]}
    return None


def on_slice(construct: str, sl: str, auroc: list[dict], paired: list[dict]) -> SliceVerdict:
    """The headline for a construct with one labelled dataset `sl`: the best metric that beats chance, its paired
    differences with the others, and what a second dataset would add.

    Args:
        construct: the construct's name.
        sl: its only slice.
        auroc: results.json `auroc` rows.
        paired: results.json `paired` rows.

    Returns:
        The verdict; `metric` is None when no candidate is better than chance (then none is recommended).
    """
    rows = {r["scorer"]: r for r in auroc if r["slice"] == sl and fmt.finite(r.get("auroc"))}
    head = f"{construct} (one dataset, {sl})"
    if not rows:
        return SliceVerdict(construct, sl, "undefined", None, None, [], [], f"{head}: no metric has an AUROC here.")
    top = max(rows, key=lambda n: rows[n]["auroc"])
    good = [n for n in rows if beats_chance(rows[n])]
    weak = [n for n in rows if n not in good]
    second = (" A second labelled dataset of this construct would say whether the choice transfers to data not "
              "audited (portability, held-out regret).")
    if not good:
        t = rows[top]
        text = (f"{head}: no candidate is better than chance on this data (best: {top}, AUROC "
                f"{fmt.ci(t['auroc'], t['ci_low'], t['ci_high'])}, {_chance_p(t)}). None is recommended: on these "
                "labels each one ranks supported above unsupported answers no better than a coin flip.")
        return SliceVerdict(construct, sl, "at-chance", None, top, [], weak, text + second)
    m = max(good, key=lambda n: rows[n]["auroc"])
    diffs = {n: _paired(paired, sl, m, n) for n in rows if n != m}
    tied = [n for n in good if n != m and (d := diffs[n]) is not None and not d["excludes_zero"]]
    r = rows[m]
    text = (f"{head}: use {m} — AUROC {fmt.ci(r['auroc'], r['ci_low'], r['ci_high'])}, better than chance "
            f"({_chance_p(r)})")
    shown = [f"{n} {fmt.ci(d['diff'], d['ci_low'], d['ci_high'], signed=True)}" for n, d in diffs.items() if d]
    if shown:
        text += f"; paired difference {m} − other [95% CI]: " + ", ".join(shown)
    if tied:
        text += f". Tied with {', '.join(tied)} (the paired CI holds 0): any of these will do (choose the cheapest)"
    if weak:
        text += f". Not better than chance: {', '.join(weak)}"
    return SliceVerdict(construct, sl, "tied" if tied else "best", m, top, tied, weak, text + "." + second)


def on_slice_graded(construct: str, sl: str, correlations: dict, statistic: str) -> SliceVerdict:
    """The one-dataset headline under a graded `--statistic`: the metric with the highest correlation whose CI
    lies above 0, the paired differences with the others (the correlation section's, same draws), and what a
    second dataset would add — the same rule as the AUROC's `on_slice`, on the statistic `select` compares by.

    Args:
        construct: the construct's name.
        sl: its only slice.
        correlations: results.json's `correlations` block.
        statistic: the transfer statistic (pearson, spearman, kendall, partial-pearson, partial-spearman).

    Returns:
        The verdict; `metric` is None when no correlation's CI lies above 0.
    """
    name, grouping = (statistic[len("partial-"):], "partial") if statistic.startswith("partial-") else (statistic,
                                                                                                       "none")
    unit = STATISTIC_LABELS.get(statistic, statistic)
    entry = next((e for e in correlations.get("slices", []) if e["slice"] == sl), None)
    rows = {c["metric"]: c for c in (entry or {}).get("correlations", [])
            if c["statistic"] == name and c["grouping"] == grouping and fmt.finite(c.get("estimate"))}
    head = f"{construct} (one dataset, {sl}; by {unit})"
    if not rows:
        return SliceVerdict(construct, sl, "undefined", None, None, [], [], f"{head}: no metric has a {unit} here.")
    top = max(rows, key=lambda n: rows[n]["estimate"])
    good = [n for n in rows if fmt.finite(rows[n]["ci_low"]) and rows[n]["ci_low"] > 0]
    weak = [n for n in rows if n not in good]
    second = (" A second dataset of this construct would say whether the choice transfers to data not audited "
              "(portability, held-out regret).")
    if not good:
        t = rows[top]
        return SliceVerdict(construct, sl, "at-chance", None, top, [], weak,
                            f"{head}: no metric's {unit} is above 0 by its 95% CI (best: {top}, "
                            f"{fmt.ci(t['estimate'], t['ci_low'], t['ci_high'])}). None is recommended." + second)
    m = max(good, key=lambda n: rows[n]["estimate"])
    diffs: dict[str, dict] = {}
    for d in (entry or {}).get("differences", []):
        if d["statistic"] != name or d["grouping"] != grouping or m not in (d["metric_a"], d["metric_b"]):
            continue
        if d["metric_a"] == m:
            diffs[d["metric_b"]] = d
        else:
            diffs[d["metric_a"]] = {**d, "difference": -d["difference"], "ci_low": -d["ci_high"],
                                    "ci_high": -d["ci_low"]}
    tied = [n for n in good if n != m and n in diffs and diffs[n]["ci_low"] <= 0 <= diffs[n]["ci_high"]]
    r = rows[m]
    text = f"{head}: use {m} — {unit} {fmt.ci(r['estimate'], r['ci_low'], r['ci_high'])}, above 0 by its 95% CI"
    shown = [f"{n} {fmt.ci(d['difference'], d['ci_low'], d['ci_high'], signed=True)}" for n, d in diffs.items()]
    if shown:
        text += f"; paired difference {m} − other [95% CI]: " + ", ".join(shown)
    if tied:
        text += f". Tied with {', '.join(tied)} (the paired CI holds 0): any of these will do (choose the cheapest)"
    if weak:
        text += f". Not above 0: {', '.join(weak)}"
    return SliceVerdict(construct, sl, "tied" if tied else "best", m, top, tied, weak, text + "." + second)


def chance_warning(metric: str, datasets: list[str], auroc: list[dict], names: dict[str, str] | None = None) -> str:
    """Where the recommended metric is not better than chance, in words ('' when it beats chance everywhere).

    Args:
        metric: the recommended metric.
        datasets: the construct's datasets.
        auroc: results.json `auroc` rows.
        names: shorter dataset names to print, if any.

    Returns:
        The warning without a leading label or final full stop.
    """
    rows = [r for r in auroc if r["scorer"] == metric and r["slice"] in datasets and fmt.finite(r.get("auroc"))]
    weak = [r for r in rows if not beats_chance(r)]
    if not weak:
        return ""
    short = names or {}
    where = "; ".join(f"{short.get(r['slice'], r['slice'])}: AUROC {fmt.ci(r['auroc'], r['ci_low'], r['ci_high'])}, "
                      f"{_chance_p(r)}" for r in weak)
    every = " on any dataset: do not deploy it" if len(weak) == len(rows) else ""
    return f"{metric} is not better than chance{every} ({where}; Holm-adjusted over the construct's slices)"


def one_dataset(construct: str, sl: str, results: dict | Any) -> SliceVerdict:
    """The one-dataset headline by the audit's transfer statistic: the AUROC's `on_slice`, or under a graded
    `--statistic` with a correlation block `on_slice_graded`, so the audit says what `select` says."""
    statistic = (results.get("transfer") or {}).get("statistic", "auroc")
    if statistic != "auroc" and results.get("correlations"):
        return on_slice_graded(construct, sl, results["correlations"], statistic)
    return on_slice(construct, sl, results["auroc"], results.get("paired", []))


def statistic_chance_warning(metric: str, datasets: list[str], results: dict | Any,
                             names: dict[str, str] | None = None) -> str:
    """`chance_warning` by the audit's transfer statistic: under a graded `--statistic`, the datasets where the
    metric's correlation is not above 0 by its 95% CI (from the correlation block), not its AUROC's chance test.

    Args:
        metric: the recommended metric.
        datasets: the construct's datasets.
        results: results.json (its `transfer.statistic`, `auroc` rows and `correlations` block).
        names: shorter dataset names to print, if any.

    Returns:
        The warning without a leading label or final full stop ('' when there is nothing to warn about).
    """
    statistic = (results.get("transfer") or {}).get("statistic", "auroc")
    if statistic == "auroc" or not results.get("correlations"):
        return chance_warning(metric, datasets, results.get("auroc") or [], names)
    name, grouping = (statistic[len("partial-"):], "partial") if statistic.startswith("partial-") else (statistic,
                                                                                                       "none")
    unit = STATISTIC_LABELS.get(statistic, statistic)
    rows = [(e["slice"], c) for e in results["correlations"]["slices"] if e["slice"] in datasets
            for c in e["correlations"] if c["metric"] == metric and c["statistic"] == name
            and c["grouping"] == grouping and fmt.finite(c.get("estimate"))]
    weak = [(sl, c) for sl, c in rows if not (fmt.finite(c["ci_low"]) and c["ci_low"] > 0)]
    if not weak:
        return ""
    short = names or {}
    where = "; ".join(f"{short.get(sl, sl)}: {unit} {fmt.ci(c['estimate'], c['ci_low'], c['ci_high'])}"
                      for sl, c in weak)
    every = " on any dataset: do not deploy it" if len(weak) == len(rows) else ""
    return f"{metric}'s {unit} is not above 0 by its 95% CI{every} ({where})"
