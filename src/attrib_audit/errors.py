"""The failures the command line turns into one line and an exit code, instead of a traceback.

Library code raises these typed errors; only `cli.main` prints them. Exit 2: the input
(a file, a flag, a folder) is wrong and the user must fix it; exit 3: a backend (a judge
server, a model) failed and rerunning later may succeed.
"""
from __future__ import annotations


class AuditError(Exception):
    """Base of the errors the CLI reports in one line."""

    exit_code = 1
    kind = "error"


class InputError(AuditError, ValueError):
    """Bad input: a data file, a flag value, an output folder, a cache file, a saved results folder."""

    exit_code = 2
    kind = "input error"


class BackendError(AuditError, RuntimeError):
    """A scoring backend failed (server down, refused, kept failing); finished work stays in the caches."""

    exit_code = 3
    kind = "backend error"


def one_line(text: str, limit: int = 2000) -> str:
    """Collapse whitespace (a message must not smuggle extra lines into a terminal or log) and cap the length."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
