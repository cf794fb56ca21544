"""Frozen dataclasses as plain JSON and back: one writer and one checked reader for every saved record.

A result's dataclass is its schema. `to_record` writes its fields in order through the one sanitiser
(files.jsonfile.plain: NaN/inf → null, numpy → Python, tuples → lists); `from_record` rebuilds it from parsed
JSON, checking each value against the field's type hint, and says in one line which file and key holds what.
A float field reads null back as NaN (that is how NaN is written). Field metadata shapes the JSON where it
differs from the fields:

- `{"json": "name"}`: the key's name in JSON;
- `{"omit": True}`: not written (read back as its default);
- `{"skip_default": True}`: not written while it holds its default (NaN equals NaN here);
- `{"inline": True}`: a nested record's keys written into this object (read back from it);
- `{"strict": True}`: the part is read as a file a person writes (see `from_record`'s `strict`), e.g. the run spec
  results.json records, which `audit --check` runs again.

A class may list properties written after its fields in `record_derived` (a ClassVar); they are not read back.

A union of record classes (`A | B`) reads an object as the first arm, in the union's order, whose required keys
(fields without a default) the object all has; list the more specific kinds first. When no arm's keys are all
there, the error names the first missing key of the arm that lacks fewest.
"""
from __future__ import annotations

import dataclasses
import enum
import math
import sys
import types
import typing
from collections import abc
from typing import Any, Callable, ClassVar, Mapping, TypeVar, Union

import numpy as np

from attrib_audit.errors import AuditError, InputError
from attrib_audit.files.jsonfile import plain

T = TypeVar("T")

DERIVED = "record_derived"  # the ClassVar naming the properties a record writes after its fields


def to_record(obj: Any) -> Any:
    """`obj` as plain JSON data: a dataclass becomes an object of its fields (see the module's metadata keys),
    lists, tuples, mappings, numpy values and enums become their plain JSON form, NaN/inf become null."""
    return plain(_unpack(obj))


