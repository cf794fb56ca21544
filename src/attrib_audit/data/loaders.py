"""Load labelled pairs from JSONL, CSV or Parquet into a validated PairTable.

Rows are numbered from 1 in the order the file gives them (JSONL: the line number;
CSV: the data row, header excluded; Parquet: the row), so errors point at the input.
"""
from __future__ import annotations

import hashlib
import json
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from attrib_audit.data.columnar import MAX_JSON_DEPTH, batch_to_table, nested_too_deep, plain_jsonl_table
from attrib_audit.data.errors import DataError
from attrib_audit.data.labels import RatingCut, parse_label, parse_rating
from attrib_audit.data.origin import DataEntry, LoadOptions, PairsFile, SkippedRow
from attrib_audit.data.records import FIELDS, NO_LABEL, PairRecord, PairTable
from attrib_audit.files.hashing import file_sha256
from attrib_audit.text.cells import cell_text

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")  # JSON Lines: one object per line (a .json file too)
# From this size a JSONL file is read by Arrow: below it the per-line reader finishes before pyarrow (and the
# pandas it pulls in) would have been imported, so a small file (the demo's) keeps the cheaper start.
ARROW_MIN_BYTES = 16 << 20


def skip_entry(exc: DataError) -> SkippedRow:
    """What `--on-error skip` records for a dropped row, so no row disappears unreported."""
    return SkippedRow(file=exc.path, row=exc.row, field=exc.field, reason=exc.reason)


def _iter_jsonl(path: Path, skipped: list[SkippedRow] | None = None) -> Iterator[tuple[int, dict]]:
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                try:
                    line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")  # a BOM, as CSV accepts it
                except UnicodeDecodeError as exc:
                    raise DataError(f"not UTF-8 (byte {exc.start + 1})", path=str(path), row=lineno) from None
                if not line.strip():
                    continue
                if nested_too_deep(line):
                    raise DataError(f"invalid JSON (nested more than {MAX_JSON_DEPTH} deep)", path=str(path),
                                    row=lineno)
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"invalid JSON ({exc.msg} at column {exc.colno})", path=str(path),
                                    row=lineno) from None
                except RecursionError:
                    raise DataError("invalid JSON (nested too deeply)", path=str(path), row=lineno) from None
                if not isinstance(obj, dict):
                    raise DataError("each JSONL line must be an object", path=str(path), row=lineno)
            except DataError as exc:
                if skipped is None:
                    raise
                skipped.append(skip_entry(exc))
                continue
            yield lineno, obj


def utf8_error(path: Path) -> DataError:
    """Which line of a file is not UTF-8 (a text reader only knows the offset inside its buffer)."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return DataError(f"line {lineno} is not UTF-8 (byte {exc.start + 1} of the line)", path=str(path))
    return DataError("not UTF-8", path=str(path))


def _iter_table(path: Path, kind: str) -> Iterator[tuple[int, dict]]:
    import pandas as pd

    try:
        if kind == "csv":
            sep = "\t" if path.suffix.lower() == ".tsv" else ","
            frame = pd.read_csv(path, sep=sep, dtype=object, keep_default_na=False, na_values=[])
        else:
            frame = pd.read_parquet(path)
    except UnicodeDecodeError:
        raise utf8_error(path) from None
    except (ValueError, OSError) as exc:  # pandas ParserError/EmptyDataError, arrow errors
        raise DataError(f"cannot read {kind}: {str(exc).strip().splitlines()[0]}", path=str(path)) from None
    for i, rec in enumerate(frame.to_dict(orient="records"), start=1):
        yield i, rec


def iter_rows(path: str | Path, skipped: list[SkippedRow] | None = None) -> Iterator[tuple[int, dict]]:
    """Raw rows of a JSONL/CSV/TSV/Parquet file with their 1-based row numbers.

    With a `skipped` list, unreadable JSONL lines are recorded there instead of raising.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if not p.exists():
        raise DataError("file not found", path=str(p))
    if p.is_dir():
        raise DataError("is a folder, not a data file", path=str(p))
    if suffix in JSONL_SUFFIXES:
        return _iter_jsonl(p, skipped)
    if suffix in (".csv", ".tsv"):
        return _iter_table(p, "csv")
    if suffix in (".parquet", ".pq"):
        return _iter_table(p, "parquet")
    raise DataError(f"unknown file type {suffix!r}: use .jsonl, .csv, .tsv or .parquet", path=str(p))


