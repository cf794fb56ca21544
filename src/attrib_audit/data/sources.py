"""The data flags every pair-reading command shares beyond our schema's (--format, adapter options, --hf),
and `load_data`, which loads what a run spec's DataSpec names (no argparse here: every path loads alike).
"""
from __future__ import annotations

import argparse
from typing import Callable

from attrib_audit.data.adapters import FORMATS, PAIRS, AdapterOptions, detect_format, get_adapter
from attrib_audit.data.adapters.load import adapt_rows, load_native_file, resolve_format
from attrib_audit.data.constructs import unknown_construct_note
from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import check_unique_ids, load_pairs, rows_to_records
from attrib_audit.data.records import PairTable
from attrib_audit.spec import DataSpec


def add_format_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", default="auto", choices=FORMATS,
                   help="input format: a benchmark's published layout (see `attrib-audit datasets`), "
                        f"'{PAIRS}' for our schema, or 'auto' (default: detect from the fields and say so)")
    p.add_argument("--nei", choices=("drop", "0"), default="drop",
                   help="vitaminc: NOT ENOUGH INFO rows dropped (default, counted) or labelled 0")
    p.add_argument("--wice-partial", type=int, choices=(0, 1), default=0,
                   help="wice: label of partially_supported claims (default 0)")
    p.add_argument("--hf", metavar="DATASET_ID", help="load pairs from the Hugging Face hub (needs `datasets`, online)")
    p.add_argument("--hf-split", metavar="SPLIT", help="split of --hf, e.g. test")
    p.add_argument("--hf-revision", metavar="SHA", help="commit SHA of --hf (recorded in results.json; "
                                                        "without it results may not be reproducible)")
    p.add_argument("--hf-config", metavar="NAME", help="configuration name of --hf, when it has several")


def load_data(spec: DataSpec, log: Callable[[str], None] | None = None) -> PairTable:
    """The pairs a DataSpec names: files in our schema or a benchmark's layout, and --hf; ids unique across all.

    Each file's `data` entry records its resolved format, so a rerun from the spec reads it the same way.
    """
    say = log or (lambda _m: None)
    fmt = spec.format
    schema_flags = bool(spec.columns) or spec.label_map is not None
    if schema_flags and fmt not in ("auto", PAIRS):
        raise DataError(f"--label-map and --*-col describe our pair schema; the {fmt} format maps its own fields")
    if not spec.files and spec.hf is None:
        raise DataError("no input: give one or more files, or --hf DATASET_ID")
    for construct in {spec.construct, *(f.construct for f in spec.files)} - {None}:
        note = unknown_construct_note(construct)
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
                               construct=construct, on_error=spec.on_error, seen_ids=seen_ids)
            table.origin[0]["format"] = PAIRS
            tables.append(table)
            continue
        records, origin = load_native_file(f.path, found, options=options, dataset=dataset, construct=construct,
                                           log=say, on_error=spec.on_error)
        tables.append(PairTable.from_records(records, origin=[origin]))
    if spec.hf is not None:
        tables.append(_load_hf_table(spec, options, say))
    table = PairTable.concat(tables)
    check_unique_ids(list(table.records()), [f.path for f in spec.files] + ([spec.hf.id] if spec.hf else []))
    return table


def _load_hf_table(spec: DataSpec, options: AdapterOptions, log: Callable[[str], None]) -> PairTable:
    from attrib_audit.data.hf import load_hf

    hf = spec.hf
    src = load_hf(hf.id, split=hf.split, revision=hf.revision, config=hf.config, log=log)
    fmt = spec.format
    if fmt == "auto":
        fmt = PAIRS if spec.columns or spec.label_map is not None else detect_format(src.columns, path=src.label)
        log(f"format: {src.label}: " + ("our pair schema" if fmt == PAIRS else f"detected {fmt}"))
    stem = hf.id.rstrip("/").split("/")[-1] + (f"-{hf.split}" if hf.split else "")
    if fmt == PAIRS:
        skipped: list[dict] | None = [] if spec.on_error == "skip" else None
        records = rows_to_records(src.rows(), path=src.label, columns=spec.columns, label_map=spec.label_map,
                                  dataset=spec.dataset or stem, construct=spec.construct, skipped=skipped)
        origin = {**src.origin, "format": PAIRS, "rows": len(records), "skipped": skipped or []}
    else:
        records, entry = adapt_rows(get_adapter(fmt), src.rows(), path=src.label, stem=stem, options=options,
                                    dataset=spec.dataset, construct=spec.construct, log=log, on_error=spec.on_error)
        origin = {**src.origin, **entry}
    return PairTable.from_records(records, origin=[origin])


__all__ = ["add_format_args", "load_data"]
