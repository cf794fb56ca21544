"""files.records: dataclasses to plain JSON and back, every value checked, errors in one line naming file and key."""
from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Mapping

import numpy as np
import pytest

from attrib_audit.errors import InputError, UsageError
from attrib_audit.files.records import from_record, to_record


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Inner:
    estimate: float
    n: int


@dataclass(frozen=True)
class Extra:
    note: str | None
    count: int


@dataclass(frozen=True, eq=False)
class Outer:
    name: str
    kind: Literal["a", "b"]
    colour: Colour
    inner: Inner = field(metadata={"json": "est"})
    pairs: tuple[tuple[str, int], ...]
    by_key: dict[str, Inner]
    values: np.ndarray
    maybe: Inner | None
    hidden: int = field(default=7, metadata={"omit": True})
    spare: float = field(default=float("nan"), metadata={"skip_default": True})
    extra: Extra | None = field(default=None, metadata={"inline": True, "skip_default": True})
    record_derived: ClassVar[tuple[str, ...]] = ("double",)

    @property
    def double(self) -> float:
        return 2 * self.inner.estimate


def _outer(**changes: object) -> Outer:
    base: dict[str, object] = {
        "name": "x", "kind": "a", "colour": Colour.BLUE, "inner": Inner(estimate=float("nan"), n=3),
        "pairs": (("p", 1), ("q", 2)), "by_key": {"k": Inner(estimate=0.5, n=1)},
        "values": np.array([0.25, np.nan, np.inf]), "maybe": None}
    return Outer(**{**base, **changes})  # type: ignore[arg-type]


def test_to_record_is_plain_json_in_field_order_with_the_metadata_applied():
    rec = to_record(_outer(extra=Extra(note=None, count=2)))
    assert list(rec) == ["name", "kind", "colour", "est", "pairs", "by_key", "values", "maybe", "note", "count",
                         "double"]
    assert rec["est"] == {"estimate": None, "n": 3} and rec["double"] is None  # NaN is written as null
    assert rec["colour"] == "blue" and rec["pairs"] == [["p", 1], ["q", 2]] and rec["values"] == [0.25, None, None]
    json.dumps(rec, allow_nan=False)
    assert "spare" not in rec and "hidden" not in rec
    assert to_record(_outer(spare=0.5))["spare"] == 0.5  # written once it is not its default


def test_from_record_reads_back_what_to_record_wrote():
    before = _outer(extra=Extra(note="n", count=2), maybe=Inner(estimate=1.0, n=2), spare=0.5)
    back = from_record(Outer, json.loads(json.dumps(to_record(before))), where="f.json")
    assert math.isnan(back.inner.estimate) and back.inner.n == 3 and back.colour is Colour.BLUE
    assert back.pairs == (("p", 1), ("q", 2)) and isinstance(back.pairs, tuple)
    assert back.by_key == {"k": Inner(estimate=0.5, n=1)} and back.maybe == Inner(estimate=1.0, n=2)
    assert back.values.tolist()[0] == 0.25 and np.isnan(back.values[1:]).all()
    assert back.extra == Extra(note="n", count=2) and back.spare == 0.5 and back.hidden == 7
    assert to_record(back) == to_record(before)
    assert from_record(Outer, to_record(_outer()), where="f.json").extra is None  # an absent inline part


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.update(est=None), "key 'est': expected an object, got null"),
    (lambda r: r["est"].update(n=1.5), "key 'est.n': expected an integer, got a number"),
    (lambda r: r["est"].update(n=True), "key 'est.n': expected an integer, got a boolean"),
    (lambda r: r.update(kind="c"), "key 'kind': expected one of 'a', 'b', got a string"),
    (lambda r: r.update(colour="green"), "key 'colour': expected one of 'red', 'blue', got a string"),
    (lambda r: r["pairs"].__setitem__(1, ["q"]), "key 'pairs[1]': expected a list of 2, got a list"),
    (lambda r: r["by_key"]["k"].update(estimate="high"), "key 'by_key.k.estimate': expected a number, got a string"),
    (lambda r: r.update(values=[1, "2"]), "key 'values': expected a list of numbers, got a list"),
    (lambda r: r.update(maybe=3), "key 'maybe': expected an object or null, got a number"),
    (lambda r: r.update(spare=-(10**400)), "key 'spare': expected a number, got a number beyond float range"),
    (lambda r: r.update(maybe={"estimate": 1.0, "n": "2"}), "key 'maybe.n': expected an integer, got a string"),
    (lambda r: r.pop("name"), "key 'name' is missing"),
    (lambda r: r["by_key"]["k"].update(estimate=10**400),
     "key 'by_key.k.estimate': expected a number, got a number beyond float range"),
    (lambda r: r.update(values=[1, 10**400]),
     "key 'values': expected a list of numbers within float range, got a list"),
])
def test_a_value_of_the_wrong_type_is_one_line_naming_the_file_and_key(edit, message):
    rec = to_record(_outer())
    edit(rec)
    with pytest.raises(InputError) as err:
        from_record(Outer, rec, where="saved.json")
    assert str(err.value) == f"saved.json: {message}" and "\n" not in str(err.value)


