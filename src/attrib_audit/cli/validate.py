"""Commands of the validate room: `plan`, `sample`, `label`."""
from __future__ import annotations

import argparse


def _plan(args: argparse.Namespace) -> int:
    from attrib_audit.validate.plan import cmd_plan

    return cmd_plan(args)


def _sample(args: argparse.Namespace) -> int:
    from attrib_audit.validate.sample import cmd_sample

    return cmd_sample(args)


def _label(args: argparse.Namespace) -> int:
    from attrib_audit.validate.label import cmd_label

    return cmd_label(args)


def register(sub) -> None:
    from attrib_audit.validate.label import add_label_args
    from attrib_audit.validate.plan import add_plan_args
    from attrib_audit.validate.sample import add_sample_args

    p = sub.add_parser("plan", help="how many human labels the target dataset needs (simulated with the audit's bootstrap)")
    add_plan_args(p)
    p.set_defaults(func=_plan)
    p = sub.add_parser("sample", help="choose which unlabelled pairs to label; records each pair's inclusion probability")
    add_sample_args(p)
    p.set_defaults(func=_sample)
    p = sub.add_parser("label", help="label sampled pairs in a local web page (127.0.0.1); --export writes them out")
    add_label_args(p)
    p.set_defaults(func=_label)
