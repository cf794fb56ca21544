"""Run an adapter over native rows: convert, count skips, validate with the schema loader, record provenance."""
from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable

from attrib_audit.data.adapters import PAIRS, detect_format, get_adapter
from attrib_audit.data.adapters.base import Adapter, AdapterOptions, Context, Skip
from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import file_sha256, iter_rows, rows_to_records, skip_entry
from attrib_audit.data.origin import Adapted, BenchmarkFile, SkippedRow, parts
from attrib_audit.data.records import PairRecord

Log = Callable[[str], None]


def skip_summary(skipped: Counter) -> str:
    return "; ".join(f"{reason}: {n}" for reason, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])))


def adapt_rows(adapter: Adapter, rows: Iterable[tuple[int, dict]], *, path: str, stem: str,
               options: AdapterOptions | None = None, dataset: str | None = None, construct: str | None = None,
               log: Log | None = None, on_error: str = "fail") -> tuple[list[PairRecord], Adapted]:
    """Pairs of one native source and what the adapter made of it (format, construct, rows, skips).

    `skipped` lists what was left out in the layout of our schema's entries (file, row, field, reason):
    a row that is bad under `on_error="skip"` one entry each, an adapter's by-design skips one entry per
    reason with its `count`. A file whose first row lacks a required column is an error naming it.
    """
    ctx = Context(path=path, stem=stem, options=options or AdapterOptions())
    construct = construct or adapter.construct_of(stem)
    if not construct:
        raise DataError(f"the {adapter.name} format cannot tell the construct of {stem!r} from its name: "
                        "pass --construct", path=path)
    name = dataset or adapter.dataset_of(stem)
    bad: list[SkippedRow] | None = [] if on_error == "skip" else None
    skipped: Counter = Counter()
    native, out = 0, []
    for row, raw in rows:
        native += 1
        if native == 1:
            missing = [f for f in adapter.required_fields if f not in raw]
            if missing:
                raise DataError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} "
                                f"of the {adapter.name} format (have: {', '.join(sorted(map(str, raw))) or 'none'})",
                                path=path, row=row, field=missing[0])
        try:
            items = list(adapter.convert(row, raw, ctx))
        except DataError as exc:
            if bad is None:
                raise
            bad.append(skip_entry(exc))
            continue
        for item in items:
            if isinstance(item, Skip):
                skipped[item.reason] += 1
                continue
            item = {**item, "dataset": name, "construct": construct}
            item["id"] = item.get("id") or f"{stem}:{row}"
            out.append((row, item))
    if not out:
        raise DataError(f"no pairs left: all {native} {adapter.name} rows were skipped "
                        f"({skip_summary(skipped + Counter(e.reason for e in bad or []))})"
                        if native else "no rows", path=path)
    records = rows_to_records(out, path=path, skipped=bad)
    unclustered = sum(1 for _, item in out if not item.get("group"))
    if unclustered == len(out) and log is not None:
        log(f"warning: {adapter.name}: {path}: no cluster column ({adapter.cluster_hint}): every pair is its own "
            "cluster, so CIs are too narrow if several rows share a claim or case")
    n_skip = sum(skipped.values()) + len(bad or [])
    if log is not None:
        summary = skip_summary(skipped + Counter(e.reason for e in bad or []))
        log(f"{adapter.name}: {path}: {native} rows -> {len(records)} pairs ({construct})"
            + (f"; skipped {n_skip}: {summary}" if n_skip else "; nothing skipped"))
    entries = (bad or []) + [SkippedRow(file=path, row=None, field=None, reason=reason, count=n)
                             for reason, n in sorted(skipped.items())]
    return records, Adapted(format=adapter.name, construct=construct, dataset=name, native_rows=native,
                            rows=len(records), skipped=tuple(entries), skip_counts=dict(sorted(skipped.items())),
                            n_skipped=n_skip, n_unclustered=unclustered)


def peek_columns(path: str | Path) -> list[str]:
    """The field names of a file from its first row or header, without reading the whole file."""
    p = Path(path)
    if not p.exists():
        raise DataError("file not found", path=str(p))
    if p.is_dir():
        raise DataError("is a folder, not a data file", path=str(p))
    try:
        return _peek(p, p.suffix.lower())
    except OSError as exc:
        raise DataError(f"cannot read ({exc.strerror or exc})", path=str(p)) from None


def _first_line(p: Path, skip_blank: bool) -> str:
    """The first (non-blank) line, decoded strictly so a bad byte names its line."""
    with open(p, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"not UTF-8 (byte {exc.start + 1})", path=str(p), row=lineno) from None
            if line.strip() or not skip_blank:
                return line
    return ""


def _peek(p: Path, suffix: str) -> list[str]:
    if suffix in (".csv", ".tsv"):
        first = _first_line(p, skip_blank=False).lstrip("\ufeff")
        try:
            return next(csv.reader([first], delimiter="\t" if suffix == ".tsv" else ","), [])
        except csv.Error as exc:  # e.g. a bare carriage return inside the header
            raise DataError(f"the header is not valid CSV ({exc})", path=str(p), row=1) from None
    if suffix in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(p).names)
        except pa.ArrowException as exc:
            raise DataError(f"not a readable Parquet file ({str(exc).strip().splitlines()[0][:200]})",
                            path=str(p)) from None
    if suffix in (".jsonl", ".json", ".ndjson"):
        line = _first_line(p, skip_blank=True)
        try:
            obj = json.loads(line) if line else None
        except (json.JSONDecodeError, RecursionError):
            return []  # the schema loader reports the bad line with its number
        return list(obj) if isinstance(obj, dict) else []
    return []


def resolve_format(fmt: str, path: str | Path, log: Log | None = None) -> str:
    """`auto` detects from the file's fields and says what it found; anything else is taken as given."""
    if fmt != "auto":
        if fmt != PAIRS:
            get_adapter(fmt)
        return fmt
    found = detect_format(peek_columns(path), path=str(path))
    if log is not None:
        if found == PAIRS:
            log(f"format: {path}: our pair schema (no benchmark format detected)")
        else:
            log(f"format: {path}: detected {found} (fields {', '.join(get_adapter(found).fields)}); "
                "pass --format to override")
    return found


def load_native_file(path: str | Path, fmt: str, *, options: AdapterOptions | None = None,
                     dataset: str | None = None, construct: str | None = None,
                     log: Log | None = None, on_error: str = "fail") -> tuple[list[PairRecord], BenchmarkFile]:
    """One file in a named benchmark format -> validated pairs and its `data` entry for results.json."""
    p = Path(path)
    adapter = get_adapter(fmt)
    bad: list[SkippedRow] | None = [] if on_error == "skip" and not adapter.reader else None
    rows = adapter.reader(p) if adapter.reader else iter_rows(p, bad)
    records, adapted = adapt_rows(adapter, rows, path=str(p), stem=p.stem, options=options, dataset=dataset,
                                  construct=construct, log=log, on_error=on_error)
    return records, BenchmarkFile(path=str(p), sha256=file_sha256(p), **{
        **parts(adapted), "skipped": (*(bad or ()), *adapted.skipped),  # unreadable lines first, as in our schema
        "n_skipped": adapted.n_skipped + len(bad or [])})
