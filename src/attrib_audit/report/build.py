"""Assemble a report from saved results: each section is drawn only when its results exist, and a
section whose input has an unexpected layout becomes a visible note instead of a crash."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from attrib_audit.report import agreement, audit_extras, auroc, probe, provenance, reproduce, sensitivity, transfer
from attrib_audit.report.blocks import LAYOUT_ERRORS, Note, Section
from attrib_audit.report.inputs import ReportInputs, load_inputs
from attrib_audit.report.render import to_html, to_markdown


@dataclass(frozen=True)
class SectionSpec:
    key: str
    title: str
    source: str  # which input the section reads, named in a skipped-section note
    build: Callable[[ReportInputs, Path], Section | None]


SECTIONS: tuple[SectionSpec, ...] = (
    SectionSpec("headline", "Headline", "results", audit_extras.headline),
    SectionSpec("auroc", "AUROC per metric and slice", "results", auroc.build),
    SectionSpec("transfer", "Transfer across datasets", "results", transfer.build),
    SectionSpec("sensitivity", "Sensitivity: length, truncation and single datasets", "results", sensitivity.build),
    SectionSpec("paired", "Paired differences", "results", audit_extras.paired),
    SectionSpec("evidence", "Truncation and failures", "results", audit_extras.evidence),
    SectionSpec("provenance", "Provenance diagnostic", "provenance", provenance.build),
    SectionSpec("agreement", "Judge agreement (Cohen's κ)", "agreement", agreement.build),
    SectionSpec("probe", "Answer-level probe", "probe", probe.build),
    SectionSpec("reproduce", "Reproduce this audit", "results", reproduce.build),
)


@dataclass(frozen=True)
class ReportPaths:
    html: Path
    markdown: Path
    plots: list[Path]
    skipped: list[str]  # sections drawn as a note because their input had an unexpected layout


def run_sections(inputs: ReportInputs, plots: Path, specs=SECTIONS) -> tuple[list[Section], list[str]]:
    sections, skipped = [], []
    for spec in specs:
        try:
            sec = spec.build(inputs, plots)
        except LAYOUT_ERRORS as exc:
            skipped.append(spec.key)
            sec = Section(spec.key, spec.title, [Note(
                f"This section was skipped: {inputs.source(spec.source)} does not have the layout this report "
                f"reads ({type(exc).__name__}: {exc}).")])
        if sec is not None:
            sections.append(sec)
    return sections, skipped


def build_report(folder: str | Path, out: str | Path | None = None, **explicit: str | Path | None) -> ReportPaths:
    """Write report.html, report.md and plots/*.png|svg for the results saved in `folder`."""
    inputs = load_inputs(folder, **explicit)
    out = Path(out) if out else inputs.folder
    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    index = plots / "index.txt"
    if index.is_file():  # a plot whose results are gone must not linger beside the new report
        for name in index.read_text().split():
            (plots / Path(name).name).unlink(missing_ok=True)
    sections, skipped = run_sections(inputs, plots)
    written = sorted(p for p in plots.iterdir() if p.suffix in (".png", ".svg"))
    index.write_text("".join(f"{p.name}\n" for p in written))
    title = "attrib-audit report"
    tool = next((d["tool"] for d in (inputs.results, inputs.provenance, inputs.probe)
                 if isinstance(d, dict) and isinstance(d.get("tool"), dict)), {})
    meta = (f"attrib-audit {tool.get('version', '?')} · read from {', '.join(str(p) for p in inputs.sources.values())} "
            "· every statistic below is copied from those files, none is recomputed")
    md_path, html_path = out / "report.md", out / "report.html"
    md_path.write_text(to_markdown(title, meta, sections, md_path), encoding="utf-8")
    html_path.write_text(to_html(title, meta, sections), encoding="utf-8")
    return ReportPaths(html_path, md_path, written, skipped)
