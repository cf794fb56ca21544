"""Reproductions from the second adversarial round, each a command line that used to end in a traceback, a hang or a
silent wrong number, now one line (or the right number)."""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from attrib_audit.cli import main


def run(argv: list[str]) -> tuple[int, str, str]:
    """main(argv) in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def one_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


NOT_UTF8 = b"garbage\x00\xff\n"


def test_a_non_utf8_tsv_read_as_begin_is_one_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_bytes(NOT_UTF8)
    code, _, err = run(["audit", str(path), "--format", "begin", "--scorers", "lexical", "--no-cache", "--quiet",
                        "--out", str(tmp_path / "o")])
    assert code == 2
    assert one_line(err) == f"attrib-audit: data error: {path}: line 1 is not UTF-8 (byte 9 of the line)"


def test_a_non_utf8_tsv_under_reproduce_data_dir_is_one_line(tmp_path):
    for name in ("begin_dev_wow.tsv", "begin_test_wow.tsv"):
        (tmp_path / "begin").mkdir(exist_ok=True)
        (tmp_path / "begin" / name).write_bytes(NOT_UTF8)
    code, _, err = run(["reproduce", "--data-dir", str(tmp_path), "--tables", "10", "--n-boot", "20", "--no-cache",
                        "--quiet"])
    assert code == 2
    assert one_line(err).startswith(f"attrib-audit: data error: {tmp_path / 'begin' / 'begin_dev_wow.tsv'}: line 1 is "
                                    "not UTF-8")
