"""The command line that reruns a run, rebuilt from the parsed options rather than copied from sys.argv.

Copying argv would record secrets (credentials inside --judge-url) and miss defaults that
changed; walking the parser emits every option whose value is not its default (and the
statistical settings always), in a fixed order, with URLs in their public form. Where the output and caches go,
and how much is printed, are left out: they do not change a number.
"""
from __future__ import annotations

import argparse

from attrib_audit.scorers.judge.http import public_url

NOT_RECORDED = {"out", "report", "png", "quiet", "verbose", "check", "cache", "no_cache", "help", "version",
                "screenshot",
                "force"}
ALWAYS = {"scorers", "slice_by", "n_boot", "seed", "n_perm"}  # written even at their default: defaults may change


def _flag(action: argparse.Action) -> str:
    return max(action.option_strings, key=lambda s: (s.startswith("--"), len(s)))


def rerun_argv(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """Positionals, then every non-default option of `parser` as parsed into `args`."""
    head: list[str] = []
    tail: list[str] = []
    for action in parser._actions:  # argparse keeps no public list of a parser's actions
        if action.dest in NOT_RECORDED or action.dest == argparse.SUPPRESS:
            continue
        value = getattr(args, action.dest, None)
        if not action.option_strings:
            head += [str(v) for v in (value if isinstance(value, list) else [value]) if v is not None]
            continue
        if value is None or (value == action.default and action.dest not in ALWAYS):
            continue
        if isinstance(value, str) and "://" in value:  # --judge-url, --ray-address: never their credentials
            value = public_url(value)
        flag = _flag(action)
        if isinstance(action, argparse._StoreTrueAction):
            tail.append(flag)
        elif isinstance(action, argparse._AppendAction):
            for item in value:
                tail += [flag, str(item)]
        else:
            tail += [flag, str(value)]
    return head + tail
