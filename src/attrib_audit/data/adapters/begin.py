"""BEGIN (Dziri et al. 2022; google/BEGIN-dataset): knowledge-grounded dialogue responses.

The published TSVs are raw tab-separated text with no quoting: a field may start with `"`
and contain unbalanced quotes, so they are read with quoting off (a CSV reader would
swallow tabs and rows). Files with another suffix go through the generic loader.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterator

from attrib_audit.data.adapters.base import Adapter, Context, Skip, digest, map_label, pair, text
from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows, utf8_error

LABELS = {"fully attributable": 1, "not fully attributable": 0, "generic": None}


def read_raw_tsv(path: Path) -> Iterator[tuple[int, dict]]:
    """Rows of an unquoted TSV, numbered from 1 after the header; a wrong field count is an error."""
    if path.suffix.lower() != ".tsv":
        yield from iter_rows(path)
        return
    if not path.exists():
        raise DataError("file not found", path=str(path))
    if path.is_dir():
        raise DataError("is a folder, not a data file", path=str(path))
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(reader, None)
            if not header:
                raise DataError("empty TSV (no header)", path=str(path))
            for i, cells in enumerate(reader, start=1):
                if not cells or cells == [""]:
                    continue
                if len(cells) != len(header):
                    raise DataError(f"has {len(cells)} tab-separated fields, the header has {len(header)}",
                                    path=str(path), row=i)
                yield i, dict(zip(header, cells))
    except UnicodeDecodeError:  # the decoder knows only its buffer's offset: find the line
        raise utf8_error(path) from None
    except csv.Error as exc:
        raise DataError(f"cannot read TSV: {exc}", path=str(path)) from None


def convert(row: int, raw: dict, ctx: Context):
    label = map_label(raw.get("begin_label"), LABELS, ctx=ctx, row=row, field_name="begin_label")
    if isinstance(label, Skip):
        yield label
        return
    knowledge, message = text(raw.get("knowledge")), text(raw.get("message"))
    model = text(raw.get("model_name"))
    source = "/".join(p for p in (text(raw.get("data_source")), model) if p) or None
    yield pair(claim=text(raw.get("response")), evidence=knowledge, label=label, question=message, source=source,
               group=f"begin:{digest(knowledge or '', message or '')}", system=model or None)


ADAPTER = Adapter(
    name="begin", construct="boundary-dialogue", dataset="begin",
    fields=("knowledge", "response", "begin_label"),
    labels=("'Fully attributable' -> 1", "'Not fully attributable' -> 0", "'Generic' -> dropped"),
    skips=("Generic responses", "rows with a missing label", "empty response/knowledge"),
    convert=convert, reader=read_raw_tsv,
    native="TSV: model_name, data_source, knowledge, message, response, begin_label (unquoted); "
           "question = message; source = data_source/model_name; system = model_name; group = knowledge + message",
)
