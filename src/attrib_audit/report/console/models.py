"""`models list` and `reproduce`: the scorers this machine can run, and the paper's numbers beside ours."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from attrib_audit.report import fmt
from attrib_audit.report.console.grid import MISSING, grid

if TYPE_CHECKING:  # types only: `models list` and --help load neither module
    from attrib_audit.audit.reproduce import ReproduceReport
    from attrib_audit.scorers.listing import ModelEntry


def format_models(entries: Sequence[ModelEntry]) -> str:
    """`models list`: per scorer one aligned line (name, ready/absent, what it computes), then indented: where its
    weights resolve, what else it needs, how to install it, and its last known-answer check."""
    heads = grid(None, [[e.name, "ready " if e.ready else "absent", e.description] for e in entries])
    lines = []
    for head, e in zip(heads, entries):
        lines += [head, f"    {e.where}"]
        lines += [f"    {n}" for n in e.needs]
        if not e.ready:
            lines.append(f"    install: {e.install}")
        if e.check:
            lines.append(f"    {e.check}")
    return "\n".join(lines)


# ---- reproduce ------------------------------------------------------------------------------------------------

def format_reproduce(rep: ReproduceReport) -> str:
    """`reproduce`: per paper row and scorer that ran, the paper's AUROC beside ours with the difference and whether
    the paper's number lies outside our CI; then what could not run (data, weights) and why."""
    head = ["table", "row", "data", "n", "scorer", "paper", "ours [95% CI]", "ours − paper", "vs our CI"]
    rows: list[list[str]] = []
    stand_ins: dict[str, int] = {}
    for r in rep.rows:
        d = r.data
        if not d:
            continue
        mark = "†" * stand_ins.setdefault(d.stand_in, len(stand_ins) + 1) if d.stand_in else ""
        n = str(d.n) + (f" (paper {d.paper_n})" if d.paper_n and d.paper_n != d.n else "")
        for c in r.cells:
            o, v = c.ours, c.comparison.verdict
            if o is None:
                continue
            verdict = {"differs": "DIFFERS", "within CI": "within"}.get(v or "", v or MISSING)
            rows.append([r.table, r.row, f"stand-in{mark}" if mark else "paper's", n, c.scorer,
                         c.paper.text if c.paper else MISSING, fmt.ci(o.auroc, o.ci_low, o.ci_high),
                         fmt.num(c.comparison.diff, signed=True), verdict])
    s = rep.summary
    lines = [f"Reproducing {rep.paper}", ""]
    lines += grid(head, rows, rule=True) if rows else ["no row of the paper could run here"]
    lines += ["", f"{s.cells_run} cells run; {s.compared} of the paper's {s.paper_numbers} stated numbers "
                  f"compared, {s.differ} outside our CI (DIFFERS). CI: {rep.settings.ci}. A paper number is "
                  "an interval: ± half its last digit, or the range the text gives; "
                  "* = derived from a stated difference."]
    for note, i in stand_ins.items():
        lines.append(f"{'†' * i} {note}")
    for r in rep.rows:
        if r.data and r.data.status != "ok":
            lines.append(f"{r.table}:{r.row}: {r.data.status} in {r.data.title}")
    if rep.absent_data:
        lines += ["", "absent data (not run):"]
        lines += [f"  {a.title} ({', '.join(a.rows)}): {a.reason}" for a in rep.absent_data]
    if rep.absent_scorers:
        lines += ["", "absent scorers (not run):"]
        lines += [f"  {a.scorer} ({a.model or 'built in'}; {a.paper_numbers} paper number"
                  f"{'s' if a.paper_numbers != 1 else ''} not compared): {a.reason}"
                  for a in rep.absent_scorers]
    return "\n".join(lines)
