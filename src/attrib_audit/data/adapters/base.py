"""What every adapter shares: the Adapter record, skip markers, explicit label lookup, group ids.

An adapter turns one native row into zero or more rows of our schema (`claim`, `evidence`,
`label`, `id`, `source`, `question`, `group`) or into a `Skip` with a reason; the loader counts
the skips and reports them, and validates the rows with the same code as our own files.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.text.cells import cell_text as text  # noqa: F401 - how every adapter reads a native text field

_INTEGRAL = re.compile(r"^-?\d+\.0*$")


@dataclass(frozen=True)
class Skip:
    """A native row (or unit of one) that yields no pair, with the reason it is counted under."""

    reason: str


@dataclass(frozen=True)
class AdapterOptions:
    """Label choices the benchmarks leave to the user (both default to the paper's mapping)."""

    nei: str = "drop"  # vitaminc: NOT ENOUGH INFO -> "drop" (counted) or "0"
    wice_partial: int = 0  # wice: partially_supported -> 0 (default) or 1


@dataclass(frozen=True)
class Context:
    """Where the rows come from: names errors and default ids."""

    path: str  # a file path, or hf:DATASET[SPLIT]
    stem: str  # file stem (or dataset id) used for ids and per-file constructs
    options: AdapterOptions = field(default_factory=AdapterOptions)


Converted = Iterable["dict | Skip"]


@dataclass(frozen=True, kw_only=True)
class Adapter:
    """A named public-benchmark format: how to detect it, read it and map it to pairs."""

    name: str
    construct: str  # the construct of its pairs; "per file" adapters resolve it with `construct_for`
    dataset: str  # default dataset name of its pairs
    fields: tuple[str, ...]  # native fields whose presence identifies the format
    labels: tuple[str, ...]  # the label mapping, one line per native value (shown by `datasets`)
    skips: tuple[str, ...]  # what is skipped and counted
    convert: Callable[[int, dict, Context], Converted]
    reader: Callable[[Path], Iterator[tuple[int, dict]]] | None = None  # None: the generic loader
    construct_for: Callable[[str], str | None] | None = None  # per-file construct (TRUE)
    dataset_for: Callable[[str], str] | None = None  # per-file dataset name (TRUE)
    native: str = ""  # one line naming the native release
    required: tuple[str, ...] | None = None  # columns every file must have; None: `fields`
    clusters: str = ""  # the native field(s) that name a cluster, for the warning when a file has none

    @property
    def required_fields(self) -> tuple[str, ...]:
        return self.fields if self.required is None else self.required

    @property
    def cluster_hint(self) -> str:
        return f"expected {self.clusters}" if self.clusters else "the format has none"

    def matches(self, columns: Iterable[str]) -> bool:
        have = set(columns)
        return all(f in have for f in self.fields)

    def construct_of(self, stem: str) -> str | None:
        return self.construct_for(stem) if self.construct_for else self.construct

    def dataset_of(self, stem: str) -> str:
        return self.dataset_for(stem) if self.dataset_for else self.dataset


def blank(value: str | None) -> bool:
    return value is None or not value.strip()


def as_int(value: Any, *, ctx: Context, row: int, field_name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise DataError(f"expected an integer, got {value!r}", path=ctx.path, row=row, field=field_name) from None


def as_dict(value: Any, *, ctx: Context, row: int, field_name: str) -> dict:
    if not isinstance(value, dict):
        raise DataError(f"expected an object, got {type(value).__name__}", path=ctx.path, row=row, field=field_name)
    return value


def as_list(value: Any, *, ctx: Context, row: int, field_name: str) -> list:
    """A native list field: a list, a numpy array (Parquet), or a JSON list in a CSV cell."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped:
            return []
        if stripped.startswith("["):
            try:
                parsed = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise DataError(f"not a JSON list ({exc.msg})", path=ctx.path, row=row, field=field_name) from None
            except RecursionError:
                raise DataError("not a JSON list (nested too deeply)", path=ctx.path, row=row,
                                field=field_name) from None
            if isinstance(parsed, list):
                return parsed
        return [value]
    raise DataError(f"expected a list, got {type(value).__name__}", path=ctx.path, row=row, field=field_name)


def label_key(value: Any) -> str | None:
    """Normalise a raw label for lookup: strings lower-cased, integral numbers as '0'/'1'; None if missing."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return None
        return str(int(value)) if float(value).is_integer() else str(value)
    key = str(value).strip().lower()
    if _INTEGRAL.match(key):  # "1.0" from a CSV whose label column held a NaN
        key = str(int(float(key)))
    return key or None


def map_label(value: Any, mapping: Mapping[str, int | None], *, ctx: Context, row: int,
              field_name: str) -> int | Skip:
    """Explicit lookup: a missing label is a counted skip, a dropped class a counted skip, anything else an error."""
    key = label_key(value)
    if key is None:
        return Skip(f"label missing ({field_name})")
    if key not in mapping:
        known = ", ".join(repr(k) for k in mapping)
        raise DataError(f"label {value!r} is not one of {known}", path=ctx.path, row=row, field=field_name)
    mapped = mapping[key]
    return Skip(f"label {key!r} dropped") if mapped is None else mapped


BINARY = {"0": 0, "1": 1, "true": 1, "false": 0}


def digest(*parts: str) -> str:
    """A short stable id for a cluster (a question, a document, a dialogue context)."""
    return hashlib.sha1("\n".join(parts).encode("utf-8")).hexdigest()[:12]


def pair(*, claim: str | None, evidence: str | None, label: int, **extra: Any) -> dict | Skip:
    """A row of our schema, or a counted skip when the native row has an empty claim or evidence."""
    if blank(claim):
        return Skip("empty claim")
    if blank(evidence):
        return Skip("empty evidence")
    return {"claim": claim, "evidence": evidence, "label": label, **extra}
