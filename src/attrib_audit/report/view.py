"""An index over results.json: slices grouped by construct, rows looked up by (scorer, slice)."""
from __future__ import annotations

from dataclasses import dataclass

from attrib_audit.audit.results import AuditResults, AurocRow, FailureRow, SliceRow, TruncationRow
from attrib_audit.report.fmt import evidence_caveat


@dataclass(kw_only=True)
class AuditView:
    scorers: list[str]
    slices: dict[str, SliceRow]  # slice name -> its `slices` row, grouped by construct
    constructs: dict[str, list[str]]  # construct -> its slice names, in report order
    auroc: dict[tuple[str, str], AurocRow]
    truncation: dict[tuple[str, str], TruncationRow]
    failures: dict[tuple[str, str], FailureRow]

    @classmethod
    def of(cls, results: AuditResults) -> AuditView:
        scorers = results.scorer_names
        for r in results.auroc:
            if r.scorer not in scorers:
                scorers.append(r.scorer)
        slices = sorted(results.slices, key=lambda s: (s.construct or "unspecified", s.slice))
        constructs: dict[str, list[str]] = {}
        for s in slices:
            constructs.setdefault(s.construct or "unspecified", []).append(s.slice)
        return cls(scorers=scorers, slices={s.slice: s for s in slices}, constructs=constructs,
                   auroc={(r.scorer, r.slice): r for r in results.auroc},
                   truncation={(r.scorer, r.slice): r for r in results.truncation},
                   failures={(r.scorer, r.slice): r for r in results.failures})

    def cell(self, scorer: str, sl: str) -> AurocRow | None:
        return self.auroc.get((scorer, sl))

    def caveat(self, scorer: str, sl: str) -> str:
        c = self.cell(scorer, sl)
        f = self.failures.get((scorer, sl))
        return evidence_caveat(self.truncation.get((scorer, sl)), c.n_failed if c else None, c.n if c else None,
                               f.n_clamped if f else None)
