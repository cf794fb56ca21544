"""`attrib-audit datasets`: the input formats, their constructs, label mappings and what each skips."""
from __future__ import annotations

import argparse
import json

from attrib_audit.data.adapters import ADAPTERS, PAIRS
from attrib_audit.data.constructs import CONSTRUCTS


def describe() -> dict:
    """The format and construct registries as plain data (what the command prints)."""
    formats = [{"format": PAIRS, "construct": "from a `construct` column or --construct",
                "fields": ["id", "dataset", "claim", "evidence", "label"],
                "labels": ["0/1 or true/false; strings need --label-map"], "skips": ["nothing: bad rows are errors"],
                "native": "our schema: id, dataset, source, question, claim, evidence, label, group, construct"}]
    for a in ADAPTERS.values():
        formats.append({"format": a.name, "construct": a.construct, "fields": list(a.fields), "labels": list(a.labels),
                        "skips": list(a.skips), "native": a.native})
    return {"formats": formats, "constructs": dict(CONSTRUCTS)}


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


def register(sub) -> None:
    p = sub.add_parser("datasets", help="list the input formats, their constructs and label mappings")
    p.add_argument("--json", action="store_true", help="print the registries as JSON")
    p.set_defaults(func=cmd_datasets)
