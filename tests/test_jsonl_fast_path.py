"""The Arrow reading of a plain JSONL file gives exactly the per-line reader's pairs, and hands every file it cannot
prove plain back to that reader, so errors and skipped rows read word for word as before."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import attrib_audit.data.columnar as columnar
import attrib_audit.data.loaders as loaders
from attrib_audit.data import DataError, load_pairs
from attrib_audit.data.columnar import _plain_lines, batch_to_table, plain_jsonl_table
from attrib_audit.data.labels import RatingCut
from attrib_audit.data.loaders import iter_rows, rows_to_records
from attrib_audit.data.records import PairTable
from attrib_audit.files.hashing import file_sha256

DATA = Path(__file__).parent / "data"
DEMO = Path(__file__).parents[1] / "src" / "attrib_audit" / "data" / "demo"
PAIR_FILES = [DATA / "wice.jsonl", DATA / "external" / "rag_pairs.jsonl", *sorted((DATA / "reproduce").glob("*.jsonl")),
              *sorted(DEMO.glob("*.jsonl")), DATA / "summeval_system_scores.jsonl"]  # the last: scores, no texts
OTHER_FILES = [DATA / "wice_provenance.jsonl"]  # not our pair schema
COLUMNS = ("ids", "datasets", "claims", "evidences", "sources", "questions", "groups", "constructs", "systems")
BASE = DATA / "reproduce" / "attributionbench_id.jsonl"


@pytest.fixture(autouse=True)
def _every_file_is_large(monkeypatch):
    """The files here are small; the Arrow reading is otherwise kept for files of ARROW_MIN_BYTES and more."""
    monkeypatch.setattr(loaders, "ARROW_MIN_BYTES", 0)


def test_a_small_file_keeps_the_per_line_reader(monkeypatch):
    monkeypatch.setattr(loaders, "ARROW_MIN_BYTES", BASE.stat().st_size + 1)
    monkeypatch.setattr(loaders, "plain_jsonl_table", lambda data: pytest.fail("Arrow read a small file"))
    assert len(load_pairs(BASE)) > 0


def assert_same(a: PairTable, b: PairTable) -> None:
    for name in COLUMNS:
        assert getattr(a, name) == getattr(b, name), name
    assert a.labels.dtype == b.labels.dtype and np.array_equal(a.labels, b.labels)
    assert (a.ratings is None) == (b.ratings is None)
    if a.ratings is not None:
        assert np.array_equal(a.ratings, b.ratings)
    assert (a.inclusion_probs is None) == (b.inclusion_probs is None)
    if a.inclusion_probs is not None:
        assert np.array_equal(a.inclusion_probs, b.inclusion_probs)


def arrow_read(path: Path, **kw) -> PairTable | None:
    rows = plain_jsonl_table(path.read_bytes())
    return None if rows is None else batch_to_table(rows, first_row=1, path=str(path), **kw)


def per_line(path: Path, **kw) -> PairTable:
    return PairTable.from_records(rows_to_records(iter_rows(path), path=str(path), seen_ids={}, **kw))


def test_every_pair_file_in_the_repo_is_read_as_the_per_line_reader_reads_it():
    assert len(PAIR_FILES) >= 6
    for path in PAIR_FILES:
        for kw in ({}, {"construct": "attribution", "dataset": "named"}):
            seen: dict = {}
            fast = arrow_read(path, seen_ids=seen, **kw)
            assert fast is not None, path
            assert_same(fast, per_line(path, **kw))
            assert seen == {i: (str(path), row) for row, i in enumerate(fast.ids, start=1)}
    for kw in ({"columns": {"rating": "label_raw"}},
               {"columns": {"rating": "label_raw"}, "label_from_rating": RatingCut.parse(">=4.5")}):
        path = DATA / "summeval_system_scores.jsonl"
        fast = arrow_read(path, seen_ids={}, **kw)
        assert fast is not None and fast.ratings is not None
        assert_same(fast, per_line(path, **kw))


@pytest.mark.parametrize("path", OTHER_FILES, ids=lambda p: p.name)
def test_other_layouts_go_to_the_per_line_reader(path):
    assert arrow_read(path, seen_ids={}) is None
    with pytest.raises(DataError):
        per_line(path)


def both_ways(path: Path, monkeypatch, **kw):
    """load_pairs as it runs, and with the Arrow reading switched off: (table or error text) each."""
    def run():
        try:
            return load_pairs(path, **kw)
        except DataError as exc:
            return str(exc)
    fast = run()
    with monkeypatch.context() as m:
        m.setattr(loaders, "plain_jsonl_table", lambda data: None)
        slow = run()
    return fast, slow


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def without_ids(lines: list[str]) -> list[str]:
    """Rows named by their line number (`<file>:<row>`), so a row numbered wrong would show."""
    return [line.replace('"id": "', '"other_id": "', 1) for line in lines]


# (what is done to the 48 rows, the error it must give or None when it loads)
CHANGES = {
    "plain": (lambda ls: ls, None),
    "ids from line numbers": (without_ids, None),
    "blank line": (lambda ls: without_ids(ls[:3] + [""] + ls[3:]), None),
    "blank line of spaces": (lambda ls: without_ids(ls[:3] + ["   "] + ls[3:]), None),
    "leading space": (lambda ls: without_ids(ls[:3] + [" " + ls[3]] + ls[4:]), None),
    "crlf": (lambda ls: without_ids([line + "\r" for line in ls]), None),
    "bom": (lambda ls: without_ids(["\ufeff" + ls[0]] + ls[1:]), None),
    "two objects on one line": (lambda ls: ls[:3] + [ls[3] + " " + ls[4]] + ls[5:], "invalid JSON"),
    "empty claim": (lambda ls: ls[:9] + [ls[9].replace('"claim": "', '"claim": " \\t", "x": "', 1)] + ls[10:],
                    "row 10, field 'claim': claim is empty"),
    "label 2": (lambda ls: ls[:9] + [ls[9].replace('"label": 0', '"label": 2').replace('"label": 1', '"label": 2')]
                + ls[10:], "row 10, field 'label'"),
    "NaN label": (lambda ls: ls[:9] + [ls[9].replace('"label": 0', '"label": NaN').replace('"label": 1',
                                                                                           '"label": NaN')]
                  + ls[10:], "label is missing (NaN)"),
    "duplicated id": (lambda ls: ls + [ls[5]], "row 49, field 'id': duplicated id"),
    "duplicated key": (lambda ls: ls[:9] + [ls[9][:-1] + ', "claim": "other"}'] + ls[10:], None),
    "lone surrogate": (lambda ls: ls[:9] + [ls[9].replace('"claim": "', '"claim": "\\ud800', 1)] + ls[10:],
                       "row 10, field 'claim': claim is not valid Unicode"),
    "not an object": (lambda ls: ls[:9] + ["[1, 2]"] + ls[10:], "row 10: each JSONL line must be an object"),
    "claim a number": (lambda ls: ls[:9] + [ls[9].replace('"claim": "', '"claim": 5, "x": "', 1)] + ls[10:], None),
    "claim missing": (lambda ls: ls[:9] + [ls[9].replace('"claim": "', '"x": "', 1)] + ls[10:],
                      "row 10, field 'claim': claim is missing"),
    "first row lacks a column": (lambda ls: [ls[0].replace('"label": ', '"y": ', 1)] + ls[1:],
                                 "missing column 'label'"),
    "inclusion_prob": (lambda ls: [ls[0][:-1] + ', "inclusion_prob": 0.5}'] + ls[1:], "inclusion_prob is missing"),
    "integer ids": (lambda ls: [line.replace('"id": "', f'"id": {i}, "x": "', 1) for i, line in enumerate(ls)], None),
    "mixed label types": (lambda ls: ls[:9] + [ls[9].replace('"label": 0', '"label": "0"').replace('"label": 1',
                                                                                                   '"label": "1"')]
                          + ls[10:], None),
    "all-null question": (lambda ls: [line.replace('"question": "', '"question": null, "q": "', 1) for line in ls],
                          None),
}


@pytest.mark.parametrize("name", CHANGES)
def test_load_pairs_gives_the_per_line_result_or_error(name, tmp_path, monkeypatch):
    change, error = CHANGES[name]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(change(lines_of(BASE))) + "\n", encoding="utf-8")
    fast, slow = both_ways(path, monkeypatch)
    if error is not None:
        assert isinstance(fast, str) and error in fast
    if isinstance(slow, str):
        assert fast == slow and "\n" not in fast
        return
    assert_same(fast, slow)
    assert fast.origin == slow.origin


def test_a_bad_row_is_skipped_as_the_per_line_reader_skips_it(tmp_path, monkeypatch):
    rows = without_ids(lines_of(BASE))
    rows[20] = rows[20].replace('"label": 0', '"label": 7').replace('"label": 1', '"label": 7')
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    fast, slow = both_ways(path, monkeypatch, on_error="skip")
    assert_same(fast, slow)
    assert fast.origin == slow.origin and [e.row for e in fast.origin[0].skipped] == [21]


def test_ids_are_unique_across_files_read_either_way(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(BASE.read_text(encoding="utf-8"), encoding="utf-8")
    b.write_text(lines_of(BASE)[7] + "\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        load_pairs([a, b])
    assert str(err.value).startswith(f"{b}, row 1, field 'id': duplicated id ")
    assert f"(first at {a} row 8)" in str(err.value)


def test_a_plain_file_is_not_read_line_by_line(tmp_path, monkeypatch):
    path = tmp_path / "pairs.jsonl"
    path.write_text(BASE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(loaders, "rows_to_records", lambda *a, **k: pytest.fail("per-line reader"))
    monkeypatch.setattr(loaders, "file_sha256", lambda *a, **k: pytest.fail("read again to hash"))
    table = load_pairs(path)
    assert len(table) == len(lines_of(BASE)) and table.origin[0].sha256 == file_sha256(path)


def test_a_line_longer_than_arrows_block_is_still_read(tmp_path, monkeypatch):
    monkeypatch.setattr(columnar, "JSONL_BLOCK_BYTES", 64)
    path = tmp_path / "pairs.jsonl"
    path.write_text(BASE.read_text(encoding="utf-8"), encoding="utf-8")
    fast = arrow_read(path, seen_ids={})
    assert fast is not None
    assert_same(fast, per_line(path))


@pytest.mark.parametrize("data,expected", [
    (b'{"a": 1}\n{"a": 2}\n', (2, 9)), (b'{"a": 1}\n{"a": 22}', (2, 10)), (b'{"a": 1}\r\n{}\r\n', (2, 10)),
    (b"", None), (b"\n", None), (b'{"a": 1}\n\n{"a": 2}\n', None), (b'{"a": 1}\n \n', None),
    (b'\xef\xbb\xbf{"a": 1}\n', None), (b' {"a": 1}\n', None), (b'{"a": 1} \n', None), (b'{"a": 1}\n ', None),
    (b'[{"a": 1}]\n', None), (b'{"a":\n 1}\n', None), (b'{"a": 1}\r', (1, 10)),
])
def test_plain_lines(data, expected):
    assert _plain_lines(data) == expected
