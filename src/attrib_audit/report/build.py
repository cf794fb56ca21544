"""Assemble a report from saved results: each section is drawn only when its results exist, and a
section whose input lacks a key it reads becomes a visible note instead of a crash. A value of the wrong type
is a note too when the file is not as attrib-audit wrote it (its digest fails: edited or made elsewhere);
in a sealed file it is a bug in report code and propagates (the command exits non-zero), never a note."""
from __future__ import annotations

import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from attrib_audit.errors import LAYOUT_ERRORS as BROAD_LAYOUT_ERRORS
from attrib_audit.files.outdir import REPORT_FILES, check_out_dir, staged_dir
from attrib_audit.files.records import to_record
from attrib_audit.report import (
    agreement,
    audit_extras,
    auroc,
    correlations,
    figcache,
    probe,
    provenance,
    reproduce,
    sensitivity,
    systems,
    thresholds,
    transfer,
)
from attrib_audit.report.blocks import LAYOUT_ERRORS, Note, Section
from attrib_audit.report.inputs import ReportInputs, load_inputs
from attrib_audit.report.render import to_html, to_markdown
from attrib_audit.report.style import png_copies


@dataclass(frozen=True)
class SectionSpec:
    key: str
    title: str
    source: str  # which input the section reads, named in a skipped-section note
    build: Callable[[ReportInputs, Path], Section | None]


SECTIONS: tuple[SectionSpec, ...] = (
    SectionSpec("headline", "Headline", "results", audit_extras.headline),
    SectionSpec("auroc", "AUROC per metric and slice", "results", auroc.build),
    SectionSpec("correlations", "Correlation with the graded human rating", "results", correlations.build),
    SectionSpec("transfer", "Transfer across datasets", "results", transfer.build),
    SectionSpec("sensitivity", "Sensitivity: length, truncation and single datasets", "results",
                sensitivity.build),
    SectionSpec("systems", "System level: ranking generators", "results", systems.build),
    SectionSpec("paired", "Paired differences", "results", audit_extras.paired),
    SectionSpec("evidence", "Truncation and failures", "results", audit_extras.evidence),
    SectionSpec("thresholds", "Deployable thresholds", "thresholds", thresholds.build),
    SectionSpec("provenance", "Provenance diagnostic", "provenance", provenance.build),
    SectionSpec("agreement", "Judge agreement (Cohen's κ)", "agreement", agreement.build),
    SectionSpec("probe", "Answer-level probe", "probe", probe.build),
    SectionSpec("reproduce", "Reproduce this audit", "results", reproduce.build),
)


@dataclass(frozen=True, kw_only=True)
class ReportPaths:
    html: Path
    markdown: Path
    plots: list[Path]
    skipped: list[str]  # sections drawn as a note because their input had an unexpected layout
    ignored: list[str]  # input files left out because another run wrote them


def run_sections(inputs: ReportInputs, plots: Path, specs=SECTIONS) -> tuple[list[Section], list[str]]:
    sections, skipped = [], []
    for spec in specs:
        try:
            sec = spec.build(inputs, plots)
        except BROAD_LAYOUT_ERRORS as exc:
            if not isinstance(exc, LAYOUT_ERRORS) and inputs.sealed(spec.source):
                raise  # the file is as attrib-audit wrote it: the error is in report code
            skipped.append(spec.key)
            sec = Section(spec.key, spec.title, [Note(
                f"This section was skipped: {inputs.source(spec.source)} does not have the layout this report "
                f"reads ({exc}).")])
        if sec is not None:
            sections.append(sec)
    return sections, skipped


def build_report(folder: str | Path, out: str | Path | None = None, *, png: bool = False,
                 **explicit: str | Path | None) -> ReportPaths:
    """Write report.html, report.md and plots/*.svg (and plots/*.png with `png`) for the results saved in `folder`.

    Everything is drawn in a temporary folder inside `out` first and moved into place at the end,
    so a failure mid-way leaves the previous report whole.

    Args:
        folder: An audit folder (results.json, and whatever else its commands wrote there).
        out: Where to write the report (None: `folder`).
        png: Also write PNG copies of the plots.
        **explicit: Files elsewhere to include: provenance=, probe=, agreement= paths.

    Returns:
        The paths written.

    Raises:
        ReportError: No such folder, a named file missing, or results that cannot be drawn.
        ValueError: An unknown keyword in `explicit`.
    """
    inputs = load_inputs(folder, **explicit)
    out = check_out_dir(out if out else inputs.folder, names=REPORT_FILES)
    with staged_dir(out, replaces=REPORT_FILES) as stage:
        (stage / "plots").mkdir()
        with png_copies(png), figcache.build_session() as figures:
            sections, skipped = run_sections(inputs, stage / "plots")
            if figures.conflict:  # a cached entry claimed another figure's file: draw every figure anew
                warnings.warn("figure cache: two figures claimed one file name; every figure drawn again", stacklevel=2)
                shutil.rmtree(stage / "plots")
                (stage / "plots").mkdir()
                figures.bypass = True
                sections, skipped = run_sections(inputs, stage / "plots")
        if inputs.ignored:
            sections.insert(0, Section("ignored", "Files left out", [Note(
                "Left out because another run wrote them (their run id differs from results.json): "
                + "; ".join(inputs.ignored) + ".")]))
        drawn = sorted(p.name for p in (stage / "plots").iterdir() if p.suffix in (".png", ".svg"))
        title = "attrib-audit report"
        tool = (to_record(inputs.results.tool) if inputs.results is not None else
                to_record(inputs.provenance.tool) if inputs.provenance is not None else
                to_record(inputs.thresholds.tool) if inputs.thresholds is not None else {})
        run = inputs.run_id
        meta = (f"attrib-audit {tool.get('version', '?')} · " + (f"run {run} · " if run else "")
                + f"read from {', '.join(str(p) for p in inputs.sources.values())} "
                "· every statistic below is copied from those files, none is recomputed")
        (stage / "report.md").write_text(to_markdown(title, meta, sections, stage / "report.md"), encoding="utf-8")
        (stage / "report.html").write_text(to_html(title, meta, sections, run_id=run), encoding="utf-8")
    # plots/ is replaced whole (never written into): a plot whose results are gone does not linger
    return ReportPaths(html=out / "report.html", markdown=out / "report.md", plots=[out / "plots" / n for n in drawn],
                       skipped=skipped,
                       ignored=list(inputs.ignored))
