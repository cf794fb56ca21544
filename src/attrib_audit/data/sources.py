"""Where an audit's pairs come from (`DataSpec`: files, a Hugging Face dataset, how rows become pairs) and
`load_data`, which loads them: every path (flags, a spec file, `--check`, Python) loads alike.

A `DataSpec` is part of a run spec and stored in results.json, so it is frozen, plain and checked on
construction: a bad value is a SpecError naming the field.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from attrib_audit.data.adapters import FORMATS, PAIRS, AdapterOptions, detect_format, get_adapter
from attrib_audit.data.adapters.load import adapt_rows, load_native_file, resolve_format
from attrib_audit.data.constructs import unknown_construct_note
from attrib_audit.data.errors import DataError
from attrib_audit.data.hf import load_hf
from attrib_audit.data.labels import RatingCut
from attrib_audit.data.loaders import check_unique_ids, load_pairs, rows_to_records
from attrib_audit.data.origin import DataEntry, FileRef, HFBenchmark, HFPairs, PairsFile, SkippedRow, parts
from attrib_audit.data.records import FIELDS, PairTable
from attrib_audit.errors import SpecError


def need(ok: bool, where: str, what: str, value: Any) -> None:
    if not ok:
        raise SpecError(f"{where}: {what}, got {value!r}")


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


@dataclass(frozen=True, kw_only=True)
class FileSource:
    """One input file; `format` and `sha256` are filled in when it is loaded, so a rerun reads it the same way."""

    path: str
    format: str = "auto"
    sha256: str | None = None
    construct: str | None = None  # overrides DataSpec.construct for this file (the demo mixes two)
    dataset: str | None = None

    def __post_init__(self) -> None:
        need(isinstance(self.path, str) and bool(self.path), "data.files.path", "expected a file path", self.path)
        for name in ("format", "sha256", "construct", "dataset"):
            need(opt_str(getattr(self, name)), f"data.files.{name}", "expected a string", getattr(self, name))


@dataclass(frozen=True)
class HFSource:
    """A Hugging Face dataset (`--hf ID --hf-split S --hf-revision SHA --hf-config NAME`)."""

    id: str
    split: str | None = None
    revision: str | None = None
    config: str | None = None

    def __post_init__(self) -> None:
        for name in ("split", "revision", "config"):
            need(opt_str(getattr(self, name)), f"data.hf.{name}", "expected a string", getattr(self, name))


@dataclass(frozen=True, kw_only=True)
class DataSpec:
    """Where pairs come from and how rows become pairs (our schema's column/label maps, adapter options)."""

    files: tuple[FileSource, ...] = ()
    hf: HFSource | None = None
    format: str = "auto"
    columns: Mapping[str, str] = field(default_factory=dict)
    label_map: Mapping[str, int] | None = None
    dataset: str | None = None
    construct: str | None = None
    on_error: str = "fail"
    nei: str = "drop"
    wice_partial: int = 0
    label_from_rating: str | None = None  # e.g. ">=5": the binary label derived from the `rating` column

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", tuple(self.files))
        need(opt_str(self.label_from_rating), "data.label_from_rating", "expected a string", self.label_from_rating)
        if self.label_from_rating is not None:
            try:
                RatingCut.parse(self.label_from_rating)
            except ValueError as exc:
                raise SpecError(f"data.label_from_rating: {exc}") from None
            need("rating" in (self.columns or {}), "data.label_from_rating",
                 "needs the rating column (--rating-col)", self.label_from_rating)
        need(isinstance(self.columns or {}, Mapping), "data.columns", "expected an object", self.columns)
        need(self.label_map is None or isinstance(self.label_map, Mapping), "data.label_map", "expected an object",
             self.label_map)
        object.__setattr__(self, "columns", dict(self.columns or {}))
        if self.label_map is not None:
            object.__setattr__(self, "label_map", dict(self.label_map))
        for name in ("format", "dataset", "construct", "on_error", "nei"):  # before `in`: a list is unhashable
            need(opt_str(getattr(self, name)), f"data.{name}", "expected a string", getattr(self, name))
        need(self.format in FORMATS, "data.format", f"expected one of {', '.join(FORMATS)}", self.format)
        for f in self.files:
            need(f.format in FORMATS, "data.files.format", f"expected one of {', '.join(FORMATS)}", f.format)
        bad = sorted(set(self.columns) - set(FIELDS))
        need(not bad, "data.columns", f"keys must be among {', '.join(FIELDS)}", bad)
        need(all(isinstance(v, str) for v in self.columns.values()), "data.columns", "expected column names",
              self.columns)
        need(self.label_map is None or all(v in (0, 1) and not isinstance(v, bool) for v in self.label_map.values()),
              "data.label_map", "values must be 0 or 1", self.label_map)
        need(self.on_error in ("fail", "skip"), "data.on_error", "expected fail or skip", self.on_error)
        need(self.nei in ("drop", "0"), "data.nei", "expected drop or 0", self.nei)
        need(self.wice_partial in (0, 1), "data.wice_partial", "expected 0 or 1", self.wice_partial)

    def resolved(self, origin: list[DataEntry]) -> "DataSpec":
        """The same spec with each file's detected format and sha256 from its loaded `data` entry."""
        files = tuple(replace(f, format=o.format or f.format, sha256=o.sha256 if isinstance(o, FileRef) else f.sha256)
                      for f, o in zip(self.files, origin))
        return replace(self, files=files)


def load_data(spec: DataSpec, log: Callable[[str], None] | None = None) -> PairTable:
    """The pairs a DataSpec names: files in our schema or a benchmark's layout, and --hf; ids unique across all.

    Each file's `data` entry records its resolved format, so a rerun from the spec reads it the same way.

    Args:
        spec: Files, their format and column mapping, or a Hugging Face dataset.
        log: Where progress lines go (None: nowhere).

    Returns:
        The table of pairs.

    Raises:
        InputError: A file cannot be read, or a row is bad (one line naming file, row and field).
        UsageError: Flags that do not go together (e.g. a column mapping with a benchmark format).
    """
    say = log or (lambda _m: None)
    fmt = spec.format
    schema_flags = bool(spec.columns) or spec.label_map is not None
    cut = RatingCut.parse(spec.label_from_rating) if spec.label_from_rating is not None else None
    if schema_flags and fmt not in ("auto", PAIRS):
        raise DataError(f"--label-map and --*-col describe our pair schema; the {fmt} format maps its own fields")
    if not spec.files and spec.hf is None:
        raise DataError("no input: give one or more files, or --hf DATASET_ID")
    for named in [c for c in {spec.construct, *(f.construct for f in spec.files)} - {None} if c is not None]:
        note = unknown_construct_note(named)
        if note:
            say(f"note: {note}")
    options = AdapterOptions(nei=spec.nei, wice_partial=spec.wice_partial)
    tables = []
    seen_ids: dict[str, tuple[str, int]] = {}
    for f in spec.files:
        chosen = f.format if f.format != "auto" else fmt
        found = PAIRS if schema_flags and chosen == "auto" else resolve_format(chosen, f.path, say)
        dataset, construct = f.dataset or spec.dataset, f.construct or spec.construct
        if found == PAIRS:
            table = load_pairs(f.path, columns=spec.columns, label_map=spec.label_map, dataset=dataset,
                               construct=construct, on_error=spec.on_error, seen_ids=seen_ids, label_from_rating=cut)
            table.origin = [replace(o, format=PAIRS) if isinstance(o, PairsFile) else o for o in table.origin]
            tables.append(table)
            continue
        records, origin = load_native_file(f.path, found, options=options, dataset=dataset, construct=construct,
                                           log=say, on_error=spec.on_error)
        tables.append(PairTable.from_records(records, origin=[origin]))
    if spec.hf is not None:
        tables.append(_load_hf_table(spec, spec.hf, options, say))
    table = tables[0] if len(tables) == 1 else PairTable.concat(tables)
    check_unique_ids(table.ids, [f.path for f in spec.files] + ([spec.hf.id] if spec.hf else []))
    return table


def _load_hf_table(spec: DataSpec, hf: HFSource, options: AdapterOptions, log: Callable[[str], None]) -> PairTable:
    src = load_hf(hf.id, split=hf.split, revision=hf.revision, config=hf.config, log=log)
    fmt = spec.format
    if fmt == "auto":
        fmt = PAIRS if spec.columns or spec.label_map is not None else detect_format(src.columns, path=src.label)
        log(f"format: {src.label}: " + ("our pair schema" if fmt == PAIRS else f"detected {fmt}"))
    stem = hf.id.rstrip("/").split("/")[-1] + (f"-{hf.split}" if hf.split else "")
    if fmt == PAIRS:
        skipped: list[SkippedRow] | None = [] if spec.on_error == "skip" else None
        cut = RatingCut.parse(spec.label_from_rating) if spec.label_from_rating is not None else None
        records = rows_to_records(src.rows(), path=src.label, columns=spec.columns, label_map=spec.label_map,
                                  dataset=spec.dataset or stem, construct=spec.construct, skipped=skipped,
                                  label_from_rating=cut)
        origin: DataEntry = HFPairs(**parts(src.origin), format=PAIRS, rows=len(records),
                                    skipped=tuple(skipped or ()))
    else:
        records, entry = adapt_rows(get_adapter(fmt), src.rows(), path=src.label, stem=stem, options=options,
                                    dataset=spec.dataset, construct=spec.construct, log=log, on_error=spec.on_error)
        origin = HFBenchmark(**parts(src.origin), **parts(entry))
    return PairTable.from_records(records, origin=[origin])


__all__ = ["DataSpec", "FileSource", "HFSource", "load_data"]
