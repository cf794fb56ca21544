"""An index over results.json: slices grouped by construct, cells looked up by (scorer, slice).

A missing key raises KeyError, which the section runner turns into a visible skipped-section note.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attrib_audit.report.fmt import evidence_caveat


@dataclass
class AuditView:
    scorers: list[str]
    slices: dict[str, dict]  # slice name -> its `slices` row, grouped by construct
    constructs: dict[str, list[str]]  # construct -> its slice names, in report order
    auroc: dict[tuple[str, str], dict]
    truncation: dict[tuple[str, str], dict]
    failures: dict[tuple[str, str], dict]

    @classmethod
    def of(cls, results: dict[str, Any]) -> "AuditView":
        rows = results["auroc"]
        scorers = [s["scorer"] for s in results.get("scorers", [])]
        for r in rows:
            if r["scorer"] not in scorers:
                scorers.append(r["scorer"])
        slices = sorted(results["slices"], key=lambda s: (str(s.get("construct") or "unspecified"), s["slice"]))
        constructs: dict[str, list[str]] = {}
        for s in slices:
            constructs.setdefault(str(s.get("construct") or "unspecified"), []).append(s["slice"])
        key = lambda r: (r["scorer"], r["slice"])  # noqa: E731
        return cls(scorers, {s["slice"]: s for s in slices}, constructs, {key(r): r for r in rows},
                   {key(r): r for r in results.get("truncation", [])}, {key(r): r for r in results.get("failures", [])})

    def cell(self, scorer: str, sl: str) -> dict:
        return self.auroc.get((scorer, sl), {})

    def caveat(self, scorer: str, sl: str) -> str:
        c = self.cell(scorer, sl)
        return evidence_caveat(self.truncation.get((scorer, sl)), c.get("n_failed"), c.get("n"),
                               self.failures.get((scorer, sl), {}).get("n_clamped"))