def test_integers_beyond_int64_read_as_floats():
    """A sealed file is untrusted: a big integer is a number like any other, never an OverflowError."""
    back = from_record(Outer, {**to_record(_outer()), "values": [1, 2**63]}, where="f.json")
    assert back.values.dtype == np.float64 and back.values.tolist() == [1.0, 2.0**63]


def test_the_key_path_starts_where_the_record_sits_and_the_error_type_is_the_callers():
    with pytest.raises(UsageError, match=r"^results\.json: key 'systems\.slices\[0\]\.est': expected an object, "
                                         r"got a list$"):
        from_record(Outer, {**to_record(_outer()), "est": []}, where="results.json", key="systems.slices[0]",
                    error=UsageError)
    with pytest.raises(InputError, match=r"^x\.json: the top level: expected an object, got a list$"):
        from_record(Outer, [], where="x.json")


@dataclass(frozen=True)
class _Mapped:
    counts: Mapping[str, int]


def test_a_mapping_annotated_field_reads_like_a_dict():
    """typing.Mapping's origin is collections.abc.Mapping: such a field is read and checked as a dict is."""
    assert from_record(_Mapped, {"counts": {"a": 1}}) == _Mapped(counts={"a": 1})
    with pytest.raises(InputError, match=r"key 'counts\.a': expected an integer, got a string"):
        from_record(_Mapped, {"counts": {"a": "x"}}, where="f")


# --- a union of record kinds: read as the first arm whose required keys the object has -----------------------------

@dataclass(frozen=True, kw_only=True)
class Local:
    path: str
    sha256: str
    rows: int
    note: str | None = None


@dataclass(frozen=True, kw_only=True)
class Remote:
    path: str
    hub: str
    rows: int


@dataclass(frozen=True, kw_only=True)
class Adapted(Local):
    native_rows: int


@dataclass(frozen=True)
class Entries:
    data: list[Adapted | Remote | Local]


def test_a_union_of_records_reads_each_object_as_the_kind_whose_keys_it_has():
    entries = Entries(data=[Local(path="a", sha256="x", rows=2), Remote(path="hf:b", hub="b", rows=3),
                            Adapted(path="c", sha256="y", rows=1, native_rows=4)])
    raw = json.loads(json.dumps(to_record(entries)))
    got = from_record(Entries, raw, where="f.json")
    assert got == entries and [type(e) for e in got.data] == [Local, Remote, Adapted]
    raw["data"][0]["native_rows"] = 9  # now it has Adapted's keys too: the first arm that fits wins
    assert type(from_record(Entries, raw, where="f.json").data[0]) is Adapted


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["data"][1].pop("rows"), "f.json: key 'data[1].rows' is missing"),  # Remote lacks fewest
    (lambda d: d["data"][0].clear(), "f.json: key 'data[0].path' is missing"),
    (lambda d: d["data"].__setitem__(0, 3), "f.json: key 'data[0]': expected an object, got a number"),
    (lambda d: d["data"][2].__setitem__("native_rows", "4"), "f.json: key 'data[2].native_rows': expected an "
                                                             "integer, got a string"),
    (lambda d: d["data"][0].__setitem__("note", 1), "f.json: key 'data[0].note': expected a string or null, "
                                                    "got a number"),
])
def test_an_object_no_kind_fits_or_a_wrong_value_inside_one_is_one_line_naming_the_key(edit, message):
    raw = to_record(Entries(data=[Local(path="a", sha256="x", rows=2), Remote(path="hf:b", hub="b", rows=3),
                                  Adapted(path="c", sha256="y", rows=1, native_rows=4)]))
    edit(raw)
    with pytest.raises(InputError) as err:
        from_record(Entries, raw, where="f.json")
    assert str(err.value) == message


# ---- strict: a file a person writes (a run spec) -----------------------------------------------------------------

@dataclass(frozen=True)
class _Part:
    size: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.size, int) or self.size < 1:
            raise UsageError(f"part.size: expected a whole number >= 1, got {self.size!r}")


@dataclass(frozen=True)
class _Spec:
    name: str
    part: _Part = _Part()
    parts: tuple[_Part, ...] = ()
    ratio: float = 0.5
    tag: str | None = field(default=None, metadata={"json": "label"})


