"""The failures the command line turns into one line and an exit code, instead of a traceback.

Library code raises these typed errors; only `cli.main` prints them. Exit 2: the input
(a file, a flag, a folder) is wrong and the user must fix it; exit 3: a backend (a judge
server, a model) failed and rerunning later may succeed.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator


class AuditError(Exception):
    """Base of the errors the CLI reports in one line: `attrib-audit: KIND: message` and exit `exit_code` (a
    message that names its own source, like a plugin's, has the empty kind and shows none)."""

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


class UsageError(InputError):
    """A request the inputs cannot satisfy: a missing audit folder, an unknown construct or scorer."""

    kind = "error"


# C0/C1 control characters but tab and newline: an ESC from a dataset name would drive the user's terminal
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(text: str) -> str:
    """Text from data made inert for a terminal: each control character (ESC, CR, BEL...) shown as `\\xNN`."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def one_line(text: str, limit: int = 2000) -> str:
    """Collapse whitespace (a message must not smuggle extra lines into a terminal or log), show control
    characters inert (terminal_text) and cap the length."""
    flat = terminal_text(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# what reading a value of the wrong shape out of parsed JSON raises
LAYOUT_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)


@contextmanager
def saved_layout(path: object, reader: str) -> Iterator[None]:
    """Around the code that reads fields of a saved file (results.json, ...): a missing field or a value of the
    wrong type means the file is not what attrib-audit wrote (edited, truncated, crafted), which is bad input."""
    try:
        yield
    except AuditError:
        raise
    except LAYOUT_ERRORS as exc:
        raise InputError(f"{path} does not have the layout {reader} reads ({type(exc).__name__}: "
                         f"{one_line(str(exc), 160)})") from None


class SpecError(InputError):
    """A run spec (or part of one) that cannot run; the message names the field (and the file, when read from one)."""

    kind = "error"
