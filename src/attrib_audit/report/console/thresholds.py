"""`threshold`: deployable gates, per construct and slice, from thresholds.json's records."""
from __future__ import annotations

from typing import Mapping, Sequence

from attrib_audit.audit.thresholds import ThresholdEntry, ThresholdsResults
from attrib_audit.report import fmt
from attrib_audit.report.console.grid import MISSING, _num, _threshold, grid, short_names
from attrib_audit.stats.threshold import GateRates
from attrib_audit.stats.types import Estimate

RATE_NAMES = {"false_pass": "false-pass", "precision": "precision", "catch": "catch"}


def _ci(e: Estimate) -> str:
    return fmt.ci(e.estimate, e.ci_low, e.ci_high)


def _rate(rates: GateRates | None, kind: str) -> str:
    return MISSING if not rates else _ci(rates.rate(kind))


def _held_out(e: ThresholdEntry, which: str, kind: str) -> str:
    """The cross-fitted rate of the certified or naive threshold, with the folds that fitted one when not all did."""
    h = e.held_out
    if not h or (e.certified_threshold if which == "certified" else e.naive_threshold) is None:
        return MISSING
    rates = h.certified if which == "certified" else h.naive
    if not rates:  # e.g. certified on the whole slice, but no fold's training part has enough labels
        return f"{MISSING} (0/{h.folds} folds)" if h.folds else MISSING
    done = h.certified_folds if which == "certified" else h.naive_folds
    return _rate(rates, kind) + (f" ({done}/{h.folds} folds)" if done < h.folds else "")


def _more_labels(e: ThresholdEntry) -> str:
    if e.certified_threshold is not None or e.status != "ok":
        return MISSING
    f = e.fewest_labels
    if not f or f.more_labels is None:
        return "no amount"
    return f"+{f.more_labels} (t={_threshold(f.threshold)})"


_SHORT = (("too few labels", "too few labels"), ("one class", "one class"), ("no threshold meets", "unmet in-sample"),
          ("not certified", "not certified"), ("no scores", "no scores"))


def _short_reason(reason: str | None) -> str:
    """The kind of a certificate's one-line reason, for a table cell (the line itself is printed below the table)."""
    return next((short for start, short in _SHORT if (reason or "").startswith(start)),
                (reason or MISSING).split(":")[0])


def _by_construct(entries: Sequence[ThresholdEntry]) -> dict[str, list[ThresholdEntry]]:
    out: dict[str, list[ThresholdEntry]] = {}
    for e in entries:
        out.setdefault(e.construct, []).append(e)
    return out


def _units(rows: Sequence[ThresholdEntry]) -> str:
    units = sorted({e.unit for e in rows if e.unit})
    return "/".join(units) or MISSING


def _transfer_counts(rows: Sequence[ThresholdEntry], which: str) -> tuple[int, int]:
    cells = [c for e in rows if e.transfer for c in (e.transfer.certified if which == "certified" else e.transfer.naive)
             if not c.in_sample]
    return sum(c.broken for c in cells), len(cells)


def format_threshold_matrix(rows: Sequence[ThresholdEntry], which: str, kind: str,
                            names: Mapping[str, str]) -> list[str]:
    """One transfer matrix: rows the slice a threshold was fitted on, columns the slice it is applied to."""
    first = rows[0].transfer
    slices = first.slices if first else []
    body = []
    for e in rows:
        row = e.transfer.certified if e.transfer and which == "certified" else e.transfer.naive if e.transfer else []
        cells = {c.applied_to: c for c in row}
        if not cells:
            continue
        t = e.certified_threshold if which == "certified" else e.naive_threshold
        body.append([f"{names[e.slice]} (t={_threshold(t)})",
                     *(_ci(cells[s].rates.rate(kind)) + (" !" if cells[s].broken else "")
                       + (" ·" if cells[s].in_sample else "") for s in slices)])
    if not body:
        return [f"    {which}: no slice has a {which} threshold"]
    return [f"    {which} thresholds:"] + grid(["fitted on \\ applied to", *(names[s] for s in slices)], body,
                                                indent="      ")


