"""Errors a user can fix from the message alone; the CLI prints them in one line and exits 2.

Library functions raise these (never SystemExit), so Python callers can catch them.
"""
from __future__ import annotations


class UsageError(ValueError):
    """A request the inputs cannot satisfy: a missing audit folder, an unknown construct or scorer."""
