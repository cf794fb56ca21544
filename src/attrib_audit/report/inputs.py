"""Read the saved results a report is drawn from; the report never recomputes a statistic."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attrib_audit.audit.agreement import AgreementFile, agreement_record
from attrib_audit.audit.results import AuditResults, results_file
from attrib_audit.audit.saved import results_record
from attrib_audit.audit.thresholds import ThresholdsResults, thresholds_file, thresholds_record
from attrib_audit.data.errors import DataError
from attrib_audit.files.jsonfile import is_sealed, read_json
from attrib_audit.files.records import from_record
from attrib_audit.probe.compare import ProbeComparison
from attrib_audit.provenance.result import ProvenanceRun

FILES = {"results": "results.json", "provenance": "provenance.json", "probe": "probe.json",
         "agreement": "agreement.json", "thresholds": "thresholds.json"}


class ReportError(DataError):
    """A results folder or file that cannot be read; the message names the file."""


@dataclass(kw_only=True)
class ReportInputs:
    folder: Path
    results: AuditResults | None = None
    provenance: ProvenanceRun | None = None
    probe: ProbeComparison | None = None
    agreement: AgreementFile | None = None
    thresholds: ThresholdsResults | None = None
    # why thresholds.json was left out: an edited file (its digest fails) whose values are not of the model's types
    thresholds_skipped: str | None = None
    sources: dict[str, Path] = field(default_factory=dict)  # which file each part came from
    ignored: list[str] = field(default_factory=list)  # files left out because another run wrote them
    sealed_files: set[Path] = field(default_factory=set)  # files whose digest holds (files.jsonfile.sealed_json)

    @property
    def run_id(self) -> str | None:
        return self.results.run_id or None if self.results is not None else None

    def source(self, key: str) -> str:
        return str(self.sources.get(key, FILES.get(key, key)))

    def sealed(self, key: str) -> bool:
        """Whether the file `key` was read from is unchanged since attrib-audit wrote it (its digest holds)."""
        return self.sources.get(key) in self.sealed_files


# inputs computed from an audit's scores: they must carry the run id of the results.json they are drawn with
DERIVED = ("agreement", "thresholds")


def _drop_other_runs(inputs: ReportInputs) -> None:
    """Leave out (and name) a derived file whose run id is not results.json's, e.g. a stale agreement.json."""
    run_id = inputs.run_id
    if not run_id:
        return
    for key in DERIVED:
        data = getattr(inputs, key)
        if data is not None and data.run_id != run_id:
            other = data.run_id or "none recorded"
            inputs.ignored.append(f"{inputs.sources[key]} (run {other}; results.json is run {run_id})")
            setattr(inputs, key, None)
            del inputs.sources[key]


def _read(key: str, raw: Any, path: Path) -> Any:
    """The records of one saved file (every value checked: one line naming the file and key otherwise)."""
    if key == "results":
        return results_record(raw, path, ReportError)
    if key == "agreement":
        return agreement_record(raw, path, ReportError)
    return from_record(ProbeComparison if key == "probe" else ProvenanceRun, raw, where=str(path), error=ReportError)


def load_inputs(folder: str | Path, **explicit: str | Path | None) -> ReportInputs:
    """The saved files in `folder`; `explicit` (provenance=, probe=, agreement=) points at files elsewhere."""
    folder = Path(folder)
    unknown = set(explicit) - set(FILES) | {"results"} & set(explicit)  # results.json is always the folder's own
    if unknown:
        raise ValueError(f"unknown report inputs: {sorted(unknown)}")
    if not folder.is_dir():
        raise ReportError(f"{folder}: no such results folder")
    inputs = ReportInputs(folder=folder)
    older_agreement: AgreementFile | None = None
    for key, name in FILES.items():
        given = explicit.get(key)
        path = Path(given) if given else folder / name
        if given and not path.is_file():
            raise ReportError(f"{path}: no such file (given for {key})")
        if path.is_file():
            raw = (results_file(folder, "report", ReportError)[1] if key == "results" else
                   thresholds_file(path, "report", ReportError)[1] if key == "thresholds" else
                   read_json(path, ReportError))
            if key == "thresholds":
                try:
                    inputs.thresholds = thresholds_record(raw, path, ReportError)
                except ReportError as exc:
                    if is_sealed(raw):
                        raise  # the file is as attrib-audit wrote it: one line, not a note
                    inputs.thresholds_skipped = str(exc)
                    continue
            else:
                setattr(inputs, key, _read(key, raw, path))
            inputs.sources[key] = path
            if is_sealed(raw):
                inputs.sealed_files.add(path)
            if key == "results" and isinstance(raw.get("agreement"), dict):  # an older results.json may hold it
                older_agreement = agreement_record(raw["agreement"], path, ReportError, key="agreement")
    _drop_other_runs(inputs)
    if inputs.agreement is None and older_agreement is not None:
        inputs.agreement = older_agreement
        inputs.sources["agreement"] = inputs.sources["results"]
    if not inputs.sources:
        raise ReportError(f"{folder}: holds none of {', '.join(FILES.values())}; "
                          f"run `attrib-audit audit --out {folder}` first")
    return inputs
