"""Data errors (exit 2) that name the file, the row and the field, so a user can fix the input."""
from __future__ import annotations

from attrib_audit.errors import InputError


class DataError(InputError):
    kind = "data error"

    def __init__(self, message: str, *, path: str | None = None, row: int | None = None, field: str | None = None):
        self.path, self.row, self.field, self.reason = path, row, field, message
        where = []
        if path:
            where.append(str(path))
        if row is not None:
            where.append(f"row {row}")
        if field:
            where.append(f"field {field!r}")
        super().__init__(f"{': '.join([', '.join(where)] if where else [])}{': ' if where else ''}{message}")