@pytest.mark.parametrize("raw, message", [
    ({"name": "a", "nmae": 1}, "f.toml: unknown key nmae; valid: name, part, parts, ratio, label"),
    ({"name": "a", "part": {"sise": 2, "x": 1}}, "f.toml: part: unknown keys sise, x; valid: size"),
    ({"name": "a", "tag": "t"}, "f.toml: unknown key tag; valid: name, part, parts, ratio, label"),  # its JSON name
    ({"name": 5}, "f.toml: name: expected a string, got int"),  # no check of its own: the hint answers
    ({"name": "a", "part": {"size": "2"}}, "f.toml: part.size: expected a whole number >= 1, got '2'"),  # its own
    ({"name": "a", "part": {"size": 0}}, "f.toml: part.size: expected a whole number >= 1, got 0"),
    ({"name": "a", "part": 3}, "f.toml: part: expected an object, got int"),  # a part's shape: the reader's
    ({"name": "a", "parts": "p"}, "f.toml: parts: expected a list, got str"),
    ({"name": "a", "parts": [{}, 2]}, "f.toml: parts[1]: expected an object, got int"),
    ({"name": "a", "ratio": [1]}, "f.toml: ratio: expected a number, got list"),
    ({"part": {}}, "f.toml: name: missing (it has no default)"),
    ([], "f.toml: expected an object, got list"),
])
def test_strict_refuses_unknown_keys_and_names_keys_and_types_as_written(raw, message):
    with pytest.raises(UsageError) as err:
        from_record(_Spec, raw, where="f.toml", strict=True, error=UsageError)
    assert str(err.value) == message


def test_strict_reads_what_the_lenient_reader_reads_and_names_its_key_under_a_parent():
    raw = {"name": "a", "part": {"size": 3}, "parts": [{}, {"size": 2}], "ratio": 1, "label": "t"}
    back = from_record(_Spec, raw, strict=True)
    assert back == from_record(_Spec, raw) == _Spec(name="a", part=_Part(3), parts=(_Part(), _Part(2)), ratio=1.0,
                                                     tag="t")
    assert back.ratio == 1 and isinstance(back.ratio, int)  # as written (a lenient read gives the float)
    assert isinstance(from_record(_Spec, raw).ratio, float)
    with pytest.raises(InputError, match=r"^f: ratio: expected a number, got NoneType$"):  # null is not NaN here
        from_record(_Spec, {"name": "a", "ratio": None}, where="f", strict=True)
    with pytest.raises(InputError, match=r"^r\.json: spec\.part\.size: expected a whole number >= 1, got 0$"):
        from_record(_Spec, {"name": "a", "part": {"size": 0}}, where="r.json", key="spec", strict=True)
    with pytest.raises(InputError, match=r"^r\.json: spec\.part: unknown key x; valid: size$"):
        from_record(_Spec, {"name": "a", "part": {"x": 0}}, where="r.json", key="spec", strict=True)


@dataclass(frozen=True)
class _Holder:
    n: int
    spec: _Spec | None = field(default=None, metadata={"strict": True})
    loose: _Spec | None = None


def test_a_strict_field_is_read_strictly_inside_a_lenient_record():
    assert from_record(_Holder, {"n": 1, "loose": {"name": "a", "later": 1}}).loose == _Spec(name="a")
    with pytest.raises(InputError, match=r"^h\.json: spec: unknown key later; valid: name, part, parts, ratio, "
                                         r"label$"):
        from_record(_Holder, {"n": 1, "spec": {"name": "a", "later": 1}}, where="h.json")
    with pytest.raises(InputError, match=r"^h\.json: spec\.part\.size: expected a whole number >= 1, got -1$"):
        from_record(_Holder, {"n": 1, "spec": {"name": "a", "part": {"size": -1}}}, where="h.json")
    with pytest.raises(InputError, match=r"^h\.json: key 'n': expected an integer, got a string$"):  # outside: lenient
        from_record(_Holder, {"n": "1", "spec": {"name": "a"}}, where="h.json")


@dataclass(frozen=True)
class _FromFile:
    name: str
    column: str
    lower: bool = False


@dataclass(frozen=True)
class _Handed:
    name: str
    source: str


@dataclass(frozen=True)
class _Sources:
    by_name: dict[str, _FromFile | _Handed]


def test_records_in_a_union_are_told_apart_by_their_required_keys():
    raw = {"by_name": {"a": {"name": "a", "column": "c"}, "b": {"name": "b", "source": "python"}}}
    assert from_record(_Sources, raw).by_name == {"a": _FromFile(name="a", column="c"),
                                                  "b": _Handed(name="b", source="python")}
    with pytest.raises(InputError, match=r"key 'by_name\.a\.column' is missing$"):  # neither: the first one's error
        from_record(_Sources, {"by_name": {"a": {"name": "a"}}}, where="f")
    with pytest.raises(InputError, match=r"key 'by_name\.a': expected an object, got a list$"):
        from_record(_Sources, {"by_name": {"a": []}}, where="f")
    with pytest.raises(InputError, match=r"key 'by_name\.b\.source': expected a string, got a number$"):
        from_record(_Sources, {"by_name": {"b": {"name": "b", "source": 1}}}, where="f")