def _unpack(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.metadata.get("omit") or (f.metadata.get("skip_default") and _is_default(f, value)):
                continue
            if f.metadata.get("inline"):
                out.update(_unpack(value))
            else:
                out[f.metadata.get("json", f.name)] = _unpack(value)
        for name in getattr(type(obj), DERIVED, ()):
            out[name] = _unpack(getattr(obj, name))
        return out
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, Mapping):
        return {k: _unpack(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_unpack(v) for v in obj]
    return obj


def _is_default(f: dataclasses.Field[Any], value: Any) -> bool:
    default = f.default if f.default is not dataclasses.MISSING else (
        f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
    if isinstance(default, float) and isinstance(value, float) and math.isnan(default):
        return math.isnan(value)
    return bool(default is not dataclasses.MISSING and value == default)


def from_record(cls: type[T], data: Any, *, where: str = "record", key: str = "",
                error: type[AuditError] = InputError, strict: bool = False) -> T:
    """The `cls` record `data` (parsed JSON) holds, each field checked against its type hint.

    Args:
        cls: a dataclass whose fields are JSON types, Optional/Union, Literal, enums, tuples, lists, str-keyed dicts,
            numpy arrays (lists of numbers, null for NaN) or nested dataclasses. A union of records is told apart by
            their required keys (the first whose required keys are all present is read).
        data: what json.loads gave for it.
        where: the file (or other source) named in an error.
        key: the key path of `data` in that file, for errors (empty: the top level).
        error: the error type raised.
        strict: read `data` as a file a person writes (a run spec), where nothing may pass unnoticed: a key that is
            not a field is refused, listing the valid ones; a plain value (not a record) of the wrong type is first
            offered to the record's own check (`__post_init__`), whose AuditError, naming the field from the top of
            `data` (``data.construct: expected a string, got 5``), is the answer; errors name the key path as the
            person wrote it and the type they gave (``spec.toml: stats: unknown key n_boots; valid: n_boot, ...``,
            ``spec.toml: precomputed: expected a list, got str``); a whole number for a float stays as written and
            null is not NaN.

    Returns:
        The record, built by keyword; unless `strict`, keys of `data` that are not fields (derived values, newer
        keys) are ignored.

    Raises:
        error: one line naming `where` and the key path, e.g. ``results.json: key 'systems.slices[0].design':
            expected an object, got null``.
    """
    reader = _Strict(where, error, root=key) if strict else _Reader(where, error)
    return reader.read(cls, data, key)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number" if _fits_float(value) else "a number beyond float range"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """A record class's resolved field types (annotations are strings under `from __future__ import annotations`)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _json_names(cls: type) -> set[str]:
    """The keys a record of `cls` may write (inline parts' keys included)."""
    return set(_key_order(cls))


def _key_order(cls: type) -> list[str]:
    """The keys a record of `cls` may write, in the order it writes them."""
    out: list[str] = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("inline"):
            out += [n for a in (_hints(cls)[f.name], *typing.get_args(_hints(cls)[f.name]))
                    if dataclasses.is_dataclass(a) and isinstance(a, type) for n in _key_order(a)]
        elif not f.metadata.get("omit"):
            out.append(f.metadata.get("json", f.name))
    return list(dict.fromkeys(out))


def _holds_records(hint: Any) -> bool:
    """Whether a field of this type holds records (in a list, a dict or a union too)."""
    return (dataclasses.is_dataclass(hint) and isinstance(hint, type)) or any(
        _holds_records(a) for a in typing.get_args(hint))


def _required(cls: type) -> set[str]:
    """The keys an object must have to be read as `cls`: its fields without a default (a required inline part's
    own required keys included)."""
    out: set[str] = set()
    for f in dataclasses.fields(cls):
        if (not f.init or f.metadata.get("omit") or f.default is not dataclasses.MISSING
                or f.default_factory is not dataclasses.MISSING):
            continue
        if f.metadata.get("inline"):
            parts = [a for a in (_hints(cls)[f.name], *typing.get_args(_hints(cls)[f.name]))
                     if dataclasses.is_dataclass(a) and isinstance(a, type)]
            out |= _required(parts[0]) if len(parts) == 1 else set()
        else:
            out.add(f.metadata.get("json", f.name))
    return out


def _missing(cls: type, data: Mapping[str, Any]) -> list[str]:
    """`cls`'s required keys that `data` lacks, in field order."""
    need = _required(cls)
    return [n for n in _key_order(cls) if n in need and n not in data]


class _Mismatch(Exception):
    """A value that does not fit a type: what was expected, at which key path."""

    def __init__(self, key: str, expected: str, got: Any) -> None:
        super().__init__(key, expected)
        self.key, self.expected, self.got = key, expected, got


class _Reader:
    """Reads records attrib-audit wrote: a value of the wrong type is refused where it is met, unknown keys are
    ignored."""

    strict = False

    def __init__(self, where: str, error: type[AuditError]) -> None:
        self.where, self.error = where, error

    def read(self, hint: Any, data: Any, key: str) -> Any:
        try:
            return self._value(hint, data, key)
        except _Mismatch as exc:
            raise self.error(self._mismatch(exc)) from None

    def _mismatch(self, exc: _Mismatch) -> str:
        at = f"key '{exc.key}'" if exc.key else "the top level"
        return f"{self.where}: {at}: expected {exc.expected}, got {_json_kind(exc.got)}"

    def _missing(self, key: str) -> str:
        return f"{self.where}: key '{key}' is missing"

    def _refused(self, key: str, exc: Exception) -> str:
        """A record's own check (`__post_init__`) refused the values it was given."""
        return f"{self.where}: key '{key or '(top level)'}': {exc}"

    def _own(self, key: str, exc: AuditError) -> str:
        """A record's own check raised its own one-line error."""
        return self._refused(key, exc)

    def _unknown(self, cls: type, data: Mapping[str, Any], key: str) -> None:
        """Keys that are not fields (derived values, keys of a newer version) are ignored."""

    def _record(self, cls: type[T], data: Any, key: str) -> T:
        if not isinstance(data, Mapping):
            raise _Mismatch(key, "an object", data)
        self._unknown(cls, data, key)
        hints = _hints(cls)
        kwargs: dict[str, Any] = {}
        wrong: list[_Mismatch] = []  # strict: plain values that fit no hint, offered to the record's own check first
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            if not f.init:
                continue
            if f.metadata.get("inline"):
                nested = [a for a in typing.get_args(hints[f.name])
                          if dataclasses.is_dataclass(a) and isinstance(a, type)]
                if nested and not any(_json_names(nested[0]) & set(data)):  # an optional part that is absent
                    continue
                kwargs[f.name] = self._value(hints[f.name], data, key)
                continue
            name = f.metadata.get("json", f.name)
            here = f"{key}.{name}" if key else name
            if f.metadata.get("omit") or name not in data:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise self.error(self._missing(here))
                continue
            if f.metadata.get("strict") and not self.strict:
                kwargs[f.name] = _Strict(self.where, self.error, root=here).read(hints[f.name], data[name], here)
                continue
            try:
                kwargs[f.name] = self._value(hints[f.name], data[name], here)
            except _Mismatch as exc:
                if not self.strict or _holds_records(hints[f.name]):  # a part's shape: the reader's to say
                    raise
                wrong.append(exc)
                kwargs[f.name] = data[name]
        try:
            record = cls(**kwargs)
        except AuditError as exc:
            raise self.error(self._own(key, exc)) from None
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            if wrong:  # the check tripped over a value of the wrong type: the type is the answer
                raise wrong[0] from None
            if not isinstance(exc, (ValueError, TypeError)):
                raise
            raise self.error(self._refused(key, exc)) from None
        if wrong:  # the record's own check let it pass: its type hint does not
            raise wrong[0]
        return record

    def _value(self, hint: Any, value: Any, key: str) -> Any:
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if hint is Any:
            return value
        if origin in (Union, types.UnionType):
            return self._union(args, value, key)
        if origin is typing.Literal:
            if value in args and not isinstance(value, bool):
                return value
            raise _Mismatch(key, "one of " + ", ".join(repr(a) for a in args), value)
        if origin is ClassVar:
            return value
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            return self._record(hint, value, key)
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            try:
                return hint(value)
            except ValueError:
                raise _Mismatch(key, "one of " + ", ".join(repr(m.value) for m in hint), value) from None
        if origin in (tuple, list) or hint in (tuple, list):
            if not isinstance(value, list):
                raise _Mismatch(key, "a list", value)
            if origin is tuple and args and args[-1] is not Ellipsis:
                if len(value) != len(args):
                    raise _Mismatch(key, f"a list of {len(args)}", value)
                return tuple(self._value(a, v, f"{key}[{i}]") for i, (a, v) in enumerate(zip(args, value)))
            item = args[0] if args else Any
            out = [self._value(item, v, f"{key}[{i}]") for i, v in enumerate(value)]
            return tuple(out) if (origin or hint) is tuple else out
        if origin in (dict, abc.Mapping) or hint is dict:
            if not isinstance(value, Mapping):
                raise _Mismatch(key, "an object", value)
            item = args[1] if len(args) == 2 else Any
            return {k: self._value(item, v, f"{key}.{k}") for k, v in value.items()}
        if hint is np.ndarray:
            return self._array(value, key)
        return self._scalar(hint, value, key)

    def _union(self, args: tuple[Any, ...], value: Any, key: str) -> Any:
        if value is None and type(None) in args:
            return None
        arms = [a for a in args if a is not type(None)]
        first: _Mismatch | None = None
        lacking: list[tuple[int, str]] = []  # per record arm the object does not fit: (keys missing, the first)
        for arm in arms:
            if isinstance(value, Mapping) and dataclasses.is_dataclass(arm) and isinstance(arm, type):
                missing = _missing(arm, value)
                if missing:  # not this kind of record: try the next arm
                    lacking.append((len(missing), missing[0]))
                    continue
            try:
                return self._value(arm, value, key)
            except _Mismatch as exc:
                if exc.key != key:  # the value had the arm's shape but something inside it is wrong
                    raise
                first = first or exc
        if lacking:  # an object, but none of the record kinds: name the key the nearest one lacks
            name = min(lacking, key=lambda t: t[0])[1]
            raise self.error(f"{self.where}: key '{f'{key}.{name}' if key else name}' is missing")
        expected = " or ".join(dict.fromkeys(_describe(a) for a in args))
        raise _Mismatch(key, expected, value) from first

    @staticmethod
    def _array(value: Any, key: str) -> np.ndarray:
        if not isinstance(value, list) or not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                                                  for v in value):
            raise _Mismatch(key, "a list of numbers", value)
        if not all(_fits_float(v) for v in value):
            raise _Mismatch(key, "a list of numbers within float range", value)
        if value and all(isinstance(v, int) and _INT64.min <= v <= _INT64.max for v in value):
            return np.asarray(value, dtype=np.int64)
        return np.asarray([np.nan if v is None else v for v in value], dtype=np.float64)

    def _scalar(self, hint: Any, value: Any, key: str) -> Any:
        checks: dict[Any, tuple[str, Callable[[Any], bool]]] = {
            bool: ("a boolean", lambda v: isinstance(v, bool)),
            int: ("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool)),
            float: ("a number", lambda v: (v is None and not self.strict)  # null: how attrib-audit writes NaN
                    or (isinstance(v, (int, float)) and not isinstance(v, bool))),
            str: ("a string", lambda v: isinstance(v, str)),
            type(None): ("null", lambda v: v is None),
        }
        if hint not in checks:
            raise TypeError(f"from_record cannot read a field of type {hint!r}")
        expected, ok = checks[hint]
        if not ok(value):
            raise _Mismatch(key, expected, value)
        if hint is float:
            if not _fits_float(value):
                raise _Mismatch(key, "a number", value)
            if self.strict and isinstance(value, int):  # a whole number stays as the person wrote it
                return value
            return math.nan if value is None else float(value)
        return value


class _Strict(_Reader):
    """Reads a file a person writes (a run spec): unknown keys are refused, a value of the wrong type is first offered
    to the record's own check, and errors name the key path as written (`FILE: stats.n_boot: ...`)."""

    strict = True

    def __init__(self, where: str, error: type[AuditError], root: str = "") -> None:
        super().__init__(where, error)
        self.root = root  # the key path of the part read strictly: its records' own checks name fields from there
        self.seen: list[Mapping[str, Any]] = []  # the objects whose keys were checked

    def _at(self, key: str) -> str:
        return f"{self.where}: {key}" if key else self.where

    def _mismatch(self, exc: _Mismatch) -> str:
        got = exc.got
        kind = "dict" if isinstance(got, Mapping) else "list" if isinstance(got, (list, tuple)) else type(got).__name__
        return f"{self._at(exc.key)}: expected {exc.expected}, got {kind}"  # the names a Python reader of JSON knows

    def _missing(self, key: str) -> str:
        return f"{self._at(key)}: missing (it has no default)"

    def _refused(self, key: str, exc: Exception) -> str:
        return f"{self._at(key)}: {exc}"

    def _own(self, key: str, exc: AuditError) -> str:
        return f"{self.where}: {self.root}.{exc}" if self.root else f"{self.where}: {exc}"

    def _unknown(self, cls: type, data: Mapping[str, Any], key: str) -> None:
        if any(data is seen for seen in self.seen):  # an inline part: its keys were checked with its record's
            return
        self.seen.append(data)
        valid = _key_order(cls)
        unknown = sorted(str(k) for k in set(data) - set(valid))
        if unknown:
            raise self.error(f"{self._at(key)}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                             f"valid: {', '.join(valid)}")


_INT64 = np.iinfo(np.int64)


def _fits_float(value: Any) -> bool:
    """Whether a JSON number (or null) converts to a float: JSON integers are unbounded, floats are not."""
    return not isinstance(value, int) or abs(value) <= sys.float_info.max


def _describe(hint: Any) -> str:
    if hint is type(None):
        return "null"
    if dataclasses.is_dataclass(hint) or typing.get_origin(hint) in (dict, abc.Mapping) or hint is dict:
        return "an object"
    if typing.get_origin(hint) in (list, tuple) or hint in (list, tuple, np.ndarray):
        return "a list"
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    return names.get(hint, getattr(hint, "__name__", str(hint)))
