"""The `attrib-audit` argument parser: every command, in the order `--help` lists them.

Building it imports no model library, matplotlib or pandas: those load when a command runs.
"""
from __future__ import annotations

import argparse

from attrib_audit import __version__
from attrib_audit.cli import (audit, models, probe, provenance, report, reproduce, results, score, systems, threshold,
                              validate)

# the flags that name where a command writes: never registered as its inputs, and they get --force
OUTPUT_FLAGS = ("out", "export")
DESCRIPTION = "`attrib-audit` command line: a thin layer over the Python API."
# (module, function adding its subcommand), in --help order
COMMANDS = ((audit, "add_audit"), (audit, "add_demo"), (score, "add_score"), (models, "add_models"),
            (models, "add_datasets"), (results, "add_select"), (systems, "add_systems"), (threshold, "add_threshold"),
            (probe, "add_probe"), (provenance, "add_provenance"),
            (report, "add_report"), (results, "add_agree"), (validate, "add_plan"), (validate, "add_sample"),
            (validate, "add_label"), (reproduce, "add_reproduce"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attrib-audit", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"attrib-audit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module, add in COMMANDS:
        getattr(module, add)(sub)
    for command in sub.choices.values():
        _add_force(command)
    return parser


def _add_force(p: argparse.ArgumentParser) -> None:
    """`--force` on every command that writes a file (one with --out or --export), and on no other."""
    for action in p._actions:  # argparse keeps no public list of a parser's actions
        if isinstance(action, argparse._SubParsersAction):
            for nested in action.choices.values():
                _add_force(nested)
    if any(a.dest in OUTPUT_FLAGS for a in p._actions):
        p.add_argument("--force", action="store_true",
                       help="replace an existing output that attrib-audit did not write, or a symbolic link there "
                            "(the link itself, never its target); inputs of the command are never overwritten")
