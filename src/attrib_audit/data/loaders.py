"""Load labelled pairs from JSONL, CSV or Parquet into a validated PairTable.

Rows are numbered from 1 in the order the file gives them (JSONL: the line number;
CSV: the data row, header excluded; Parquet: the row), so errors point at the input.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.data.records import FIELDS, PairRecord, PairTable

# Values accepted as binary labels without an explicit mapping. Strings like
# "attributable" are deliberately absent: they need --label-map, so a mapping is never guessed.
_IMPLICIT_LABELS: dict[Any, int] = {0: 0, 1: 1, "0": 0, "1": 1, True: 1, False: 0, "true": 1, "false": 0}


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def parse_label(value: Any, label_map: Mapping[str, int] | None, *, path: str, row: int, field: str) -> int:
    """Map a raw label to 0/1: explicit mapping first, then only unambiguous binary values."""
    if label_map is not None:
        key = str(value).strip().lower() if value is not None else None
        lowered = {str(k).strip().lower(): int(v) for k, v in label_map.items()}
        if key in lowered:
            return lowered[key]
    if isinstance(value, float):
        if math.isnan(value):
            raise DataError("label is missing (NaN)", path=path, row=row, field=field)
        if value in (0.0, 1.0):
            return int(value)
    if isinstance(value, (np.integer, np.bool_)):
        value = value.item()
    if isinstance(value, str):
        value = value.strip().lower()
    if value is None or value == "":
        raise DataError("label is missing", path=path, row=row, field=field)
    try:
        return _IMPLICIT_LABELS[value]
    except (KeyError, TypeError):
        pass
    hint = " (pass --label-map, e.g. 'attributable=1,not attributable=0')" if isinstance(value, str) else ""
    raise DataError(f"label {value!r} is not 0/1 or true/false{hint}", path=path, row=row, field=field)


def _iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON ({exc.msg} at column {exc.colno})", path=str(path), row=lineno) from None
            if not isinstance(obj, dict):
                raise DataError("each JSONL line must be an object", path=str(path), row=lineno)
            yield lineno, obj


def _iter_table(path: Path, kind: str) -> Iterator[tuple[int, dict]]:
    import pandas as pd

    if kind == "csv":
        sep = "\t" if path.suffix.lower() == ".tsv" else ","
        frame = pd.read_csv(path, sep=sep, dtype=object, keep_default_na=False, na_values=[])
    else:
        frame = pd.read_parquet(path)
    for i, rec in enumerate(frame.to_dict(orient="records"), start=1):
        yield i, rec


def iter_rows(path: str | Path) -> Iterator[tuple[int, dict]]:
    """Raw rows of a JSONL/CSV/TSV/Parquet file with their 1-based row numbers."""
    p = Path(path)
    suffix = p.suffix.lower()
    if not p.exists():
        raise DataError("file not found", path=str(p))
    if suffix in (".jsonl", ".json", ".ndjson"):
        return _iter_jsonl(p)
    if suffix in (".csv", ".tsv"):
        return _iter_table(p, "csv")
    if suffix in (".parquet", ".pq"):
        return _iter_table(p, "parquet")
    raise DataError(f"unknown file type {suffix!r}: use .jsonl, .csv, .tsv or .parquet", path=str(p))


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value if isinstance(value, str) else str(value)


def rows_to_records(
    rows: Iterable[tuple[int, dict]],
    *,
    path: str,
    columns: Mapping[str, str] | None = None,
    label_map: Mapping[str, int] | None = None,
    dataset: str | None = None,
    construct: str | None = None,
) -> list[PairRecord]:
    """Validate raw rows into records. `columns` maps our field name to the file's column."""
    col = {f: f for f in FIELDS}
    col.update(columns or {})
    default_dataset = dataset or Path(path).stem
    records: list[PairRecord] = []
    seen_columns: set[str] | None = None
    for row, raw in rows:
        if seen_columns is None:
            seen_columns = set(raw)
            for need in ("claim", "evidence", "label"):
                if col[need] not in raw:
                    raise DataError(
                        f"missing column {col[need]!r} (have: {', '.join(sorted(map(str, raw))) or 'none'}); "
                        f"map it with --{need}-col", path=path, row=row, field=need)
        claim, evidence = _text(raw.get(col["claim"])), _text(raw.get(col["evidence"]))
        for name, value in (("claim", claim), ("evidence", evidence)):
            if value is None or not value.strip():
                raise DataError(f"{name} is empty", path=path, row=row, field=col[name])
        label = parse_label(raw.get(col["label"]), label_map, path=path, row=row, field=col["label"])
        rid = _text(raw.get(col["id"])) or f"{default_dataset}:{row}"
        records.append(PairRecord(
            id=rid,
            dataset=_text(raw.get(col["dataset"])) or default_dataset,
            claim=claim, evidence=evidence, label=label,  # type: ignore[arg-type]
            source=_text(raw.get(col["source"])),
            question=_text(raw.get(col["question"])),
            group=_text(raw.get(col["group"])),
            construct=construct or _text(raw.get(col["construct"])),
        ))
    if not records:
        raise DataError("no rows", path=path)
    return records


def check_unique_ids(records: list[PairRecord], paths: list[str]) -> None:
    seen: dict[str, int] = {}
    for i, r in enumerate(records):
        if r.id in seen:
            raise DataError(f"duplicated id {r.id!r} (first seen at pair {seen[r.id] + 1} of {', '.join(paths)})",
                            field="id", row=i + 1)
        seen[r.id] = i


def load_pairs(
    paths: str | Path | Iterable[str | Path],
    *,
    columns: Mapping[str, str] | None = None,
    label_map: Mapping[str, int] | None = None,
    dataset: str | None = None,
    construct: str | None = None,
) -> PairTable:
    """Load and validate one or more files; ids must be unique across all of them."""
    path_list = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    records: list[PairRecord] = []
    origin = []
    for p in path_list:
        recs = rows_to_records(iter_rows(p), path=str(p), columns=columns, label_map=label_map,
                               dataset=dataset, construct=construct)
        origin.append({"path": str(p), "sha256": file_sha256(p), "rows": len(recs)})
        records.extend(recs)
    check_unique_ids(records, [str(p) for p in path_list])
    return PairTable.from_records(records, origin=origin)