def pair_text(value: Any, what: str, *, path: str, row: int, field: str) -> str:
    """Claim/evidence text: a string or a scalar; containers and unencodable text are errors, not str() noise."""
    if isinstance(value, (dict, list, tuple, set, bytes, np.ndarray)):
        raise DataError(f"{what} must be text, got {type(value).__name__}", path=path, row=row, field=field)
    text = cell_text(value)
    if text is None or not text.strip():
        raise DataError(f"{what} is {'empty' if text is not None else 'missing'}", path=path, row=row, field=field)
    try:
        if not text.isascii():  # ASCII holds no lone surrogate: encoding it would only cost time
            text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DataError(f"{what} is not valid Unicode (lone surrogate at character {exc.start + 1})",
                        path=path, row=row, field=field) from None
    return text


_ABSENT = object()


def parse_inclusion_prob(value: Any, *, path: str, row: int) -> float | None:
    """The sampling probability `attrib-audit sample` recorded; None when the row carries none (absent key,
    null, empty or NaN). Whether "none" means π = 1 is decided per file by `rows_to_records`: a file where no
    row has one is a whole pool; in a sample a missing one is an error, not π = 1, which would silently weigh
    the pair as the whole pool's only copy of itself."""
    if value is _ABSENT or value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise DataError(f"inclusion_prob {value!r} is not a number", path=path, row=row,
                        field="inclusion_prob") from None
    if not 0.0 < p <= 1.0:
        raise DataError(f"inclusion_prob {p!r} must be in (0, 1]", path=path, row=row, field="inclusion_prob")
    return p


def row_id(raw: Mapping[str, Any], id_col: str, default_dataset: str, row: int) -> str:
    """A row's id: its id column, else `<dataset>:<row number>` (so a row can be found again by id)."""
    return cell_text(raw.get(id_col)) or f"{default_dataset}:{row}"


