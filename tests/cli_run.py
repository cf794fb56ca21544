"""The CLI run in the test's own process, as a user's shell would see it: the exit code whether `main` returned or
argparse raised SystemExit, and what it printed."""
from __future__ import annotations

import contextlib
import io

from attrib_audit.cli import main


def run_main(argv: list[str]) -> tuple[int, str, str]:
    """main(argv) in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def run_stderr(argv: list[str]) -> tuple[int, str]:
    """main(argv) in this process: (exit code, stderr), stdout discarded."""
    code, _, err = run_main(argv)
    return code, err
