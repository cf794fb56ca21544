"""Hypothesis over every command's argument parser: random flags of the command with random values (numbers at and
past their limits, junk, empty and half-written lists). Parsing ends in a namespace whose every number means what its
flag says, or in exit 2 with one line; never a traceback. Then, for the commands that fail fast on a missing input,
the whole command runs: exit 0, 1, 2 or 3 with one line, within a time bound."""
from __future__ import annotations

import argparse
import contextlib
import io
import math
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attrib_audit.cli import main
from attrib_audit.cli.parser import build_parser, commands
from attrib_audit.stats.bootstrap import MIN_BOOT
from attrib_audit.validate.plan import GRID_RANGE

PARSER = build_parser()
LEAVES = {name: p for name, p, _ in commands(PARSER)
          if name and not any(isinstance(a, argparse._SubParsersAction) for a in p._actions)}
FLAGS = {name: [a for a in p._actions if a.option_strings and a.option_strings[-1].startswith("--")
                and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]
         for name, p in LEAVES.items()}
NUMBERS = ["0", "1", "-1", "2", "9", "10", "0.5", "0.999999999", "1e-300", "1e-9", "1.5", "-0.5", "1e9", "1e400",
           "nan", "inf", "-inf", "abc", "", " ", "0x10", "1_000", "10,", ",", "0.5,", "0.6,0.7", "10,20,abc", "7,,8",
           "=", "a=b", "lexical", "nowhere.jsonl", "\x00", "é", "--", "-5,10"]
VALUE = st.one_of(st.sampled_from(NUMBERS), st.text(max_size=8))

# What each parsed number must mean (the flag's dest -> a check of its value)
UNIT = ("ci_level", "delta", "prevalence", "max_false_pass", "min_precision", "min_catch")
POSITIVE_INT = ("sims", "pairs_per_cluster", "folds", "n_bins", "strata", "n", "n_perm")
MEANING = {
    "n_boot": lambda v: isinstance(v, int) and v >= MIN_BOOT,
    "half_width": lambda v: math.isfinite(v) and v > 0,
    "detect": lambda v: math.isfinite(v) and v > 0,
    "grid": lambda v: all(GRID_RANGE[0] <= x <= GRID_RANGE[1] for x in v),
    "auroc": lambda v: all(0.5 <= x < 1 for x in v),
    "seed": lambda v: v >= 0,
    **{d: (lambda v: math.isfinite(v) and 0 < v < 1) for d in UNIT},
    **{d: (lambda v: isinstance(v, int) and v >= 1) for d in POSITIVE_INT},
}


def argv_for(command: str, picks: list[tuple[int, str]]) -> list[str]:
    flags = FLAGS[command]
    argv = command.split()
    for i, value in picks:
        if not flags:
            break
        action = flags[i % len(flags)]
        flag = action.option_strings[-1]
        if action.nargs == 0:
            argv.append(flag)
        else:
            argv.append(f"{flag}={value}")  # `=` keeps a value that starts with '-' a value
    return argv


def parse(argv: list[str]) -> tuple[int, str, argparse.Namespace | None]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            return 0, "", PARSER.parse_args(argv)
        except SystemExit as exc:
            return exc.code, err.getvalue(), None


PICKS = st.lists(st.tuples(st.integers(0, 200), VALUE), max_size=4)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(sorted(LEAVES)), picks=PICKS)
def test_every_parser_gives_a_meaningful_namespace_or_one_line(command, picks):
    argv = argv_for(command, picks)
    code, err, ns = parse(argv)
    if ns is None:
        assert code == 2, (argv, code, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"attrib-audit {command.split()[0]}"), (argv, err)
        return
    for dest, ok in MEANING.items():
        value = getattr(ns, dest, None)
        if value is not None and not isinstance(value, str):
            assert ok(value), (argv, dest, value)


# Commands that stop at their first missing input (no server, no download, no simulation, no model load)
RUNNABLE = {"audit": ["nowhere.jsonl"], "score": ["nowhere.jsonl", "--out", "OUT/s.parquet"],
            "select": ["--results", "nowhere"], "systems": ["--results", "nowhere"],
            "threshold": ["--results", "nowhere", "--max-false-pass", "0.1"], "agree": ["--results", "nowhere"],
            "report": ["nowhere"], "plan": ["--results", "nowhere", "--half-width", "0.05"],
            "reproduce": ["--data-dir", "nowhere"], "sample": ["nowhere.jsonl", "--n", "10", "--out", "OUT/s.jsonl"]}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(command=st.sampled_from(sorted(RUNNABLE)), picks=PICKS)
def test_a_command_with_fuzzed_flags_ends_in_an_exit_code_and_one_line(command, picks, tmp_path):
    flags = [a for a in FLAGS[command] if a.dest not in ("auroc", "hf", "download", "config", "check", "port")]
    argv = [command, *RUNNABLE[command]]
    for i, value in picks:
        action = flags[i % len(flags)]
        argv += [action.option_strings[-1]] if action.nargs == 0 else [f"{action.option_strings[-1]}={value}"]
    argv = [a.replace("OUT", str(tmp_path)) for a in argv]
    err = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    assert time.perf_counter() - start < 20, argv
    assert code in (0, 1, 2, 3), (argv, code, err.getvalue())
    text = err.getvalue()
    assert "Traceback" not in text, (argv, text)
    if code:
        assert text.strip().splitlines()[-1].startswith("attrib-audit"), (argv, text)
