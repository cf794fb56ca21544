"""Validate a record batch column-wise: the common case (text columns, clean labels, fresh ids) becomes a
PairTable without a Python loop over rows; `plain_jsonl_table` reads a whole plain JSONL file into such a table.

A batch this cannot vouch for (a bad or missing value, an unusual column type, a duplicated id) returns
None and goes through `rows_to_records` instead, so every error and every skipped row is reported word for
word as before; the fast path only ever accepts rows that path would accept, and normalises them the same.
"""
from __future__ import annotations

import re
from itertools import repeat
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from attrib_audit.data.errors import DataError
from attrib_audit.data.labels import RatingCut, parse_label
from attrib_audit.data.records import FIELDS, NO_LABEL, PairTable


def _all_have_text(arr: Any, values: list[str]) -> bool:
    """Whether str.strip() leaves something of every value, as `pair_text` demands. Arrow finds the values holding
    printable ASCII, which Python never counts as whitespace; only the few others are stripped in Python (Arrow's
    idea of whitespace is not Python's, e.g. for U+001C)."""
    import pyarrow.compute as pc

    without_ascii = pc.invert(pc.match_substring_regex(arr, "[!-~]"))
    return all(values[i].strip() for i in pc.indices_nonzero(without_ascii).to_pylist())


class _Unsure(Exception):
    """This batch needs the row-by-row path."""


def _text_column(batch: Any, name: str, ints_ok: bool = False) -> Any:
    """The column as Arrow strings, or None if it is absent or only nulls (as the row path reads a null: no value);
    raises _Unsure for a type str() might spell otherwise."""
    import pyarrow as pa

    if name not in batch.schema.names:
        return None
    arr = batch.column(name)
    if pa.types.is_null(arr.type):
        return None
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        return arr
    if ints_ok and pa.types.is_integer(arr.type):  # str(int) and Arrow's cast agree
        return arr.cast(pa.string())
    raise _Unsure


def _or_default(arr: Any, default: list[str] | str) -> list[str]:
    """Values, with null and "" replaced (the per-row path's `_text(v) or default`)."""
    import pyarrow.compute as pc

    blank = pc.fill_null(pc.equal(arr, ""), True).to_numpy(zero_copy_only=False)
    values = arr.to_pylist()
    if blank.any():
        for i in np.flatnonzero(blank):
            values[i] = default if isinstance(default, str) else default[i]
    return values