def rows_to_records(
    rows: Iterable[tuple[int, dict]],
    *,
    path: str,
    columns: Mapping[str, str] | None = None,
    label_map: Mapping[str, int] | None = None,
    dataset: str | None = None,
    construct: str | None = None,
    skipped: list[SkippedRow] | None = None,
    seen_ids: dict[str, tuple[str, int]] | None = None,
    label_from_rating: RatingCut | None = None,
) -> list[PairRecord]:
    """Validate raw rows into records. `columns` maps our field name to the file's column.

    With a `skipped` list a bad row is recorded there (file, row, field, reason) and left out;
    without one it raises. `seen_ids` (id -> (file, row)) is shared across files to catch duplicate ids.
    A graded rating is read only from a mapped `rating` column; with it the label column may be absent (no AUROC)
    or, with `label_from_rating`, the label is derived from the rating. A file without claim and evidence columns
    loads with empty texts (`text_columns_missing` says which), for metrics given as scores.
    """
    col = {f: f for f in FIELDS}
    col.update(columns or {})
    default_dataset = dataset or Path(path).stem
    records: list[PairRecord] = []
    seen_columns: set[str] | None = None
    without_prob: list[int] = []  # rows with no inclusion_prob: fine in a pool, an error in a sample
    rating_col = (columns or {}).get("rating")
    if label_from_rating is not None and rating_col is None:
        raise DataError("--label-from-rating needs the rating column: name it with --rating-col", path=path)
    texts: tuple[str, ...] = ("claim", "evidence")
    read_label = label_from_rating is None
    for row, raw in rows:
        if seen_columns is None:
            seen_columns = set(raw)
            have = ', '.join(sorted(map(str, raw))) or 'none'
            if rating_col is not None and rating_col not in raw:
                raise DataError(f"missing column {rating_col!r} (have: {have}); named by --rating-col",
                                path=path, row=row, field=rating_col)
            read_label = label_from_rating is None and (rating_col is None or col["label"] in raw)
            texts = tuple(f for f in ("claim", "evidence") if col[f] in raw)
            # a score-only file has neither text column; one without the other is a mapping mistake
            needs = (("claim", "evidence") if texts else ()) + (("label",) if read_label else ())
            for need in needs:
                if col[need] not in raw:
                    also = ", or give a graded rating with --rating-col" if need == "label" else ""
                    raise DataError(f"missing column {col[need]!r} (have: {have}); map it with --{need}-col{also}",
                                    path=path, row=row, field=need)
        try:
            text = {f: pair_text(raw.get(col[f]), f, path=path, row=row, field=col[f]) if f in texts else ""
                    for f in ("claim", "evidence")}
            rating = None if rating_col is None else parse_rating(raw.get(rating_col), path=path, row=row,
                                                                  field=rating_col)
            if read_label:
                label = parse_label(raw.get(col["label"]), label_map, path=path, row=row, field=col["label"])
            elif label_from_rating is not None and rating is not None:
                label = int(label_from_rating.apply(np.array([rating]))[0])
            else:
                label = NO_LABEL
            rid = row_id(raw, col["id"], default_dataset, row)
            prob = parse_inclusion_prob(raw.get("inclusion_prob", _ABSENT), path=path, row=row)
            if prob is None:
                without_prob.append(row)
            if seen_ids is not None:
                if rid in seen_ids:
                    first = seen_ids[rid]
                    raise DataError(f"duplicated id {rid!r} (first at {first[0]} row {first[1]})",
                                    path=path, row=row, field=col["id"])
                seen_ids[rid] = (path, row)
        except DataError as exc:
            if skipped is None:
                raise
            skipped.append(skip_entry(exc))
            continue
        records.append(PairRecord(
            id=rid,
            dataset=cell_text(raw.get(col["dataset"])) or default_dataset,
            claim=text["claim"], evidence=text["evidence"], label=label,
            source=cell_text(raw.get(col["source"])),
            question=cell_text(raw.get(col["question"])),
            group=cell_text(raw.get(col["group"])),
            construct=construct or cell_text(raw.get(col["construct"])),
            inclusion_prob=prob,
            system=cell_text(raw.get(col["system"])) or None,  # a blank cell names no system
            rating=rating,
        ))
    if not records:
        raise DataError("no rows", path=path)
    if without_prob and any(r.inclusion_prob is not None for r in records):
        raise DataError("inclusion_prob is missing (absent, null, empty or NaN) while other rows of this sample have "
                        "one: a sampled row needs its probability (drop the column for a whole pool)",
                        path=path, row=without_prob[0], field="inclusion_prob")
    return records


def text_columns_missing(table: PairTable, columns: Mapping[str, str] | None) -> list[str]:
    """The claim and evidence columns of a score-only file (no text scorer can read it); [] for a file of pairs.
    Both readers refuse an empty text, so a table of empty claims came from a file without the columns."""
    if len(table) == 0 or any(table.claims) or any(table.evidences):
        return []
    col = {f: f for f in FIELDS}
    col.update(columns or {})
    return [col["claim"], col["evidence"]]


def check_unique_ids(ids: Sequence[str], paths: list[str]) -> None:
    """Ids, not records: a loaded table's id column is checked without rebuilding a record per row."""
    if len(set(ids)) == len(ids):  # the usual answer, without a Python loop over the rows
        return
    seen: dict[str, int] = {}
    for i, rid in enumerate(ids):
        if rid in seen:
            raise DataError(f"duplicated id {rid!r} (first seen at pair {seen[rid] + 1} of {', '.join(paths)})",
                            field="id", row=i + 1)
        seen[rid] = i


