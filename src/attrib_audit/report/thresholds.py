"""Deployable thresholds (thresholds.json): per construct the certified and naive threshold of every scorer and
slice with their held-out rates, the transfer matrices, calibration (ECE with CIs) and one reliability diagram."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from attrib_audit.audit.thresholds import CalibrationRecord, ThresholdEntry
from attrib_audit.report import fmt, style
from attrib_audit.report.blocks import Block, Figure, Note, Para, Section, Table, guard
from attrib_audit.report.console import RATE_NAMES, short_names
from attrib_audit.report.figcache import cached_figure
from attrib_audit.stats.threshold import GateRates
from attrib_audit.stats.types import Estimate


def _ci(e: Estimate | None) -> str:
    return fmt.DASH if not e else fmt.ci(e.estimate, e.ci_low, e.ci_high)


def _rates(r: GateRates | None, kind: str) -> str:
    return fmt.DASH if not r else _ci(r.rate(kind))


def _by_construct(entries: list[ThresholdEntry]) -> dict[str, list[ThresholdEntry]]:
    out: dict[str, list[ThresholdEntry]] = {}
    for e in entries:
        out.setdefault(e.construct, []).append(e)
    return out


def _answer(e: ThresholdEntry) -> str:
    """The certified threshold, or why none and how many more labels would certify one."""
    if e.certified_threshold is not None:
        return fmt.threshold(e.certified_threshold)
    f = e.fewest_labels
    more = (f"; {f.more_labels} more labelled pairs would certify t={fmt.threshold(f.threshold)} at the rates seen"
            if f and f.more_labels is not None else "")
    return f"none: {e.certified_reason}{more}"


def _threshold(e: ThresholdEntry, which: str) -> float | None:
    return e.certified_threshold if which == "certified" else e.naive_threshold


def _held_out(e: ThresholdEntry, which: str, kind: str) -> str:
    h = e.held_out
    if not h or _threshold(e, which) is None:
        return fmt.DASH
    rates = h.certified if which == "certified" else h.naive
    if not rates:  # e.g. certified on the whole slice, but no fold's training part has enough labels
        return f"{fmt.DASH} (no fold has one)"
    done = h.certified_folds if which == "certified" else h.naive_folds
    return _rates(rates, kind) + (f" ({done}/{h.folds} folds)" if done < h.folds else "")


def _useless(e: ThresholdEntry) -> str:
    """' — certified but useless' when the certified gate passes fewer supported answers than the floor."""
    u = e.usefulness
    return f" — certified but useless (under {fmt.pct(u.floor)})" if u and u.useless else ""


def construct_table(c: str, rows: list[ThresholdEntry], kind: str) -> Table:
    names = short_names(list(dict.fromkeys(e.slice for e in rows)))
    rate = RATE_NAMES[kind]
    body = [[names[e.slice], e.scorer, e.unit or fmt.DASH, _answer(e), _held_out(e, "certified", kind),
             _rates(e.in_sample.certified, "supported_pass") + _useless(e),
             _rates(e.in_sample.certified, "precision"),
             fmt.threshold(e.naive_threshold) if e.naive_threshold is not None else f"none: {e.naive_reason}",
             _rates(e.in_sample.naive, kind), _held_out(e, "naive", kind)]
            for e in sorted(rows, key=lambda e: list(names).index(e.slice))]
    return Table(["slice", "scorer", "unit", "certified threshold", f"held-out {rate}", "supported passed",
                  "precision", "naive threshold", f"in-sample {rate}", f"held-out {rate}"], body,
                 f"{c}: the threshold Learn-then-Test certifies (or why none), its cross-fitted held-out {rate} and "
                 "the share of supported pairs it lets through and its precision (in-sample), beside the naive "
                 f"threshold (the least conservative one whose in-sample {rate} meets the target) and its in-sample "
                 f"and held-out {rate}.")


def transfer_tables(c: str, rows: list[ThresholdEntry], kind: str) -> list[Block]:
    out: list[Block] = []
    for scorer in dict.fromkeys(e.scorer for e in rows):
        mine = [(e, e.transfer) for e in rows if e.scorer == scorer and e.transfer]
        if not mine:
            continue
        slices = mine[0][1].slices
        names = short_names(slices)
        for which in ("certified", "naive"):
            body = []
            for e, tr in mine:
                cells = {x.applied_to: x for x in (tr.certified if which == "certified" else tr.naive)}
                if cells:
                    body.append([f"{names[e.slice]} (t={fmt.threshold(_threshold(e, which))})",
                                 *(_ci(cells[s].rates.rate(kind)) + (" (broken)" if cells[s].broken else "")
                                   + (" (in-sample)" if cells[s].in_sample else "") for s in slices)])
            if body:
                out.append(Table(["fitted on \\ applied to", *(names[s] for s in slices)], body,
                                 f"{c}, {scorer}: each slice's {which} threshold applied to every slice of the "
                                 f"construct; {RATE_NAMES[kind]} [95% CI]; broken = the CI lies wholly on the wrong "
                                 "side of the target."))
            elif which == "certified":
                out.append(Para(f"{c}, {scorer}: no slice has a certified threshold to transfer."))
    return out


def calibration_table(c: str, rows: list[ThresholdEntry]) -> Table:
    names = short_names(list(dict.fromkeys(e.slice for e in rows)))
    recal = any(e.calibration.recalibrated is not None for e in rows)
    body = []
    for e in sorted(rows, key=lambda e: list(names).index(e.slice)):
        cal = e.calibration
        rel = cal.reliability
        row = [names[e.slice], e.scorer, _ci(rel.ece) if rel else f"not computed: {cal.reason}"]
        if recal:
            r = cal.recalibrated.recalibration if cal.recalibrated else None
            reason = cal.recalibrated.recalibration_reason if cal.recalibrated else None
            row += [_ci(r.held_out.ece) if r else f"not computed: {reason}",
                    fmt.DASH if not r or not r.improvement else fmt.ci(
                        r.improvement.estimate, r.improvement.ci_low, r.improvement.ci_high, signed=True),
                    _map_transfer(cal, names)]
        body.append(row)
    head = ["slice", "scorer", "ECE [95% CI]"] + (["recalibrated ECE (held-out)", "improvement", "its map elsewhere"]
                                                 if recal else [])
    recal_note = ("; recalibration maps fitted without each fold and judged on it, and whether a slice's map holds "
                  "on the other slices (its ECE excess over their own held-out map has a CI that includes 0)")
    return Table(head, body, f"{c}: expected calibration error of the score read as P(supported), with a clustered "
                             "bootstrap CI" + (recal_note if recal else "") + ".")


def _map_transfer(cal: CalibrationRecord, names: dict[str, str]) -> str:
    moved = cal.map_transfer
    if moved and moved.transfer:
        broken = [names.get(x.applied_to, x.applied_to) for x in moved.transfer if not x.holds and not x.held_out]
        return "holds on all" if not broken else "fails on " + ", ".join(broken)
    return (moved.transfer_reason if moved else None) or fmt.DASH


@cached_figure
def reliability_plot(entries: list[ThresholdEntry], plots: Path) -> Figure | None:
    """One figure: a panel per scorer (rows) and construct (columns), a line per slice, the diagonal = calibrated."""
    plt = style.pyplot()

    groups = _by_construct([e for e in entries if e.calibration.reliability])
    if not groups:
        return None
    scorers = list(dict.fromkeys(e.scorer for rows in groups.values() for e in rows))
    with style.rc():
        fig, axes = plt.subplots(len(scorers), len(groups), squeeze=False, layout="constrained",
                                 figsize=(3.2 * len(groups) + 0.4, 2.9 * len(scorers)))
        for j, (c, rows) in enumerate(groups.items()):
            slices = list(dict.fromkeys(e.slice for e in rows))
            names = short_names(slices)
            for i, scorer in enumerate(scorers):
                ax = axes[i, j]
                ax.plot([0, 1], [0, 1], color="#555555", linestyle="--", linewidth=0.8)
                for e in (e for e in rows if e.scorer == scorer):
                    rel = e.calibration.reliability
                    assert rel is not None  # the entries were chosen for it
                    pts = [(x, y) for x, y in zip(rel.mean_score.tolist(), rel.frac_supported.tolist())
                           if fmt.finite(x) and fmt.finite(y)]
                    k = slices.index(e.slice)
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=style.marker(k), markersize=3.5,
                            color=style.colour(k), linewidth=1.0,
                            label=f"{names[e.slice]} (ECE {fmt.num(rel.ece.estimate, 2)})")
                ax.set_xlim(0, 1)
                ax.set_ylim(0, 1)
                ax.set_title(f"{scorer} · {c}", loc="left")
                ax.set_xlabel("mean score in bin")
                ax.set_ylabel("share supported")
                ax.legend(loc="upper left", frameon=False)
        return style.save(fig, plots, "reliability",
                          "Reliability diagrams: per scorer and construct, each slice's share of supported pairs "
                          "against its mean score in ten bins on [0, 1]; the dashed diagonal is a calibrated "
                          "probability.")


def build(inputs: Any, plots: Path) -> Section | None:
    sec = Section("thresholds", "Deployable thresholds")
    if inputs.thresholds is None:
        return None if inputs.thresholds_skipped is None else sec.add(Note(
            f"The thresholds were skipped: its saved results do not have the layout this report reads "
            f"({inputs.thresholds_skipped})."))
    th = inputs.thresholds
    kind = th.config.target.kind
    sec.add(Para("Gate: pass the answer when its score ≥ t. " + "; ".join(th.notes) + "."))
    for a in dict.fromkeys(e.assumption for e in th.entries if e.assumption):
        sec.add(Note(f"Assumption: {a}."))
    for c, rows in _by_construct(th.entries).items():
        sec.add(*guard(f"The thresholds of {c}", lambda c=c, rows=rows: [construct_table(c, rows, kind)]))
        reasons = dict.fromkeys(e.transfer_reason for e in rows if e.transfer_reason and e.status == "ok")
        sec.add(*(Note(f"{c}: transfer not computed — {r}.") for r in reasons))
        sec.add(*guard(f"The transfer matrices of {c}", transfer_tables, c, rows, kind))
        sec.add(*guard(f"The calibration of {c}", lambda c=c, rows=rows: [calibration_table(c, rows)]))
    sec.add(*guard("The reliability diagram", lambda: [f for f in [reliability_plot(th.entries, plots)] if f]))
    return sec