def format_thresholds(results: ThresholdsResults, verbose: bool = False) -> str:
    """What `threshold` prints: per construct and slice the deployable threshold or why none, with held-out rates;
    `verbose` adds every reason, the certificates, the transfer matrices and calibration."""
    cfg = results.config
    t = cfg.target
    kind = t.kind
    rate = RATE_NAMES[kind]
    sign = "≤" if kind == "false_pass" else "≥"
    out = [f"Deployable thresholds (pass when score ≥ t): {rate} {sign} {t.level:g} with probability ≥ "
           f"{1 - cfg.delta:g} (Learn-then-Test). held-out = cross-fitted on whole groups; +labels = the fewest "
           "more labelled pairs that would certify some threshold, at the rates seen (-v: what looser ones need)."]
    for c, rows in _by_construct(results.entries).items():
        order = {sl: i for i, sl in enumerate(dict.fromkeys(e.slice for e in rows))}
        rows = sorted(rows, key=lambda e: order[e.slice])  # per slice, its scorers in the file's order
        names = short_names(list(dict.fromkeys(e.slice for e in rows)))
        out.append(f"\nconstruct {c} (unit of exchangeability: {_units(rows)}):")
        out += grid(["slice", "scorer", "certified t", f"held-out {rate}", "+labels", "naive t", f"in-sample {rate}",
                     f"held-out {rate}"],
                    [[names[e.slice], e.scorer,
                      _threshold(e.certified_threshold) if e.certified_threshold is not None
                      else "none: " + _short_reason(e.certified_reason),
                      _held_out(e, "certified", kind), _more_labels(e), _threshold(e.naive_threshold),
                      _rate(e.in_sample.naive, kind), _held_out(e, "naive", kind)] for e in rows],
                    indent="  ", rule=True)
        why: dict[tuple[str, str | None], list[str]] = {}
        for e in rows:
            if e.certified_threshold is None:
                why.setdefault((e.slice, e.certified_reason), []).append(e.scorer)
        scorers = list(dict.fromkeys(e.scorer for e in rows))
        for (sl, reason), who in why.items():
            out.append(f"  {names[sl]} ({'every scorer' if len(who) == len(scorers) > 1 else ', '.join(who)}): "
                       f"{reason}")
        counts = [(s, _transfer_counts([e for e in rows if e.scorer == s], "certified"),
                   _transfer_counts([e for e in rows if e.scorer == s], "naive")) for s in scorers]
        if any(n for _, (_, n), (_, m) in counts for n in (n, m)):
            out.append("  transfer to the other slices, cells whose CI breaks the target: " + "; ".join(
                f"{s} certified {b}/{n}, naive {b2}/{n2}" for s, (b, n), (b2, n2) in counts)
                + ("" if verbose else " (-v: the matrices)"))
        elif rows[0].transfer_reason:
            out.append(f"  transfer: {rows[0].transfer_reason}")
        if verbose:
            out += _threshold_details(rows, kind, names, scorers)
    if not verbose:
        out.append("\n-v: every reason, certificate, label count, transfer matrix and the calibration (ECE)")
    return "\n".join(out)


def format_gate_usefulness(results: ThresholdsResults) -> str:
    """What each certified gate costs: the share of supported answers it passes and its precision (in-sample, with
    CIs), flagged 'certified but useless' under the floor; and the joint certificates when a second target was set."""
    cfg = results.config
    rows, useless = [], []
    for e in results.entries:
        u = e.usefulness
        if not u:
            continue
        mark = (f"certified but useless: passes {fmt.pct(u.supported_pass.estimate)} of supported answers"
                if u.useless else "ok")
        rows.append([e.slice, e.scorer, _threshold(e.certified_threshold), _ci(u.supported_pass), _ci(u.precision),
                     mark])
        useless += [e.scorer] if u.useless else []
    out = []
    if rows:
        out += [f"\nWhat each certified gate costs (in-sample, 95% CI): supported answers it passes, and its "
                f"precision; useful = passes ≥ {fmt.pct(cfg.min_useful_pass)} of supported answers "
                "(--min-useful-pass):"]
        out += grid(["slice", "scorer", "certified t", "supported passed", "precision", "verdict"], rows, indent="  ",
                    rule=True)
        if useless and len(useless) == len(rows) and cfg.min_supported_pass is None:
            out.append("  every certified gate blocks most supported answers: it meets the target by passing almost "
                       "nothing. Set a floor with --min-supported-pass to certify both at once.")
    if any(e.certificate is not None and e.certificate.n_effective % 1 for e in results.entries):
        out.append("\nA count like '16.65 groups' is an effective count: the number of equally weighted, independent "
                   "units carrying as much information as these, fewer than the rows when pairs share a group, or "
                   "when sampling weights vary.")
    joints = [(e, e.joint) for e in results.entries if e.joint]
    if joints:
        j0 = joints[0][1]
        out.append(f"\nJoint target (Learn-then-Test, both at once with probability ≥ {1 - j0.delta:g}; "
                   f"{j0.grid} label-free candidates at most, each tested at delta/candidates): the target above "
                   f"and supported answers passed ≥ {j0.min_supported_pass:g}:")
        for e, j in joints:
            if j.threshold is not None:
                out.append(f"  {e.slice} {e.scorer}: t = {_threshold(j.threshold)} (in-sample risk "
                           f"{_num(j.risk)}, supported passed {fmt.pct(j.supported_pass)})")
            else:
                out.append(f"  {e.slice} {e.scorer}: {j.reason} (labelled pairs now: {j.labels_at_hand})")
    return "\n".join(out)


