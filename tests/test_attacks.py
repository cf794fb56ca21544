"""Untrusted-input reproductions (sentence splitting, silent wrong numbers, tracebacks, terminal and server input):
each ran on main and gave a hang, a wrong number or a traceback; each is pinned here."""
from __future__ import annotations

import contextlib
import io
import json
import signal
from pathlib import Path

import numpy as np
import pytest

from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import load_pairs
from attrib_audit.stats.auroc import auroc, ht_auroc
from attrib_audit.text.sentences import split_sentences
from test_cli_fuzz import run


def pool_rows(n: int = 12, **extra) -> list[dict]:
    return [{"id": f"r{i}", "claim": f"claim {i}", "evidence": f"evidence {i}", "label": i % 2, **extra}
            for i in range(n)]


def write_jsonl(path: Path, rows: list[dict], bom: bool = False) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def test_abbreviation_run_splits_without_hanging() -> None:
    """Item 6: 'Dr. Smith ' * 8000 took 91 s (quadratic); a hang guard, not a timing (bench/bench_sentences.py)."""
    def stop(*_):
        raise TimeoutError("split_sentences hung on a run of abbreviations")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    try:
        assert split_sentences("Dr. Smith " * 8000) == [("Dr. Smith " * 8000).strip()]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_tiny_inclusion_probabilities_keep_the_auroc() -> None:
    """Item 7: two rows with π = 1e-200 (w = 1e200) overflowed w_i·w_j to inf and the AUROC became None."""
    s = np.array([0.1, 0.9, 0.2, 0.8])
    y = np.array([0, 1, 0, 1])
    w = np.array([1e200, 1e200, 1e200, 1e200])
    assert ht_auroc(s, y, w) == pytest.approx(auroc(s, y)) == 1.0


@pytest.mark.parametrize("value", [None, float("nan"), ""])
def test_null_or_nan_inclusion_prob_is_refused(tmp_path: Path, value) -> None:
    """Item 7: a null/NaN/empty inclusion_prob was read as π = 1; it is a broken sample, refused on its row."""
    rows = pool_rows(inclusion_prob=0.5)
    rows[3]["inclusion_prob"] = value
    with pytest.raises(DataError, match="inclusion_prob is"):
        load_pairs(write_jsonl(tmp_path / "s.jsonl", rows))
    assert load_pairs(write_jsonl(tmp_path / "pool.jsonl", pool_rows())).inclusion_probs is None
    # a pool written from PairRecord dicts carries the key as null on every row: still a whole pool
    assert load_pairs(write_jsonl(tmp_path / "nulls.jsonl", pool_rows(inclusion_prob=value))).inclusion_probs is None


def test_agree_threshold_nan_is_refused() -> None:
    """Item 7: `agree --threshold nan` gave κ = 0 (every comparison with NaN is false)."""
    code, err = run(["agree", "nowhere", "--a", "x", "--b", "y", "--threshold", "nan"])
    assert code == 2 and "--threshold" in err and "finite" in err


@pytest.mark.parametrize("argv", [
    ["audit", "x.jsonl", "--seed", "-1"], ["sample", "x.jsonl", "--seed", "-1"],
    ["plan", "x.jsonl", "--seed", "-1"], ["agree", "d", "--a", "x", "--b", "y", "--seed", "-1"],
])
def test_negative_seed_is_one_line(argv: list[str]) -> None:
    """Item 9: `--seed -1` ended in numpy's ValueError traceback."""
    code, err = run(argv)
    assert code == 2 and "--seed" in err and "non-negative" in err and "Traceback" not in err


def test_zero_bootstrap_resamples_is_one_line() -> None:
    """Item 9: `agree --n-boot 0` ended in a traceback."""
    code, err = run(["agree", "d", "--a", "x", "--b", "y", "--n-boot", "0"])
    assert code == 2 and "--n-boot" in err and "must be at least 10" in err


class ClosedPipe(io.StringIO):
    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_broken_pipe_exits_quietly() -> None:
    """Item 9: `attrib-audit ... | head` printed a BrokenPipeError traceback."""
    from attrib_audit.cli import main
    err = io.StringIO()
    with contextlib.redirect_stdout(ClosedPipe()), contextlib.redirect_stderr(err):
        code = main(["models", "list"])
    assert code == 141 and err.getvalue() == ""


def test_jsonl_with_a_bom_is_read(tmp_path: Path) -> None:
    """Item 10: a JSONL with a UTF-8 BOM was refused ('invalid JSON') while a CSV with one was accepted."""
    table = load_pairs(write_jsonl(tmp_path / "bom.jsonl", pool_rows(), bom=True))
    assert table.ids[0] == "r0" and len(table.ids) == 12


def test_label_server_takes_a_burst_of_posts(tmp_path: Path) -> None:
    """Item 10: the listen backlog was 5, so 70 concurrent posts got connection resets."""
    from attrib_audit.validate.label import LabelServer
    assert LabelServer.request_queue_size >= 128


def test_detect_on_a_constant_metric_is_refused() -> None:
    """Item 7: `plan --detect` on constant scores printed an impossible shift with power 1.00."""
    from attrib_audit.errors import UsageError
    from attrib_audit.validate.plan import EmpiricalPopulation
    y = np.array([0, 1] * 20)
    scores = np.vstack([np.full(40, 0.5), np.linspace(0, 1, 40)])
    pop = EmpiricalPopulation(scores, y, 0.5, None)
    with pytest.raises(UsageError, match="cannot set the runner-up"):
        pop.with_difference(1, 0, 0.05)


def test_gold_label_in_a_scores_file_is_not_a_metric(tmp_path: Path) -> None:
    """Item 7: `--scores FILE` with a `label` column audited the gold label as a metric (AUROC 1.000, silent)."""
    from attrib_audit.external.sources import parse_scores_arg
    f = tmp_path / "scores.jsonl"
    write_jsonl(f, [{"id": f"r{i}", "label": i % 2, "m": i / 10} for i in range(10)])
    lines: list[str] = []
    picked, _ = parse_scores_arg(str(f), log=lines.append)
    assert [s.name for s in picked] == ["m"] and any("label left out" in m for m in lines)


def test_dataset_names_reach_the_terminal_inert(tmp_path: Path) -> None:
    """Item 10: a dataset name with an ANSI escape was printed raw (it can recolour, retitle or clear a terminal)."""
    from attrib_audit.cli import main
    rows = [{**r, "dataset": "\x1b[2J\x1b]0;pwned\x07evil"} for r in pool_rows(20)]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", str(write_jsonl(tmp_path / "d.jsonl", rows)), "--scorers", "lexical", "--n-boot", "50",
                     "--n-perm", "50", "--no-cache", "--quiet", "--out", str(tmp_path / "a")])
    assert code == 0 and "evil" in out.getvalue()
    assert "\x1b" not in out.getvalue() + err.getvalue() and "\x07" not in out.getvalue()
    assert "\\x1b[2J" in out.getvalue()
