"""`attrib-audit threshold`: the gate threshold a team can deploy for its target, per scorer and slice.

From an audit folder (`--results DIR`: its saved scores, nothing rescored) or from labelled files scored here
with the audit's data and scoring flags. Writes thresholds.json (beside the audit, or in `--out`) and prints
the answer first: per slice the certified threshold or why none, with held-out rates; `-v` the rest.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from attrib_audit.audit.spec import audit_config
from attrib_audit.audit.thresholds import (
    FILE,
    AuditRef,
    ThresholdOptions,
    ThresholdSource,
    compute_thresholds,
    scored_from_results,
    scored_from_table,
    to_json,
)
from attrib_audit.cli.audit import check_caches
from attrib_audit.cli.convert import log_for, spec_from_args, target_from_args
from attrib_audit.cli.options import (
    STATS,
    add_data_args,
    add_engine_args,
    add_judge_args,
    add_model_args,
    add_n_boot_arg,
    add_precomputed_args,
    add_seed_arg,
    add_target_args,
    half_open_unit,
    open_unit,
    positive_int,
)
from attrib_audit.cli.report import write_report
from attrib_audit.data.sources import load_data
from attrib_audit.engine.table import no_scorer_ran
from attrib_audit.errors import UsageError
from attrib_audit.files.outdir import check_out_dir, new_run_id, write_text_atomic
from attrib_audit.report.console import format_gate_usefulness, format_thresholds
from attrib_audit.stats.calibration import METHODS
from attrib_audit.stats.threshold import UNITS

DEFAULT_SCORERS = "lexical,minilm,blend,bertscore"


def _options(args: argparse.Namespace, scorers: tuple[str, ...] | None) -> ThresholdOptions:
    target = target_from_args(args)
    assert target is not None  # the parser requires one of the target flags
    return ThresholdOptions(target=target, delta=args.delta, unit=args.unit, folds=args.folds,
                            n_boot=args.n_boot, seed=args.seed, level=args.ci_level, n_bins=args.n_bins,
                            recalibrate=args.recalibrate, scorers=scorers, min_useful_pass=args.min_useful_pass,
                            min_supported_pass=args.min_supported_pass)


def _names(text: str | None) -> tuple[str, ...] | None:
    return tuple(s.strip() for s in text.split(",") if s.strip()) if text else None


def cmd_threshold(args: argparse.Namespace) -> int:
    log = log_for(args)
    if args.results:
        if args.data or args.hf:
            raise UsageError("give --results DIR (an earlier audit) or labelled files to score, not both")
        opts = _options(args, _names(args.scorers))
        out = check_out_dir(args.out or args.results, names=("thresholds.json",))
        pairs, audit = scored_from_results(args.results)
        run_id, slice_by = audit.run_id, audit.config.slice_by
        source = ThresholdSource(results=AuditRef(folder=str(Path(args.results)), run_id=run_id))
    else:
        if not (args.data or args.hf):
            raise UsageError("give --results DIR (an earlier audit) or labelled files to score")
        if not args.out:
            raise UsageError("give --out DIR for thresholds.json")
        opts = _options(args, None)
        out = check_out_dir(args.out, names=("thresholds.json",))
        check_caches(args)
        args.scorers = args.scorers or DEFAULT_SCORERS
        spec, local = spec_from_args(args, log=log)
        table = load_data(spec.data, log=log)
        from attrib_audit.audit.run import score_all  # here: the statistics import scipy, and `--help` must not

        scored = score_all(table, audit_config(spec, local), log)
        scores, run_stats, unavailable = scored.scores, scored.run_stats, scored.unavailable
        if not scores:
            raise no_scorer_ran(unavailable)
        pairs, slice_by, run_id = scored_from_table(table, table.slice_keys(args.slice_by),
                                                    scores), args.slice_by, new_run_id()
        source = ThresholdSource(data=table.origin, scorers={s.scorer: s.signature for s in run_stats},
                                 unavailable=unavailable)
    results = compute_thresholds(pairs, opts, source=source, run_id=run_id, slice_by=slice_by)
    out.mkdir(parents=True, exist_ok=True)
    path = out / FILE
    write_text_atomic(path, to_json(results))
    print(format_thresholds(results, verbose=args.verbose))
    print(format_gate_usefulness(results))
    print(f"\nthresholds: {path}")
    if args.report:
        return write_report(out)
    if args.results:
        print(f"the report shows them after: attrib-audit report {out}")
    return 0


def add_threshold(sub) -> None:
    p = sub.add_parser("threshold",
                       help="the gate threshold to deploy for a target rate (certified by Learn-then-Test), "
                                         "with held-out rates, transfer across slices and calibration")
    p.add_argument("--results", metavar="DIR", help="an `attrib-audit audit --out` folder: use its saved scores "
                                                    "(scores.parquet, weights included); nothing is rescored")
    add_target_args(p, required=True)
    p.add_argument("--min-supported-pass", type=open_unit, metavar="RATE",
                   help="a second target certified together with the first (Learn-then-Test, both risks at once): the "
                        "gate must pass at least this share of supported answers, e.g. 0.6")
    p.add_argument("--min-useful-pass", type=half_open_unit, default=0.5, metavar="RATE",
                   help="a certified gate passing fewer supported answers than this is marked 'certified but useless' "
                        "(default 0.5)")
    p.add_argument("--scorers", help="with --results: only these audited scorers; with data files: the scorers to "
                                     f"run (default {DEFAULT_SCORERS})")
    p.add_argument("--unit", choices=UNITS, default="auto",
                   help="unit of exchangeability: auto (groups where a slice's groups hold several pairs, else pairs), "
                        "pair or group")
    p.add_argument("--folds", type=positive_int, default=5,
                   help="cross-fitting folds of whole groups for held-out rates (default 5)")
    p.add_argument("--recalibrate", choices=METHODS,
                   help="also fit a calibration map per slice (fitted on some folds, judged on the others) and test it "
                        "on the other slices")
    p.add_argument("--n-bins", type=positive_int, default=10, help="reliability-diagram bins on [0, 1] (default 10)")
    add_n_boot_arg(p, "bootstrap resamples for every CI")
    add_seed_arg(p)
    p.add_argument("--ci-level", type=open_unit, default=STATS.level,
                   help=f"coverage of the rates' and ECE's CIs (default {STATS.level:g})")
    p.add_argument("--out", help="folder for thresholds.json (default: the --results folder; required with data files)")
    p.add_argument("--report", action="store_true", help="also (re)write the report in that folder")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print every reason, certificate, transfer matrix and the calibration")
    add_data_args(p)  # scoring labelled files instead of --results: the audit's data and scoring flags
    p.add_argument("--slice-by", choices=("dataset", "source"), default="dataset",
                   help="one threshold per dataset, or per dataset:source")
    add_model_args(p)
    add_engine_args(p)
    add_judge_args(p)
    add_precomputed_args(p)
    p.set_defaults(func=cmd_threshold)
