"""Where each input's pairs came from: one frozen record per kind of source, the `data` entries of results.json.

A loader makes one entry per input as it reads it, and the entry travels with the pairs (`PairTable.origin`)
into results.json's `data`, thresholds.json's `source`, the score command's metadata and the rerun of
`audit --check`. The kinds differ in what they know, and so in their keys (files.records writes them in field
order; the reader tells them apart by the keys an entry has):

- `PairsFile`: a file in our pair schema, with how it was read (`LoadOptions`) so a rerun reads it alike;
- `BenchmarkFile`: a file in a benchmark's layout, read by its adapter (`Adapted`: native rows, skips by reason);
- `HFPairs` / `HFBenchmark`: a Hugging Face split (`HFSplitSource`: id, config, revision, fingerprint) read as
  our schema or by an adapter.

Keys an earlier version did not write read as their defaults.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any, Union

SKIP: dict[str, Any] = {"skip_default": True}


@dataclass(frozen=True, kw_only=True)
class SkippedRow:
    """A row `--on-error skip` dropped, and why (loaders.skip_entry); an adapter's rows skipped by rule are
    counted per reason instead (`count`, `row` null)."""

    file: str | None  # the file (or hf:ID[SPLIT]) the row is in
    row: int | None  # its 1-based row (null: the adapter's count of rows skipped for one reason)
    field: str | None  # the field at fault, when one is
    reason: str
    count: int | None = dataclasses.field(default=None, metadata=SKIP)  # `field` above is a key of the row


@dataclass(frozen=True, kw_only=True)
class LoadOptions:
    """How a file in our pair schema was read: its column and label maps and the defaults for missing fields."""

    columns: dict[str, str] = field(default_factory=dict)  # our field -> the file's column
    label_map: dict[str, int] | None = None  # the file's label values -> 0/1
    dataset: str | None = None
    construct: str | None = None
    on_error: str = "fail"
    label_from_rating: str | None = field(default=None, metadata=SKIP)  # e.g. ">=5": the label cut from `rating`


@dataclass(frozen=True, kw_only=True)
class FileRef:
    """A local file and its content hash."""

    path: str
    sha256: str  # of the file's bytes as read


@dataclass(frozen=True, kw_only=True)
class PairsFile(FileRef):
    """A file in our pair schema, as loaded."""

    rows: int  # pairs loaded
    load: LoadOptions | None = field(default=None, metadata=SKIP)  # None: an earlier version did not record it
    skipped: tuple[SkippedRow, ...] = ()
    text_columns_missing: tuple[str, ...] = field(default=(), metadata=SKIP)  # a scores-only file
    format: str | None = field(default=None, metadata=SKIP)  # "pairs" once load_data resolved it


@dataclass(frozen=True, kw_only=True)
class Adapted:
    """What a benchmark's adapter made of a source's native rows: the pairs kept, the rows skipped (by reason)."""

    format: str  # the benchmark format (data.adapters)
    construct: str  # what its labels measure
    dataset: str
    native_rows: int  # rows in the benchmark's layout
    rows: int  # pairs made of them
    skipped: tuple[SkippedRow, ...]  # bad rows one each, then the adapter's skips one per reason with its count
    skip_counts: dict[str, int] = field(default_factory=dict)  # the adapter's skips by reason
    n_skipped: int  # bad rows and the adapter's skips together
    n_unclustered: int | None = None  # pairs without a cluster column (None: not recorded by an earlier version)


@dataclass(frozen=True, kw_only=True)
class BenchmarkFile(Adapted, FileRef):
    """A file in a benchmark's layout, read by its adapter: the file, then what the adapter made of it."""


@dataclass(frozen=True, kw_only=True)
class HFSplitSource:
    """A Hugging Face split as loaded: what pins it (revision, fingerprint) and how many rows it had."""

    path: str  # hf:ID[SPLIT], the name in messages
    hf: str  # the dataset id
    config: str | None
    split: str | None
    revision: str | None  # as asked (--hf-revision)
    pinned: bool  # the revision is a commit SHA
    fingerprint: str | None  # the `datasets` library's fingerprint of the split as loaded
    hf_rows: int  # rows in the split


@dataclass(frozen=True, kw_only=True)
class HFPairs(HFSplitSource):
    """A Hugging Face split in our pair schema."""

    format: str  # "pairs"
    rows: int  # pairs loaded
    skipped: tuple[SkippedRow, ...] = ()


@dataclass(frozen=True, kw_only=True)
class HFBenchmark(Adapted, HFSplitSource):
    """A Hugging Face split in a benchmark's layout, read by its adapter."""


# The reader takes the first kind whose required keys an entry has: the more specific kinds come first.
DataEntry = Union[BenchmarkFile, HFBenchmark, HFPairs, PairsFile]


def parts(record: Any) -> dict[str, Any]:
    """A record's fields as keyword arguments (shallow), to build a record of a kind that extends it."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


__all__ = ["Adapted", "BenchmarkFile", "DataEntry", "FileRef", "HFBenchmark", "HFPairs", "HFSplitSource",
           "LoadOptions", "PairsFile", "SkippedRow", "parts"]
