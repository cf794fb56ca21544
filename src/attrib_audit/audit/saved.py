"""results.json read back: the one checked reader of an audit's results, for every command that reads a folder.

It sits above audit.results, audit.transfer, audit.sensitivity and audit.correlations because results.json holds
records from all of them; they import audit.results, so audit.results cannot import them back.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import attrib_audit.audit.results as results_module
from attrib_audit.audit.results import AuditResults, results_file
from attrib_audit.audit.spec import RunSpec
from attrib_audit.errors import InputError
from attrib_audit.files.records import from_record, to_record


def bind_records() -> None:
    """Bind the names of the records results.json holds that live above audit.results (correlations, transfer,
    sensitivity, the run spec) in its namespace, for `from_record` to resolve AuditResults' hints: those modules
    import the statistics (scipy), the scorers or audit.results itself, so audit.results names them for type
    checking only."""
    from attrib_audit.audit.correlations import CorrelationSection, CutSensitivity
    from attrib_audit.audit.sensitivity import SensitivitySection
    from attrib_audit.audit.transfer import TransferSection

    vars(results_module).update(CorrelationSection=CorrelationSection, CutSensitivity=CutSensitivity,
                                TransferSection=TransferSection, SensitivitySection=SensitivitySection,
                                RunSpec=RunSpec)


def results_record(raw: Any, where: str | Path, error: type[InputError] = InputError) -> AuditResults:
    """Parsed results.json as its records, every value checked against them.

    Args:
        raw: What json.loads gave for the file.
        where: The file, named in an error.
        error: The error type raised.

    Returns:
        The typed results; keys an earlier version did not write read as their defaults.

    Raises:
        InputError: A value of the wrong type or a missing required key: one line naming the file and the key
            (``results.json: key 'slices[0].n': expected an integer, got a string``); `error` chooses the type.
    """
    bind_records()
    return from_record(AuditResults, raw, where=str(where), error=error)


def normalised(results: AuditResults) -> AuditResults:
    """`results` as results.json holds them (NaN → None where a field may be null, numpy values → Python), so what
    `run_audit` returns equals what `read_results` gives back for its file."""
    return results_record(to_record(results), "results", error=InputError)


def read_results(folder: str | Path, command: str = "read_results",
                 error: type[InputError] = InputError) -> AuditResults:
    """FOLDER/results.json as its typed records, every value checked.

    Args:
        folder: An `attrib-audit audit --out` folder.
        command: The reader's name, for the error line.
        error: The error type to raise.

    Returns:
        The same records as `run_audit(...).results`.

    Raises:
        InputError: No such file, one that is not a JSON object, or a value of the wrong type (one line naming the
            file and the key; `error` chooses the type).
    """
    path, raw = results_file(folder, command, error)
    return results_record(raw, path, error)
