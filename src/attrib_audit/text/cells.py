"""The one reading of a text cell from a data file: a string stays, a number becomes its text, and an empty
cell (None, NaN, pandas' NA) becomes None, so a missing value is never the text 'nan'."""
from __future__ import annotations

from typing import Any


def missing(value: Any) -> bool:
    """None or a NaN-like value (NaN != NaN); containers, which compare elementwise, are not missing."""
    try:
        return value is None or bool(value != value)
    except (TypeError, ValueError):
        return False


def cell_text(value: Any) -> str | None:
    if type(value) is str:  # the common cell, never missing: skip the NaN test (a load reads 5 cells per row)
        return value
    if missing(value):
        return None
    return value if isinstance(value, str) else str(value)
