"""Every numeric option is checked for its meaning when the command line is parsed, before any file is read or any
pair scored: a value that would give a meaningless answer (a CI from one resample, a -100% interval, a plan for a
zero half-width) is exit 2 with one line naming the flag."""
from __future__ import annotations

import argparse

import pytest

from attrib_audit.cli.options import float_list, int_list
from cli_run import run_stderr as run

# (command line, what the one line says); no file named here exists, so a run that got past parsing would say so
REFUSED = [
    (["audit", "nowhere.jsonl", "--n-boot", "1"], "argument --n-boot: must be at least 10, not 1"),
    (["audit", "nowhere.jsonl", "--n-boot", "0"], "argument --n-boot: must be at least 10, not 0"),
    (["audit", "nowhere.jsonl", "--ci-level", "1.5"], "argument --ci-level: must be strictly between 0 and 1"),
    (["audit", "nowhere.jsonl", "--n-perm", "0"], "argument --n-perm: must be a positive integer"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--n-boot", "1"],
     "argument --n-boot: must be at least 10"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--sims", "0"],
     "argument --sims: must be a positive integer, not 0"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--sims", "-1"],
     "argument --sims: must be a positive integer, not -1"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0"], "argument --half-width: must be a"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "nan"], "argument --half-width: must be a fin"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--detect", "0"], "argument --detect: must be a positive"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--pairs-per-cluster", "-3"],
     "argument --pairs-per-cluster: must be a positive integer, not -3"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--grid=0"],
     "argument --grid: each value must be in [10, 20000], not 0"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--grid=-5"],
     "argument --grid: each value must be in [10, 20000], not -5"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--grid=1e9"],
     "argument --grid: must be integers separated by commas, not '1e9'"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--grid=1000000000"],
     "argument --grid: each value must be in [10, 20000], not 1000000000"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--grid=abc"],
     "argument --grid: must be integers separated by commas, not 'abc'"),
    (["plan", "--auroc", "0.8", "--prevalence", "0.3", "--half-width", "0.05", "--grid=100,"],
     "argument --grid: must be integers separated by commas, not '100,'"),
    (["plan", "--auroc", "0.5,", "--prevalence", "0.3", "--half-width", "0.05"],
     "argument --auroc: must be numbers separated by commas, not '0.5,'"),
    (["plan", "--auroc", "1.2", "--prevalence", "0.3", "--half-width", "0.05"],
     "argument --auroc: each value must be in [0.5, 1.0), not 1.2"),
    (["plan", "--auroc", "0.8", "--prevalence", "1", "--half-width", "0.05"],
     "argument --prevalence: must be strictly between 0 and 1, not 1"),
    (["reproduce", "--ci-level", "-1"], "argument --ci-level: must be strictly between 0 and 1, not -1"),
    (["reproduce", "--ci-level", "0"], "argument --ci-level: must be strictly between 0 and 1, not 0"),
    (["reproduce", "--ci-level", "1.5"], "argument --ci-level: must be strictly between 0 and 1, not 1.5"),
    (["reproduce", "--ci-level", "2"], "argument --ci-level: must be strictly between 0 and 1, not 2"),
    (["reproduce", "--ci-level", "nan"], "argument --ci-level: must be a finite number, not nan"),
    (["threshold", "--results", "nowhere", "--max-false-pass", "0"], "argument --max-false-pass: must be strictly"),
    (["threshold", "--results", "nowhere", "--max-false-pass", "0.1", "--delta", "1"], "argument --delta: must be"),
    (["threshold", "--results", "nowhere", "--max-false-pass", "0.1", "--ci-level", "0"], "argument --ci-level: must"),
    (["threshold", "--results", "nowhere", "--max-false-pass", "0.1", "--folds", "0"], "argument --folds: must be"),
    (["systems", "--results", "nowhere", "--ci-level", "-0.5"], "argument --ci-level: must be strictly between"),
    (["systems", "--results", "nowhere", "--n-boot", "3"], "argument --n-boot: must be at least 10, not 3"),
    (["agree", "--results", "nowhere", "--a", "x", "--b", "y", "--n-boot", "2"], "argument --n-boot: must be at least"),
]


@pytest.mark.parametrize("argv,says", REFUSED, ids=[" ".join(a[:1] + a[-2:]) for a, _ in REFUSED])
def test_a_meaningless_number_is_refused_at_the_flag(argv, says):
    code, err = run(argv)
    assert code == 2, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"attrib-audit {argv[0]}: error: ") and says in last, err


def test_list_types_are_strict():
    assert int_list(10, 100)(" 10, 20 ,30") == (10, 20, 30)
    assert float_list(0.5, 1.0, high_open=True)("0.5,0.9") == (0.5, 0.9)
    for bad in ("", ",", "10,,20", "10;20", "1_0x"):
        with pytest.raises(argparse.ArgumentTypeError):
            int_list(10, 100)(bad)


def test_a_double_dash_given_as_a_value_is_checked_as_one():
    """argparse stored [] for `--n-boot=--` (it took the value for the end of options), past every type check."""
    code, err = run(["audit", "nowhere.jsonl", "--n-boot=--"])
    assert code == 2 and "argument --n-boot: invalid n_boot_int value: '--'" in err
