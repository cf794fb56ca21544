"""`attrib-audit reproduce`: the paper's AUROC tables (2 a/b, 8, 10, 11) rerun from local files, its numbers beside
ours; `--download DIR` first fetches the data and weights the manifest pins (online, only then)."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from attrib_audit.audit.reproduce import Settings, fetch, load_manifest, reproduce
from attrib_audit.cli.convert import log_for
from attrib_audit.cli.options import STATS, add_n_boot_arg, add_seed_arg, open_unit
from attrib_audit.errors import InputError, UsageError
from attrib_audit.files.jsonfile import sealed_json
from attrib_audit.files.outdir import check_out_dir, staged_dir
from attrib_audit.files.records import to_record
from attrib_audit.report.console import format_reproduce
from attrib_audit.report.paper import reproduce_sections
from attrib_audit.report.render import to_markdown

OFFLINE = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE")


def cmd_reproduce(args: argparse.Namespace) -> int:
    if not args.download:  # nothing is fetched unless asked: a hub id not on this machine is absent, not downloaded
        for var in OFFLINE:
            os.environ[var] = "1"
    manifest = load_manifest()
    tables = [t.strip() for t in args.tables.split(",") if t.strip()] if args.tables else None
    manifest.rows_of(tables)  # an unknown table is an error before anything runs
    out = check_out_dir(args.out, names=("reproduce.json", "reproduce.md")) if args.out else None
    paths = {}
    for item in args.model_path:
        key, sep, path = item.partition("=")
        if not sep or key.strip() not in manifest.scorers:
            raise UsageError(f"--model-path {item!r}: expected SCORER=PATH with SCORER one of "
                             f"{', '.join(manifest.scorers)}")
        paths[key.strip()] = path.strip()
    data_dir = Path(args.download or args.data_dir)
    if args.data_dir and not data_dir.is_dir():
        raise InputError(f"--data-dir {data_dir}: not a folder")
    log = log_for(args)
    fetched = fetch(manifest, data_dir, tables=tables, log=log) if args.download else []
    settings = Settings(device=args.device, n_boot=args.n_boot, seed=args.seed, level=args.ci_level,
                        batch_size=args.batch_size, cache_path=":memory:" if args.no_cache else args.cache,
                        quiet=args.quiet, model_paths=paths)
    report = reproduce(manifest, data_dir, settings, tables=tables, log=log).with_fetched(fetched)
    print(format_reproduce(report))
    if out is not None:
        with staged_dir(out, replaces=("reproduce.json", "reproduce.md")) as tmp:
            (tmp / "reproduce.json").write_text(sealed_json(to_record(report)), encoding="utf-8")
            (tmp / "reproduce.md").write_text(to_markdown("attrib-audit reproduce", report.paper,
                                                          reproduce_sections(report), tmp / "reproduce.md"),
                                              encoding="utf-8")
        print(f"written: {out / 'reproduce.json'}, {out / 'reproduce.md'}")
    return 0


def add_reproduce(sub) -> None:
    p = sub.add_parser("reproduce", help="rerun the paper's AUROC tables and print its numbers beside ours")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--data-dir", metavar="DIR",
                     help="local data: the paper's files in the manifest's layout (as --download writes them) or the "
                          "shared developer samples (attributionbench_id.jsonl, begin_wow.jsonl, wice.jsonl) as "
                          "stand-ins; weights from DIR/models/SCORER or the usual resolution. Never downloads")
    src.add_argument("--download", metavar="DIR",
                     help="first fetch the data and hub weights the manifest pins into DIR (online), then run from it")
    p.add_argument("--tables", help="comma-separated tables to run: 2a, 2b, 8, 10, 11 (default all)")
    p.add_argument("--model-path", action="append", default=[], metavar="SCORER=PATH",
                   help="weights for a manifest scorer (repeatable), e.g. nli-mnli=/models/roberta-large-mnli")
    p.add_argument("--device", default="cpu", help="cpu, cuda or mps")
    p.add_argument("--batch-size", type=int, help="pairs per scoring batch (default: per scorer)")
    add_n_boot_arg(p, "bootstrap resamples per row")
    add_seed_arg(p)
    p.add_argument("--ci-level", type=open_unit, default=STATS.level,
                   help=f"coverage of our CIs (default {STATS.level:g})")
    p.add_argument("--cache",
                   help="score cache file (default $ATTRIB_AUDIT_CACHE or ~/.cache/attrib_audit/scores.sqlite)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    p.add_argument("--quiet", action="store_true", help="no progress notes")
    p.add_argument("--out", metavar="DIR", help="also write reproduce.json (sealed) and reproduce.md there")
    p.set_defaults(func=cmd_reproduce)
