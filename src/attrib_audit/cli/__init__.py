"""`attrib-audit` command line: the only layer that knows argparse, and a thin one.

`parser` builds the parser from the command modules (`audit`, `score`, `models`, `results`, `report`,
`probe`, `provenance`, `validate`); `options` holds the flags commands share; `convert` turns parsed
flags into the run spec and configurations the layers below take; `rerun` rebuilds the command line that
reruns an audit. `main` runs one command and turns a typed failure into one line and its exit code:
2 bad input, 3 a backend failed, 1 a check found differences, 130 interrupted.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from typing import Sequence

from attrib_audit.cli.parser import OUTPUT_FLAGS, build_parser
from attrib_audit.errors import AuditError, UsageError, one_line, terminal_text
from attrib_audit.files.outdir import command_outputs
from attrib_audit.scorers.judge.http import redact

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a typed failure (errors.AuditError) becomes one line on stderr and its exit code."""
    # a warning (a cache moved aside, a key over plain http) is one line too, not file:line plus source
    warnings.formatwarning = lambda message, category, *_a, **_k: f"attrib-audit: warning: {one_line(str(message))}\n"
    args = build_parser().parse_args(argv)
    real_stdout = sys.stdout
    sys.stdout = TerminalSafe(real_stdout)  # dataset names, judge replies: every printed line goes through it
    try:
        with command_outputs(input_paths(args), force=bool(getattr(args, "force", False))):
            return int(args.func(args) or 0)
    except AuditError as exc:  # a usage error names the command it was given to; the others their kind, if any
        where = (f"attrib-audit {args.command}" if isinstance(exc, UsageError) else
                 f"attrib-audit: {exc.kind}" if exc.kind else "attrib-audit")
        print(f"{where}: {_shown(args, exc)}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `attrib-audit ... | head` closed the pipe: stop quietly, print nothing more
        try:  # the interpreter's final flush of stdout must not raise again
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):  # stdout is no file (redirected in-process)
            pass
        return 141
    except KeyboardInterrupt:
        print("attrib-audit: interrupted; finished batches are in the cache, rerun to resume", file=sys.stderr)
        return 130
    finally:
        sys.stdout = real_stdout


class TerminalSafe:
    """stdout as the commands see it: text is written through errors.terminal_text, so no escape sequence a
    data file carries reaches the terminal; everything else (flush, fileno, isatty) is the real stream's."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(terminal_text(text))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def input_paths(args: argparse.Namespace) -> list[Path]:
    """Every existing file the command line names, except where it writes: the writer never writes onto them."""
    found = []
    for dest, value in vars(args).items():
        if dest in OUTPUT_FLAGS:
            continue
        for v in value if isinstance(value, list) else [value]:
            if not isinstance(v, str) or not v:
                continue
            # FILE, FILE:COLS (--scores), NAME=PATH (--model-path)
            for candidate in {v, v.partition(":")[0], v.partition("=")[2]}:
                if candidate and Path(candidate).is_file():
                    found.append(Path(candidate))
    return found


def _shown(args: argparse.Namespace, exc: BaseException) -> str:
    """The message as one line, with the value of every secret this command could hold replaced by ***."""
    names = {"ATTRIB_AUDIT_JUDGE_API_KEY", getattr(args, "judge_api_key_env", None) or ""}
    secrets = [os.environ[n] for n in names if n and len(os.environ.get(n, "")) >= 4]
    return one_line(redact(str(exc), secrets))


__all__ = ["build_parser", "main"]
