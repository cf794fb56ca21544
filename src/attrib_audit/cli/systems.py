"""`attrib-audit systems DATA | --results DIR`: the system-level section alone (do the metrics rank the systems the
way the human labels do?), from an audit folder's saved scores without rescoring, or by scoring a labelled file."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from attrib_audit.audit.saved import read_results
from attrib_audit.audit.systems import systems_from_results
from attrib_audit.cli.audit import check_caches
from attrib_audit.cli.convert import log_for, spec_from_args
from attrib_audit.cli.options import (
    STATS,
    add_data_args,
    add_precomputed_args,
    add_scoring_args,
    n_boot_int,
    open_unit,
    seed_int,
)
from attrib_audit.errors import UsageError
from attrib_audit.files.records import to_record
from attrib_audit.report.console import format_systems, format_systems_brief

DEFAULTS = {"n_boot": STATS.n_boot, "seed": STATS.seed, "ci_level": STATS.level,  # scoring a file: as `audit`
            "resample": ",".join(STATS.system_resample)}
TOLERANCE = 1e-9


def cmd_systems(args: argparse.Namespace) -> int:
    from attrib_audit.audit.check import diff  # here: the statistics import scipy, and `--help` must not
    from attrib_audit.audit.run import run_systems

    if args.results:
        if args.data or args.hf:
            raise UsageError("give data files or --results DIR, not both")
        overrides = {"n_boot": args.n_boot, "seed": args.seed, "level": args.ci_level,
                     "resample": args.resample.split(",") if args.resample else None}
        block = systems_from_results(args.results, overrides)
        recorded = read_results(args.results, "systems --results", UsageError).systems
        if all(v is None for v in overrides.values()) and recorded is not None:
            found = diff(to_record(recorded), to_record(block), tolerance=TOLERANCE)
            same = (f"recomputed from {Path(args.results) / 'scores.parquet'}: equals the section saved in results.json"
                    if not found else f"recomputed: {len(found)} value(s) differ from results.json, first: {found[0]}")
        else:
            same = f"recomputed from {Path(args.results) / 'scores.parquet'} with the settings given"
    else:
        if not args.data and not args.hf:
            raise UsageError("give labelled data files (with a system column) or --results DIR of an audit")
        check_caches(args)
        for key, value in DEFAULTS.items():
            if getattr(args, key) is None:
                setattr(args, key, value)
        found_block = run_systems(*spec_from_args(args, log=log_for(args)), log=log_for(args))
        if found_block is None:  # every slice's rows lack a system: nothing to rank
            raise UsageError("no slice has rows that name their system: nothing to rank")
        block, same = found_block, None
    if args.json:
        print(json.dumps(to_record(block), indent=2))
        return 0
    print(format_systems(block) if args.verbose else format_systems_brief(block))
    if same:
        print(f"\n{same}")
    return 0


def add_systems(sub) -> None:
    p = sub.add_parser("systems", help="system level alone: does each metric rank the systems (generators) as the "
                                       "human labels do; from an audit folder's scores or by scoring a file")
    add_data_args(p)
    p.add_argument("--results", metavar="DIR", help="an `attrib-audit audit --out` folder: recompute the section "
                                                    "from its scores.parquet, without rescoring")
    add_scoring_args(p, "lexical,minilm,blend,bertscore")
    add_precomputed_args(p)
    p.add_argument("--slice-by", choices=("dataset", "source"), default="dataset",
                   help="scoring a file: one section per dataset, or per dataset:source")
    p.add_argument("--n-boot", type=n_boot_int,
                   help=f"bootstrap resamples (default: as the audit recorded; {STATS.n_boot} for a file)")
    p.add_argument("--seed", type=seed_int, help=f"default: as the audit recorded; {STATS.seed} for a file")
    p.add_argument("--ci-level", type=open_unit,
                   help=f"CI coverage (default: as the audit recorded; {STATS.level:g} for a file)")
    p.add_argument("--resample", choices=("inputs", "systems,inputs"),
                   help="resample inputs, or systems and inputs (default: as the audit recorded; inputs for a file)")
    p.add_argument("--json", action="store_true", help="print the section as JSON (results.json's `systems` layout)")
    p.add_argument("-v", "--verbose", action="store_true", help="every table, not only the answer per slice")
    p.set_defaults(func=cmd_systems)
