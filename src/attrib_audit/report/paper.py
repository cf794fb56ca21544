"""The reproduction of the paper's tables (`attrib-audit reproduce`) as report sections: per table the paper's
AUROC beside ours, then what could not run; the same numbers the terminal prints (report.console)."""
from __future__ import annotations

from attrib_audit.audit.reproduce import ReproduceReport
from attrib_audit.report import fmt
from attrib_audit.report.blocks import Note, Para, Section, Table


def reproduce_sections(rep: ReproduceReport) -> list[Section]:
    """The report's sections of a reproduction: a summary, per paper table its cells, then what could not run."""
    s = rep.summary
    head = Section("reproduce-summary", "Reproduction")
    head.add(Para(f"{rep.paper}. Data: {rep.data_dir or 'none'}. {s.cells_run} cells run; "
                  f"{s.compared} of the paper's {s.paper_numbers} stated numbers compared, {s.differ} outside "
                  f"our CI ({rep.settings.ci}). A paper number is an interval (± half its last digit, or the "
                  "range the text gives); * marks a number derived from a stated difference."))
    sections = [head]
    for table in dict.fromkeys(r.table for r in rep.rows):
        rows = [r for r in rep.rows if r.table == table]
        sec = Section(f"reproduce-{table}", rows[0].table_title)
        body = []
        for r in rows:
            d = r.data
            for c in r.cells:
                o = c.ours
                body.append([r.row, "—" if not d else ("stand-in" if d.stand_in else "paper's"),
                             "—" if not d else str(d.n), c.scorer, c.model or "—",
                             c.paper.text if c.paper else fmt.DASH,
                             fmt.ci(o.auroc, o.ci_low, o.ci_high) if o else f"not run: {c.absent}",
                             fmt.num(c.comparison.diff, signed=True), c.comparison.verdict or fmt.DASH])
        sec.add(Table(["row", "data", "n", "scorer", "model", "paper", "ours [95% CI]", "ours − paper", "vs our CI"],
                      body))
        for r in rows:
            if r.data and r.data.stand_in:
                sec.add(Note(f"{r.row}: {r.data.stand_in}"))
            if r.note:
                sec.add(Para(f"{r.row}: {r.note}"))
            for c in r.cells:
                if c.paper:
                    p = c.paper
                    sec.add(Para(f"{r.row} / {c.scorer}: paper {p.text} ({p.where}: “{p.quote}”"
                                 + (f"; derived as {p.derived}" if p.derived else "") + ")"))
        sections.append(sec)
    absent = Section("reproduce-absent", "Not run here")
    absent.add(Table(["dataset", "rows", "why"], [[a.title, ", ".join(a.rows), a.reason]
                                                   for a in rep.absent_data], "Absent data"))
    absent.add(Table(["scorer", "model", "paper numbers not compared", "why"],
                     [[a.scorer, a.model or "—", str(a.paper_numbers), a.reason]
                      for a in rep.absent_scorers], "Absent scorers"))
    sections.append(absent)
    return sections
