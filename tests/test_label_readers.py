"""One label reader for both JSONL readers: a label means the same whatever its JSON type and whichever reader met
it, --label-map applies to every type, and nesting too deep is refused by both, without recursion."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import attrib_audit.data.loaders as loaders
from attrib_audit.data import DataError, load_pairs, parse_label
from attrib_audit.data.columnar import MAX_JSON_DEPTH, _plain_lines, nested_too_deep

SRC = Path(__file__).resolve().parents[1] / "src"
FLIP = {"1": 0, "0": 1}


def read(path: Path, arrow: bool, **kw):
    """load_pairs with the Arrow reading forced on (any size) or off: the table, or the error's text."""
    with mock.patch.object(loaders, "ARROW_MIN_BYTES", 0 if arrow else 1 << 62):
        try:
            return load_pairs(path, **kw)
        except DataError as exc:
            return str(exc)


def rows(labels: list, **extra) -> list[dict]:
    return [{"id": f"r{i}", "claim": f"claim {i}", "evidence": f"evidence {i}", "label": lab, **extra}
            for i, lab in enumerate(labels)]


def write(path: Path, records: list[dict] | list[str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("one,zero", [(1, 0), (1.0, 0.0), (True, False), ("1", "0"), ("1.0", "0.0"), (" 1 ", "0")])
@pytest.mark.parametrize("arrow", [False, True])
def test_the_label_map_applies_to_every_type(tmp_path, one, zero, arrow):
    path = write(tmp_path / "p.jsonl", rows([one, zero, one]))
    table = read(path, arrow, label_map=FLIP)
    assert not isinstance(table, str), table
    assert table.labels.tolist() == [0, 1, 0]
    assert read(path, arrow).labels.tolist() == [1, 0, 1]


@pytest.mark.parametrize("arrow", [False, True])
def test_one_float_label_among_ints_is_read_as_its_value(tmp_path, arrow):
    """Arrow reads a column of 1s with one 1.0 as floats; the label map still applies to every row."""
    path = write(tmp_path / "p.jsonl", rows([1, 0, 1.0, 0]))
    assert read(path, arrow, label_map=FLIP).labels.tolist() == [0, 1, 0, 1]


def test_label_map_keys_are_read_as_labels_are():
    assert parse_label(1.0, {"1.0": 0}, path="f", row=1, field="label") == 0
    assert parse_label(np.int64(1), {"1": 0}, path="f", row=1, field="label") == 0
    assert parse_label(True, {"true": 0, "1": 1}, path="f", row=1, field="label") == 0  # its own spelling first
    assert parse_label(True, {"1": 0}, path="f", row=1, field="label") == 0
    assert parse_label("Yes", {"yes": 1}, path="f", row=1, field="label") == 1
    with pytest.raises(DataError, match="label 2.5 is not 0/1"):
        parse_label(2.5, FLIP, path="f", row=1, field="label")
    with pytest.raises(DataError, match=r"label is missing \(NaN\)"):
        parse_label(float("nan"), FLIP, path="f", row=1, field="label")


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# the row's own object is one level: a field nested MAX_JSON_DEPTH - 1 deep is the deepest line read
@pytest.mark.parametrize("depth,refused", [(MAX_JSON_DEPTH - 1, False), (MAX_JSON_DEPTH, True), (3000, True)])
@pytest.mark.parametrize("arrow", [False, True])
def test_deep_nesting_is_refused_by_both_readers_alike(tmp_path, depth, refused, arrow):
    lines = [json.dumps(r) for r in rows([1, 0, 1])]
    lines[1] = lines[1][:-1] + f', "meta": {nested(depth)}}}'
    out = read(write(tmp_path / "p.jsonl", lines), arrow)
    if refused:
        assert out == f"{tmp_path / 'p.jsonl'}, row 2: invalid JSON (nested more than {MAX_JSON_DEPTH} deep)"
    else:
        assert not isinstance(out, str) and len(out) == 3


def test_brackets_inside_strings_are_not_nesting():
    assert not nested_too_deep(json.dumps({"a": nested(5000), "b": '\\"[[[' * 500}))
    assert nested_too_deep(json.dumps({"a": "]]]]"})[:-1] + f', "b": {nested(MAX_JSON_DEPTH + 1)}}}')
    assert _plain_lines(f'{{"a": {nested(50_000)}}}\n'.encode()) is None  # never handed to Arrow


def test_a_line_nested_50000_deep_is_one_line_not_a_crash(tmp_path):
    """Arrow's parser recursed on it until the process died (exit 139): run in a child so a crash cannot take pytest."""
    deep = f'{{"claim": "c", "x": {nested(50_000)}}}'
    path = write(tmp_path / "p.jsonl", [json.dumps(r) for r in rows([1, 0])] + [deep])
    code = ("import sys; import attrib_audit.data.loaders as l; l.ARROW_MIN_BYTES = 0\n"
            "from attrib_audit.data import DataError, load_pairs\n"
            "try:\n    load_pairs(sys.argv[1])\nexcept DataError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == f"{path}, row 3: invalid JSON (nested more than {MAX_JSON_DEPTH} deep)"


VALID = st.sampled_from([0, 1, 0.0, 1.0, True, False, "0", "1", "1.0", " TRUE ", "false"])
ODD = st.sampled_from([2, -1, 0.5, 1e300, "yes", "attributable", "", "nan", None])
LABEL = st.one_of(VALID, VALID, VALID, ODD)  # mostly readable, so a row's label type decides the outcome
MAPS = st.sampled_from([None, FLIP, FLIP, {"yes": 1, "no": 0}, {"true": 0, "false": 1}, {"1.0": 0, "attributable": 1}])
EXTRA = st.sampled_from([None, None, None, 1, "x", [1, [2]], {"k": None}, "DEEP", "EDGE"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=st.one_of(st.lists(st.sampled_from([0, 1, 0.0, 1.0]), min_size=1, max_size=6),  # one JSON type or two
                        st.lists(LABEL, min_size=1, max_size=6)),
       label_map=MAPS, extra=st.lists(EXTRA, min_size=1, max_size=6))
def test_both_readers_give_the_same_table_or_the_same_error(labels, label_map, extra):
    lines = []
    for i, lab in enumerate(labels):
        row = {"id": f"r{i}", "claim": f"c{i}", "evidence": "e", "label": lab}
        text = json.dumps(row)
        meta = extra[i % len(extra)]
        if meta == "DEEP":
            text = text[:-1] + f', "meta": {nested(MAX_JSON_DEPTH + i)}}}'
        elif meta == "EDGE":
            text = text[:-1] + f', "meta": {nested(MAX_JSON_DEPTH - 1)}}}'
        elif meta is not None:
            text = text[:-1] + f', "meta": {json.dumps(meta)}}}'
        lines.append(text)
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp) / "p.jsonl", lines)
        fast, slow = read(path, True, label_map=label_map), read(path, False, label_map=label_map)
    assert type(fast) is type(slow)
    if isinstance(slow, str):
        assert fast == slow and "\n" not in fast
    else:
        assert fast.ids == slow.ids and fast.labels.dtype == slow.labels.dtype
        assert fast.labels.tolist() == slow.labels.tolist()