def _labels(arr: Any, label_map: Mapping[str, int] | None, path: str, field: str) -> np.ndarray:
    """parse_label once per distinct value; any value it refuses sends the batch to the row path."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if arr.null_count:
        raise _Unsure
    try:
        distinct = pc.unique(arr)  # unlike dictionary_encode, one set of values across a table's chunks
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        raise _Unsure from None
    try:
        mapped = np.array([parse_label(v, label_map, path=path, row=0, field=field) for v in distinct.to_pylist()],
                          dtype=np.int8)
    except DataError:
        raise _Unsure from None
    return mapped[pc.index_in(arr, value_set=distinct).to_numpy()]


def _ratings(batch: Any, name: str) -> np.ndarray:
    """A numeric rating column without nulls, NaN or infinities as float64; anything else goes to the row path,
    which names the row."""
    import pyarrow as pa

    arr = batch.column(name)
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)) or arr.null_count:
        raise _Unsure
    values = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
    if not np.isfinite(values).all():
        raise _Unsure
    return values


def batch_to_table(batch: Any, *, first_row: int, path: str, columns: Mapping[str, str] | None = None,
                   label_map: Mapping[str, int] | None = None, dataset: str | None = None,
                   construct: str | None = None, seen_ids: dict[str, tuple[str, int]] | None = None,
                   label_from_rating: RatingCut | None = None) -> PairTable | None:
    """The rows of `batch` (a record batch or a table; numbered from `first_row`) as a PairTable, or None to use
    `rows_to_records`.

    Same knobs and the same result as rows_to_records; `seen_ids` is only updated when the batch is accepted.
    """
    import pyarrow.compute as pc

    col = {f: f for f in FIELDS}
    col.update(columns or {})
    n = batch.num_rows
    rating_col = (columns or {}).get("rating")
    read_label = label_from_rating is None and (rating_col is None or col["label"] in batch.schema.names)
    score_only = col["claim"] not in batch.schema.names and col["evidence"] not in batch.schema.names
    needed = (() if score_only else ("claim", "evidence")) + (("label",) if read_label else ())
    if n == 0 or any(col[f] not in batch.schema.names for f in needed):
        return None
    if rating_col is not None and rating_col not in batch.schema.names:
        return None
    if "inclusion_prob" in batch.schema.names:  # a labelled sample (small): the row path reads its probabilities
        return None
    default_dataset = dataset or Path(path).stem
    try:
        texts = {"claim": [""] * n, "evidence": [""] * n}  # a score-only file: no texts, as the row path reads it
        for f in () if score_only else ("claim", "evidence"):
            arr = _text_column(batch, col[f])
            if arr is None or arr.null_count:
                return None
            texts[f] = arr.to_pylist()
            if not _all_have_text(arr, texts[f]):
                return None
        ratings = None if rating_col is None else _ratings(batch, rating_col)
        if read_label:
            labels = _labels(batch.column(col["label"]), label_map, path, col["label"])
        elif label_from_rating is not None and ratings is not None:
            labels = label_from_rating.apply(ratings)
        else:
            labels = np.full(n, NO_LABEL, dtype=np.int8)
        id_arr = _text_column(batch, col["id"], ints_ok=True)
        defaults = [f"{default_dataset}:{r}" for r in range(first_row, first_row + n)] if (
            id_arr is None or id_arr.null_count or not pc.all(pc.not_equal(id_arr, "")).as_py()) else []
        ids = defaults if id_arr is None else _or_default(id_arr, defaults)
        ds_arr = _text_column(batch, col["dataset"])
        datasets = [default_dataset] * n if ds_arr is None else _or_default(ds_arr, default_dataset)
        optional = {f: _text_column(batch, col[f], ints_ok=f in ("group", "system"))
                    for f in ("source", "question", "group", "system")}
        if not construct:
            optional["construct"] = _text_column(batch, col["construct"])
    except _Unsure:
        return None
    if seen_ids is not None:
        if len(set(ids)) != n or not seen_ids.keys().isdisjoint(ids):
            return None  # the row path names the duplicate and where it first appeared
        seen_ids.update(zip(ids, zip(repeat(path), range(first_row, first_row + n))))
    opt: dict[str, list[str | None]] = {f: [None] * n if a is None else a.to_pylist() for f, a in optional.items()}
    groups = [g if g else i for g, i in zip(opt["group"], ids)]
    return PairTable(ids=ids, datasets=datasets, claims=texts["claim"], evidences=texts["evidence"], labels=labels,
                     sources=opt["source"], questions=opt["question"], groups=groups,
                     constructs=[construct] * n if construct else opt["construct"],
                     systems=[s or None for s in opt["system"]],  # blank: no system, as the row path
                     ratings=ratings)


# Deepest nesting of arrays/objects a JSONL line may have: far beyond any pair's metadata, far below where Python's
# parser runs out of recursion or Arrow's (RapidJSON) out of stack, so both readers refuse the same lines.
MAX_JSON_DEPTH = 100
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def nested_too_deep(line: str) -> bool:
    """Whether arrays and objects nest more than MAX_JSON_DEPTH deep in one line of JSON, counted without recursion
    (brackets inside strings skipped), so a line nested 50,000 deep is refused before any parser recurses into it."""
    if line.count("{") + line.count("[") <= MAX_JSON_DEPTH:  # the usual line: it has fewer openers than the limit
        return False
    brackets = np.frombuffer(_JSON_STRING.sub("", line).encode("utf-8", "surrogatepass"), dtype=np.uint8)
    step = np.zeros(len(brackets), dtype=np.int64)
    step[(brackets == ord("{")) | (brackets == ord("["))] = 1
    step[(brackets == ord("}")) | (brackets == ord("]"))] = -1
    return bool(np.cumsum(step).max(initial=0) > MAX_JSON_DEPTH)


JSONL_BLOCK_BYTES = 4 << 20  # Arrow parses blocks of about this size in parallel (at least one line each)


def _plain_lines(data: bytes) -> tuple[int, int] | None:
    """(lines, longest line in bytes) if each line of `data` is exactly `{...}` (a CRLF ending allowed), else None.

    With Arrow parsing every line and giving one row per line, this proves row i came from line i: a line that
    starts with `{` cannot continue an object left open by a line ending in `}` (that needs `,`, `]` or `}`), and
    JSON strings hold no raw newline, so each line holds whole objects, one each when the counts agree. Blank
    lines, a BOM, leading blanks or a line of several objects all fail here and go to the per-line reader.
    """
    b = np.frombuffer(data, dtype=np.uint8)
    if not len(b):
        return None
    step = 1 << 22  # in slices: one mask over the whole file would cost more in fresh pages than in compares
    ends = np.concatenate([np.flatnonzero(b[i:i + step] == ord("\n")) + i for i in range(0, len(b), step)])
    if not len(ends) or ends[-1] != len(b) - 1:
        ends = np.append(ends, len(b))  # a last line without its newline
    starts = np.concatenate(([0], ends[:-1] + 1))
    if np.any(starts >= ends) or np.any(b[starts] != ord("{")):
        return None
    last = ends - 1
    last -= b[last] == ord("\r")
    if not np.all(b[last] == ord("}")):
        return None
    openers = np.concatenate([np.flatnonzero((b[i:i + step] == ord("{")) | (b[i:i + step] == ord("["))) + i
                              for i in range(0, len(b), step)])
    if np.any(np.searchsorted(openers, ends) - np.searchsorted(openers, starts) > MAX_JSON_DEPTH):
        return None  # a line that may nest too deep: the per-line reader measures it (and refuses it if so)
    return len(ends), int((ends - starts).max()) + 1


def plain_jsonl_table(data: bytes) -> Any:
    """The rows of a JSONL file's bytes as an Arrow table (row i from line i), or None unless the file is plain.

    Plain: valid UTF-8, one object per line, parsed by Arrow without complaint (Arrow refuses duplicated keys,
    lone surrogates, a column whose JSON types clash). The caller validates the table with `batch_to_table`;
    a file that is not plain, or a table it does not take, is read line by line so errors read as before.
    """
    import pyarrow as pa
    import pyarrow.json as pj

    lines = _plain_lines(data)
    if lines is None:
        return None
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    try:
        pa.LargeStringArray.from_buffers(1, offsets, pa.py_buffer(data)).validate(full=True)  # UTF-8, as Python reads
        block = max(JSONL_BLOCK_BYTES, lines[1] + 1)  # Arrow refuses a line longer than its block
        table = pj.read_json(pa.BufferReader(data), read_options=pj.ReadOptions(block_size=block))
    except (pa.ArrowException, UnicodeDecodeError):  # the latter: an Arrow message quoting bytes cut mid-character
        return None
    return table if table.num_rows == lines[0] else None