def _plain_jsonl(p: Path, **options: Any) -> tuple[PairTable | None, str | None]:
    """A JSONL file read whole by Arrow and validated column-wise (None unless plain, see `plain_jsonl_table`)
    and its sha256 (None unless read), hashed from the same bytes on a second thread while the first parses them
    (hashlib lets go of the GIL)."""
    if p.suffix.lower() not in JSONL_SUFFIXES or not p.is_file():
        return None, None
    try:
        if p.stat().st_size < ARROW_MIN_BYTES:
            return None, None
        data = p.read_bytes()
    except OSError:
        return None, None  # the per-line reader says why
    with ThreadPoolExecutor(max_workers=1) as pool:
        digest = pool.submit(hashlib.sha256, data)
        rows = plain_jsonl_table(data)
    del data  # the Arrow table holds the text now: free the file before its Python strings are made
    table = None if rows is None else batch_to_table(rows, first_row=1, path=str(p), **options)
    return table, digest.result().hexdigest()


def load_pairs(
    paths: str | Path | Iterable[str | Path],
    *,
    columns: Mapping[str, str] | None = None,
    label_map: Mapping[str, int] | None = None,
    dataset: str | None = None,
    construct: str | None = None,
    on_error: str = "fail",
    seen_ids: dict[str, tuple[str, int]] | None = None,
    label_from_rating: RatingCut | None = None,
) -> PairTable:
    """Load and validate files in our schema (id, dataset, claim, evidence, label, group, ...).

    Ids must be unique across all of them (and `seen_ids`, shared by a caller that loads files one by
    one). The origin entries record how each file was loaded, so `audit --check` can reload it.

    Args:
        paths: One file or several (JSONL, CSV, Parquet).
        columns: Our field → the file's column name, for files with other names.
        label_map: The file's label values → 0/1 (1 = supported).
        dataset: Dataset name for rows without one.
        construct: What the labels measure (e.g. "attribution"); constructs are never pooled.
        on_error: "fail" (the first bad row is an InputError) or "skip" (bad rows left out and listed
            in each file's origin entry as `skipped`).
        seen_ids: Ids already loaded → (file, row), updated in place.
        label_from_rating: derive the label from the `rating` column (mapped in `columns`) by this cut.

    Returns:
        The table of pairs.

    Raises:
        ValueError: An unknown `on_error`.
        InputError: A file cannot be read, or a row is bad (one line naming file, row and field).

    Examples:
        >>> from attrib_audit.data import demo_paths
        >>> table = load_pairs([demo_paths()[0]], construct="attribution")
        >>> len(table), int(table.labels.sum())
        (200, 100)
    """
    if on_error not in ("fail", "skip"):
        raise ValueError(f"on_error must be 'fail' or 'skip', not {on_error!r}")
    path_list = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    tables: list[PairTable] = []
    origin: list[DataEntry] = []
    seen_ids = {} if seen_ids is None else seen_ids
    load = LoadOptions(columns=dict(columns or {}), label_map=dict(label_map) if label_map else None,
                       dataset=dataset, construct=construct, on_error=on_error,
                       label_from_rating=str(label_from_rating) if label_from_rating else None)
    for p in path_list:
        skipped: list[SkippedRow] | None = [] if on_error == "skip" else None
        table, digest = _plain_jsonl(p, columns=columns, label_map=label_map, dataset=dataset, construct=construct,
                                     seen_ids=seen_ids, label_from_rating=label_from_rating)
        if table is None:  # not a plain JSONL file: row by row, each error naming its file, row and field
            table = PairTable.from_records(rows_to_records(
                iter_rows(p, skipped), path=str(p), columns=columns, label_map=label_map, dataset=dataset,
                construct=construct, skipped=skipped, seen_ids=seen_ids, label_from_rating=label_from_rating))
        missing = text_columns_missing(table, columns)
        origin.append(PairsFile(path=str(p), sha256=digest or file_sha256(p), rows=len(table), load=load,
                                skipped=tuple(skipped or ()), text_columns_missing=tuple(missing)))
        tables.append(table)
    table = tables[0] if len(tables) == 1 else PairTable.concat(tables)
    check_unique_ids(table.ids, [str(p) for p in path_list])
    table.origin = origin
    return table
