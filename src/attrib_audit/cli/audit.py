"""`attrib-audit audit` (also `--config FILE` and `--check DIR`) and `attrib-audit demo`.

Both print the answer first (per construct the metric to use, then the AUROC table); `-v` prints every other
section too, and the report holds them all.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import AbstractSet

from attrib_audit.audit.results import AuditResult, results_path
from attrib_audit.audit.spec import Local, RunSpec, load_spec_file
from attrib_audit.audit.trust import Asked, check_file_spec
from attrib_audit.cli.convert import local_for, log_for, spec_from_args, stderr
from attrib_audit.cli.options import add_audit_args, add_data_args
from attrib_audit.cli.report import write_report
from attrib_audit.cli.rerun import rerun_argv
from attrib_audit.cli.validate import cmd_audit_until_sure
from attrib_audit.data.demo import DEMO_FILES, demo_paths
from attrib_audit.data.sources import DataSpec, FileSource
from attrib_audit.errors import SpecError, UsageError
from attrib_audit.files.outdir import REPORT_FILES, check_out_dir
from attrib_audit.files.paths import default_cache_path, default_requests_path
from attrib_audit.files.sqlite import check_cache_path
from attrib_audit.report.console import format_answer, format_correlations, format_cut_sensitivity

# flags that set machine-local things, what is printed, or how to check: allowed beside --config and --check
_LOCAL_FLAGS = {"config", "out", "report", "png", "cache", "no_cache", "quiet", "verbose", "model_path",
                "trust_remote_code", "judge_url", "judge_api_key_env", "ray_address", "check", "rescore", "tolerance",
                "func", "command", "cli_parser", "force"}


# beside --config/--check they change nothing: they only name the plugin scorers and the --hf dataset the file may
# name too (audit.trust: a file never chooses code to import or a dataset to fetch)
ASKED_FLAGS = frozenset({"scorers", "hf"})


def asked(args: argparse.Namespace) -> Asked:
    """What this command line names itself (audit.trust.Asked); --hf must be what the file names, if given."""
    return Asked.of(args.scorers, args.hf)


def refuse_spec_flags(args: argparse.Namespace, where: str, also: AbstractSet[str] = frozenset()) -> None:
    """With --config/--check the spec comes from a file: a flag that would change it is an error, not ignored."""
    defaults = vars(args.cli_parser.parse_args([]))
    given = sorted(k for k, v in vars(args).items() if k not in _LOCAL_FLAGS | also and v != defaults.get(k))
    if given:
        raise SpecError(f"{where} holds the run spec: {', '.join(given)} cannot be set by flags beside it")


def _written(args: argparse.Namespace) -> tuple[str, ...]:
    """What an audit writes in --out: results, scores, bootstrap, and with --report the report and its plots."""
    return ("results.json", "scores.parquet", "bootstrap.npz") + (REPORT_FILES if args.report else ())


def check_caches(args: argparse.Namespace) -> None:
    """Refuse a --cache path that is not a SQLite database before anything is loaded or scored."""
    if not args.no_cache:
        check_cache_path(Path(args.cache) if args.cache else default_cache_path(), "score cache")
        check_cache_path(default_requests_path(args.cache), "judge request cache")


def cmd_audit(args: argparse.Namespace) -> int:
    if args.until_sure:
        return cmd_audit_until_sure(args.until_sure)
    if args.check:
        refuse_spec_flags(args, f"--check {args.check}", ASKED_FLAGS)
        results_path(args.check, "audit --check")
        return cmd_check(args)
    if not args.out:
        raise UsageError("give --out DIR (or --check DIR to verify an earlier audit)")
    check_out_dir(args.out, names=_written(args))  # before any loading or scoring: a bad --out or --cache, or
    # an --out holding files attrib-audit did not write, must not cost a run
    check_caches(args)
    if args.config:
        refuse_spec_flags(args, f"--config {args.config}", ASKED_FLAGS)
        spec = load_spec_file(args.config, asked(args))
        return run_and_report(spec, local_for(spec, args), args)
    return run_and_report(*spec_from_args(args, log=log_for(args)), args)


def cmd_demo(args: argparse.Namespace) -> int:
    check_out_dir(args.out, names=_written(args))
    check_caches(args)
    data = DataSpec(files=tuple(FileSource(path=str(p), construct=DEMO_FILES[p.name]) for p in demo_paths()))
    print("demo: human-labelled pairs (AttributionBench sample, Apache-2.0; BEGIN WoW sample, CC-BY-4.0)")
    return run_and_report(*spec_from_args(args, data=data, log=log_for(args)), args)


def run_and_report(spec: RunSpec, local: Local, args: argparse.Namespace) -> int:
    """Run, save, print the answer (every section with -v), then the files written."""
    from attrib_audit.audit.run import run_spec  # here: the statistics import scipy, and `--help` must not

    command = ["attrib-audit", args.command, *rerun_argv(args.cli_parser, args), "--out", "OUT"]
    result = run_spec(spec, local, log=log_for(args), command=command)
    path = result.save(args.out)
    print(format_answer(result.results, verbose=args.verbose))
    res = result.results
    if res.correlations is not None:
        if all(s.status == "no_label" for s in res.slices):
            print("no binary label: the AUROC table is empty; the correlations with the rating below are the audit "
                  "(--label-from-rating CUT derives a label)")
        print("\n" + format_correlations(res.correlations, verbose=args.verbose))
    if res.cut_sensitivity is not None:
        print("\n" + format_cut_sensitivity(res.cut_sensitivity))
    print("\n" + summary(result, path, verbose=args.verbose, report=args.report))
    if args.report:
        return write_report(args.out, png=args.png)
    return 0


def summary(result: AuditResult, path: Path, *, verbose: bool, report: bool) -> str:
    """What was scored, where the results are, and where every section not printed can be read."""
    res = result.results
    lines = []
    if not verbose:
        lines.append("transfer detail (rank agreement, paired differences, decomposition)"
                     + (", sensitivity and the system-level tables: " if res.systems is not None
                        else " and sensitivity: ")
                     + ("in the report" if report else "--report writes them to report.md") + ", or add -v")
    for p in res.precomputed:
        lines.append(f"precomputed {p.scorer}: {p.column} of {p.source} (joined on {p.join}, "
                     f"{p.direction}); {p.n_failed} pairs without a usable score (ids in results.json)")
    cached = sum(s.n_cached for s in res.scorers)
    scored = sum(s.n_scored for s in res.scorers)
    lines.append(f"{len(result.table)} pairs, {scored} scored anew, {cached} from cache; results: {path}")
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace) -> int:
    from attrib_audit.audit.check import check, read_recorded, recorded_spec  # deferred like run_spec

    spec = recorded_spec(read_recorded(args.check), args.check)
    check_file_spec(spec, f"{Path(args.check) / 'results.json'}: spec", asked(args))  # before local settings
    diffs, rerun = check(args.check, local_for(spec, args), tolerance=args.tolerance, rescore=args.rescore, log=stderr,
                         asked=asked(args))
    if diffs:
        print(f"NOT reproduced: {len(diffs)} difference(s) from {Path(args.check) / 'results.json'}")
        for d in diffs:
            print(f"  {d}")
        return 1
    assert rerun is not None  # check() reruns whenever no data file is gone or changed
    res = rerun.results
    n = sum(s.n_pairs for s in res.scorers)
    how = "recomputed" if args.rescore else f"{sum(s.n_cached for s in res.scorers)} unique from the cache"
    print(f"reproduced: every value of results.json, transfer included ({len(res.auroc)} AUROC rows, "
          f"{len(res.paired)} paired differences), within ±{args.tolerance:g} ({n} scorer×pair scores, {how})")
    return 0


def add_audit(sub) -> None:
    p = sub.add_parser("audit", help="score labelled pairs and report per-slice AUROC with CIs")
    add_data_args(p)
    p.add_argument("--until-sure", metavar="POOL", help="report the label-until-sure session of POOL (its store): "
                                                       "prediction-powered AUROCs, the decision and its guarantee")
    add_audit_args(p, None)
    p.add_argument("--config", metavar="FILE", help="run the spec in FILE (JSON or TOML, or an earlier results.json; "
                                                    "see docs/how-to/audit-your-data.md); caches, judge endpoint "
                                                    "and model paths "
                                                    "still come from the flags; a plugin scorer or --hf dataset the "
                                                    "file names runs only when --scorers / --hf name it too")
    p.add_argument("--check", metavar="DIR", help="rerun the run spec recorded in DIR/results.json and confirm every "
                                                  "value (exit 1 with a diff if not); caches, judge endpoint, key "
                                                  "variable and model paths come from this command line, "
                                                  "never the file; "
                                                  "a plugin or --hf dataset it names needs --scorers / --hf too")
    p.add_argument("--rescore", action="store_true", help="with --check: recompute every score instead of "
                                                          "replaying the score and judge request caches")
    p.add_argument("--tolerance", type=float, default=1e-9,
                   help="with --check: largest absolute difference two numbers may show (default 1e-9)")
    p.set_defaults(func=cmd_audit, cli_parser=p)


def add_demo(sub) -> None:
    p = sub.add_parser("demo", help="audit the packaged demo set with the default CPU scorers")
    add_audit_args(p, "attrib-audit-demo")
    p.set_defaults(func=cmd_demo, slice_by="source", cli_parser=p)
