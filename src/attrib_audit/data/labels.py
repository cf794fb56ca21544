"""Reading a label as 0/1: its own module so the row-by-row loader and the column-wise one (`columnar`) share it."""
from __future__ import annotations

import math
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