def _threshold_details(rows: Sequence[ThresholdEntry], kind: str, names: Mapping[str, str],
                       scorers: Sequence[str]) -> list[str]:
    out = ["  assumption: " + a for a in dict.fromkeys(e.assumption for e in rows if e.assumption)]
    for e in rows:
        head = f"  {names[e.slice]} {e.scorer}: n {e.n} ({e.n_pos} supported, {e.n_groups} groups"
        head += f", {e.n_failed} failed" if e.n_failed else ""
        head += ", weighted" if e.weighted else ""
        out.append(head + ")")
        c = e.certificate
        if c and c.threshold is not None:
            out.append(f"    certified t={c.threshold!r}: {RATE_NAMES[kind]} {_num(c.certified_rate)} in-sample on "
                       f"{c.n_effective:.4g} {c.unit}s that count, risk bound {_num(c.upper_bound)} ≤ "
                       f"{_num(1 - e.target.level if kind != 'false_pass' else e.target.level)} "
                       f"(p = {fmt.pvalue(c.p_value)}, {c.p_value_method}, {c.tested} of {c.candidates} "
                       "thresholds tested)")
        else:
            out.append(f"    certified: none — {e.certified_reason}")
        out.append(f"    naive t={e.naive_threshold!r}" if e.naive_threshold is not None
                   else f"    naive: none — {e.naive_reason}")
        for n, what in ((e.label_need, "the loosest threshold under the target"),
                        (e.fewest_labels, "the cheapest threshold")):
            if n and e.certified_threshold is None:
                out.append(f"    labels to certify {what} t={_threshold(n.threshold)} (risk {_num(n.risk)} on "
                           f"{n.unit}): " + (f"{n.labels_needed} in all, {n.more_labels} more"
                                             if n.labels_needed is not None else "no amount (risk not below target)"))
        h = e.held_out
        if h and h.reason:
            out.append(f"    held-out: {h.reason}")
        out += _calibration_lines(e, names)
    for s in scorers:
        mine = [e for e in rows if e.scorer == s and e.transfer]
        if mine:
            out.append(f"  transfer matrix, {s}: {RATE_NAMES[kind]} [95% CI] "
                       "(! = the CI breaks the target; · = in-sample)")
            for which in ("certified", "naive"):
                out += format_threshold_matrix(mine, which, kind, names)
    return out


def _calibration_lines(e: ThresholdEntry, names: Mapping[str, str]) -> list[str]:
    cal = e.calibration
    rel = cal.reliability
    out = ["    calibration: " + (f"ECE {_ci(rel.ece)} ({len(rel.count)} bins)" if rel else
                                  f"not computed — {cal.reason}")]
    if cal.recalibrated is None:
        return out
    r = cal.recalibrated.recalibration
    if r:
        gain = r.improvement
        out.append(f"    recalibrated ({r.method}, held-out over {r.folds} folds): ECE {_ci(r.held_out.ece)}"
                   + (f", improvement {fmt.ci(gain.estimate, gain.ci_low, gain.ci_high, signed=True)}" if gain else ""))
    else:
        out.append(f"    recalibration: not computed — {cal.recalibrated.recalibration_reason}")
    moved = cal.map_transfer
    if moved and moved.transfer:
        broken = [names.get(x.applied_to, x.applied_to) for x in moved.transfer if not x.holds and not x.held_out]
        out.append("    its map on the other slices: "
                   + ("holds on all" if not broken else "fails on " + ", ".join(broken)))
    elif moved and moved.transfer_reason:
        out.append(f"    its map on the other slices: not computed — {moved.transfer_reason}")
    return out
