"""Reading a label as 0/1, a graded rating, and a label derived from a rating: its own module so the row-by-row
loader and the column-wise one (`columnar`) share it."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from attrib_audit.data.errors import DataError

# Values accepted as binary labels without an explicit mapping. Strings like
# "attributable" are deliberately absent: they need --label-map, so a mapping is never guessed.
_IMPLICIT_LABELS: dict[Any, int] = {0: 0, 1: 1, "0": 0, "1": 1, "true": 1, "false": 0}  # True == 1, False == 0 as keys


def parse_label(value: Any, label_map: Mapping[str, int] | None, *, path: str, row: int, field: str) -> int:
    """Map a raw label to 0/1: explicit mapping first, then only unambiguous binary values."""
    if label_map is not None:
        key = str(value).strip().lower() if value is not None else None
        lowered = {str(k).strip().lower(): int(v) for k, v in label_map.items()}
        if key in lowered:
            return lowered[key]
    if isinstance(value, float):
        if math.isnan(value):
            raise DataError("label is missing (NaN)", path=path, row=row, field=field)
        if value in (0.0, 1.0):
            return int(value)
    if isinstance(value, (np.integer, np.bool_)):
        value = value.item()
    if isinstance(value, str):
        value = value.strip().lower()
    if value is None or value == "":
        raise DataError("label is missing", path=path, row=row, field=field)
    try:
        return _IMPLICIT_LABELS[value]
    except (KeyError, TypeError):
        pass
    hint = " (pass --label-map, e.g. 'attributable=1,not attributable=0')" if isinstance(value, str) else ""
    raise DataError(f"label {value!r} is not 0/1 or true/false{hint}", path=path, row=row, field=field)


_CUT = re.compile(r"^\s*(>=|<=|==|>|<)\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
_OPS = {">=": np.greater_equal, "<=": np.less_equal, "==": np.equal, ">": np.greater, "<": np.less}


@dataclass(frozen=True)
class RatingCut:
    """How a binary label is derived from a graded rating, only when asked (`--label-from-rating '>=5'`):
    label 1 where `rating OP value` holds."""

    op: str
    value: float

    @classmethod
    def parse(cls, text: str) -> "RatingCut":
        """Parse `OP NUMBER` with OP among >=, <=, ==, >, <.

        Raises:
            ValueError: anything else (a bare number, a word, NaN or infinity).
        """
        m = _CUT.match(text) if isinstance(text, str) else None
        if m is None:
            raise ValueError(f"--label-from-rating {text!r}: expected OP NUMBER with OP among >=, <=, ==, >, < "
                             "(e.g. '>=5' or '==1')")
        return cls(op=m.group(1), value=float(m.group(2)))

    def __str__(self) -> str:
        return f"{self.op}{self.value:g}"

    def apply(self, ratings: np.ndarray) -> np.ndarray:
        """The derived 0/1 labels of `ratings`."""
        return _OPS[self.op](np.asarray(ratings, dtype=np.float64), self.value).astype(np.int8)


def parse_rating(value: Any, *, path: str, row: int, field: str) -> float:
    """A graded human rating: any finite number (higher = better supported); a numeric string is read as one.

    Raises:
        DataError: missing, text, a boolean, NaN or ±inf, naming file, row and field.
    """
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        value = value.item()
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list, tuple, bytes)):
        what = "missing" if value is None else f"{value!r}, not a number"
        raise DataError(f"rating is {what}", path=path, row=row, field=field)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise DataError("rating is missing", path=path, row=row, field=field)
        try:
            number = float(text)
        except ValueError:
            raise DataError(f"rating {value!r} is not a number", path=path, row=row, field=field) from None
    elif isinstance(value, (int, float)):
        number = float(value)
    else:
        raise DataError(f"rating {value!r} is not a number", path=path, row=row, field=field)
    if not math.isfinite(number):
        raise DataError(f"rating {value!r} is not a finite number", path=path, row=row, field=field)
    return number
