"""JSON files attrib-audit writes and reads back.

`plain` is the one sanitiser: numpy scalars and arrays, tuples and non-string keys become plain JSON, and
NaN/inf become null, so a missing value is never written as a number. `sealed_json` writes an object with a
`digest` of its content: a reader can tell a file as attrib-audit wrote it (a value of the wrong type there is
a bug in the reader) from one edited or made elsewhere (bad input). `read_json` is the one reader of a saved
JSON object; a key missing from what it returns raises LayoutError, so a reader of a saved file can tell "this
file lacks a key" from a bug of its own.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from attrib_audit.errors import InputError

_SURROGATE = re.compile("[\ud800-\udfff]")


def plain(obj: Any) -> Any:
    """Plain JSON data: NaN/inf → None, numpy scalars/arrays and tuples → Python, keys → strings (order kept)."""
    if isinstance(obj, Mapping):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return plain(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer, int)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else None
    return obj


def sealed_json(obj: Mapping[str, Any]) -> str:
    """`obj` as plain, indented JSON with a `digest` of its content (any earlier digest replaced)."""
    data = plain({k: v for k, v in obj.items() if k != "digest"})
    return json.dumps({**data, "digest": _digest(data)}, indent=2, allow_nan=False)


def _digest(data: dict) -> str:
    canon = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return "sha256:" + hashlib.sha256(canon.encode()).hexdigest()


def is_sealed(data: Any) -> bool:
    """Whether parsed JSON is unchanged since sealed_json wrote it."""
    if not isinstance(data, dict) or not isinstance(data.get("digest"), str):
        return False
    try:
        return data["digest"] == _digest({k: v for k, v in data.items() if k != "digest"})
    except (TypeError, ValueError):
        return False


class LayoutError(KeyError):
    """A key a reader needs is missing from a saved file: the file's layout, not a bug in the reader."""

    def __str__(self) -> str:
        return f"missing key {self.args[0]!r}"


class SavedDict(dict[str, Any]):
    """A JSON object read from a saved file; a missing key raises LayoutError, so only that (not any KeyError,
    TypeError or AttributeError of the reading code) says the file is not what the reader expects."""

    def __missing__(self, key: str) -> Any:
        raise LayoutError(key)


def read_json(path: str | Path, error: type[InputError] = InputError) -> SavedDict:
    """The JSON object saved at `path`; one line naming the file (as `error`) when it cannot be read or parsed."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"), object_hook=SavedDict)
        where = lone_surrogate(data)
    except json.JSONDecodeError as exc:
        raise error(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: cannot read ({exc})") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to be a file attrib-audit wrote") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from None
    if not isinstance(data, SavedDict):  # object_hook makes every JSON object one
        raise error(f"{path}: expected a JSON object at the top level, found {type(data).__name__}")
    if where is not None:
        raise error(f"{path}, field '{where}': holds an escaped lone surrogate (\\ud800-\\udfff), which UTF-8 "
                    "text cannot carry; the file was not written by attrib-audit")
    return data


def lone_surrogate(obj: Any, where: str = "") -> str | None:
    """The field (dotted path) of parsed JSON whose key or text holds a lone surrogate (`"\\udc80"`), or None:
    such a string cannot be printed or written as UTF-8, so a reader would fail far from the file. (json decodes
    an escaped surrogate pair to its one character, so only lone ones are found here.)"""
    if isinstance(obj, str):
        return (where or "(top level)") if _SURROGATE.search(obj) else None
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        here = f"{where}[{k}]" if isinstance(k, int) else f"{where}.{k}" if where else str(k)
        if isinstance(k, str) and _SURROGATE.search(k):
            return here.encode("utf-8", "backslashreplace").decode()
        found = lone_surrogate(v, here)
        if found is not None:
            return found
    return None
