"""Reading a label as 0/1, a graded rating, and a label derived from a rating: one reader the row-by-row
loader and the column-wise one (`columnar`) share, so a label means the same whatever its JSON type (int,
float, bool, string) and whichever reader met it."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from attrib_audit.data.errors import DataError

# Values accepted as binary labels without an explicit mapping, by canonical key (see `label_key`). Strings like
# "attributable" are deliberately absent: they need --label-map, so a mapping is never guessed.
_IMPLICIT_LABELS: dict[str, int] = {"0": 0, "1": 1, "true": 1, "false": 0}
_BOOL_AS_NUMBER = {"true": "1", "false": "0"}


def label_key(value: Any) -> str | None:
    """The canonical text of a raw label, or None when it is missing (None, NaN, blank).

    A number is spelt by its value (1, 1.0, "1", "1.0" and numpy's 1 are all "1"), a bool as "true"/"false", any
    other string stripped and lower-cased; so a label and a --label-map key compare equal when they mean the same.
    """
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            return None
        return str(int(v)) if v.is_integer() else repr(v)
    text = str(value).strip().lower()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() else (repr(number) if math.isfinite(number) else text)


def canonical_label_map(label_map: Mapping[Any, int] | None) -> dict[str, int] | None:
    """A --label-map keyed by `label_key`, so '1.0=0' and '1=0' are one entry."""
    if label_map is None:
        return None
    return {k: int(v) for k, v in ((label_key(k), v) for k, v in label_map.items()) if k is not None}


def parse_label(value: Any, label_map: Mapping[Any, int] | None, *, path: str, row: int, field: str) -> int:
    """Map a raw label to 0/1: the explicit mapping first (a bool also by its number, so '1=0' maps true), then only
    unambiguous binary values.

    Raises:
        DataError: the label is missing or neither mapped nor binary.
    """
    key = label_key(value)
    if key is None:
        nan = isinstance(value, (float, np.floating)) and math.isnan(float(value))
        raise DataError("label is missing (NaN)" if nan else "label is missing", path=path, row=row, field=field)
    mapping = canonical_label_map(label_map) or {}
    for k in (key, _BOOL_AS_NUMBER.get(key) if isinstance(value, (bool, np.bool_)) else None):
        if k is not None and k in mapping:
            return mapping[k]
    if key in _IMPLICIT_LABELS:
        return _IMPLICIT_LABELS[key]
    shown = value.strip().lower() if isinstance(value, str) else (
        value.item() if isinstance(value, np.generic) else value)
    hint = " (pass --label-map, e.g. 'attributable=1,not attributable=0')" if isinstance(value, str) else ""
    raise DataError(f"label {shown!r} is not 0/1 or true/false{hint}", path=path, row=row, field=field)


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
