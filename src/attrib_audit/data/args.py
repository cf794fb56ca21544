"""The data flags every pair-reading command shares beyond our schema's: --format, adapter options, --hf.

`load_adapted` returns None when every input is a plain file in our schema, so the
schema loader in cli.py handles that case unchanged.
"""
from __future__ import annotations

import argparse
import sys
from typing import Mapping

from attrib_audit.data.adapters import FORMATS, PAIRS, AdapterOptions, detect_format, get_adapter
from attrib_audit.data.adapters.load import adapt_rows, load_native_file, resolve_format
from attrib_audit.data.constructs import unknown_construct_note
from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import check_unique_ids, load_pairs, rows_to_records
from attrib_audit.data.records import PairTable


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


def _log(args: argparse.Namespace):
    return (lambda _m: None) if getattr(args, "quiet", False) else (lambda m: print(m, file=sys.stderr))


def load_adapted(args: argparse.Namespace, *, columns: Mapping[str, str] | None = None,
                 label_map: Mapping[str, int] | None = None) -> PairTable | None:
    """Load files/--hf through their adapters; None when all inputs are plain files in our schema."""
    log = _log(args)
    fmt = getattr(args, "format", "auto")
    schema_flags = bool(columns) or label_map is not None
    if schema_flags and fmt not in ("auto", PAIRS):
        raise DataError(f"--label-map and --*-col describe our pair schema; the {fmt} format maps its own fields")
    hf = getattr(args, "hf", None)
    if not args.data and not hf:
        raise DataError("no input: give one or more files, or --hf DATASET_ID")
    if args.construct:
        note = unknown_construct_note(args.construct)
        if note:
            log(f"note: {note}")
    plans = [(p, PAIRS if schema_flags and fmt == "auto" else resolve_format(fmt, p, log)) for p in args.data]
    if not hf and all(f == PAIRS for _, f in plans):
        return None
    options = AdapterOptions(nei=args.nei, wice_partial=args.wice_partial)
    tables = []
    for path, f in plans:
        if f == PAIRS:
            tables.append(load_pairs(path, columns=columns, label_map=label_map, dataset=args.dataset_name,
                                     construct=args.construct))
            continue
        records, origin = load_native_file(path, f, options=options, dataset=args.dataset_name,
                                           construct=args.construct, log=log)
        tables.append(PairTable.from_records(records, origin=[origin]))
    if hf:
        tables.append(_load_hf_table(args, fmt, options, columns, label_map, log))
    table = PairTable.concat(tables)
    check_unique_ids(list(table.records()), [str(p) for p in args.data] + ([hf] if hf else []))
    return table


def _load_hf_table(args, fmt, options, columns, label_map, log) -> PairTable:
    from attrib_audit.data.hf import load_hf

    src = load_hf(args.hf, split=args.hf_split, revision=args.hf_revision, config=args.hf_config, log=log)
    if fmt == "auto":
        fmt = PAIRS if columns or label_map is not None else detect_format(src.columns, path=src.label)
        log(f"format: {src.label}: " + ("our pair schema" if fmt == PAIRS else f"detected {fmt}"))
    stem = args.hf.rstrip("/").split("/")[-1] + (f"-{args.hf_split}" if args.hf_split else "")
    if fmt == PAIRS:
        records = rows_to_records(src.rows(), path=src.label, columns=columns, label_map=label_map,
                                  dataset=args.dataset_name or stem, construct=args.construct)
        origin = {**src.origin, "format": PAIRS, "rows": len(records)}
    else:
        records, entry = adapt_rows(get_adapter(fmt), src.rows(), path=src.label, stem=stem, options=options,
                                    dataset=args.dataset_name, construct=args.construct, log=log)
        origin = {**src.origin, **entry}
    return PairTable.from_records(records, origin=[origin])


__all__ = ["add_format_args", "load_adapted"]
