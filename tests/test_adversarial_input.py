"""Adversarial input: every row gets a correct score or a DataError naming it; nothing crashes or vanishes."""
from __future__ import annotations

import csv
import json
import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attrib_audit.data import DataError, load_pairs
from attrib_audit.engine import ScoreCache, score_pairs
from attrib_audit.scorers.lexical import LexicalScorer
from attrib_audit.text.tokenize import jaccard

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# text with ASCII, accents, Greek capital sigma (context-dependent lowercase), Turkish İ, CJK, combining marks
ALPHABET = st.sampled_from(list("aZ09_ -.,'\n\t") + ["Σ", "ς", "İ", "ß", "é", "e\u0301", "日本", "١٢", "Ⅻ", "\u00a0",
                                                    "\x00", "🙂", "ǅ"])
TEXT = st.one_of(st.text(), st.lists(ALPHABET, max_size=40).map("".join))


@FAST
@given(st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=30))
def test_lexical_equals_reference_jaccard_on_any_unicode(pairs):
    claims, evidences = [c for c, _ in pairs], [e for _, e in pairs]
    got = LexicalScorer().score(claims, evidences).scores
    assert got.tolist() == [jaccard(c, e) for c, e in pairs]


@FAST
@given(st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=20))
def test_engine_scores_every_row_in_order_with_duplicates(pairs):
    pairs = pairs + pairs[: len(pairs) // 2]
    claims, evidences = [c for c, _ in pairs], [e for _, e in pairs]
    with ScoreCache(":memory:") as cache:
        out, st_ = score_pairs(LexicalScorer(), claims, evidences, cache=cache, batch_size=3)
        again, st2 = score_pairs(LexicalScorer(), claims, evidences, cache=cache)
    ref = [jaccard(c, e) for c, e in pairs]
    assert out.scores.tolist() == ref == again.scores.tolist()
    assert st_.n_unique == len(set(pairs)) and st2.n_scored == 0


def test_megabyte_evidence_scores():
    ev = ("word " * 200_000) + "needle"
    out = LexicalScorer().score(["needle word", "nothing"], [ev, ev])
    assert out.scores.tolist() == [1.0, 0.0] and out.truncated_tokens.tolist() == [0, 0]


# --- loaders ---------------------------------------------------------------------------------

def _expected(value):
    """The label a raw value must load as, or None if it must be rejected."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return int(value) if value in (0, 1) else None
    if isinstance(value, str):
        return {"0": 0, "1": 1, "true": 1, "false": 0}.get(value.strip().lower())
    return None


def _valid_text(v) -> bool:
    if isinstance(v, (dict, list)) or v is None or (isinstance(v, float) and math.isnan(v)):
        return False
    s = v if isinstance(v, str) else str(v)
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return bool(s.strip())


CELL = st.one_of(TEXT, st.sampled_from(["", "   ", "\n\t ", None]), st.integers(-3, 3), st.floats(allow_nan=True),
                 st.booleans(), st.just(["a", "list"]), st.just({"a": 1}))
LABEL = st.one_of(st.sampled_from([0, 1, "0", "1", "true", "False", " 1 ", None, float("nan"), "", "yes", 2, 1.0, 0.5]),
                  st.booleans())
ROW = st.fixed_dictionaries({"claim": CELL, "evidence": CELL, "label": LABEL,
                             "id": st.one_of(st.none(), st.sampled_from(["a", "b", "c", 7]))})


def _check(rows, path, table_or_exc, skipped):
    """Every row is either loaded (in order, with exactly its text) or named in the error/skip list."""
    good = []
    seen = set()
    first_bad = None
    for i, r in enumerate(rows, start=1):
        rid = str(r["id"]) if r["id"] is not None else f"{path.stem}:{i}"
        ok = _valid_text(r["claim"]) and _valid_text(r["evidence"]) and _expected(r["label"]) is not None \
            and rid not in seen
        if ok:
            seen.add(rid)
            good.append((rid, _expected(r["label"])))
        elif first_bad is None:
            first_bad = i
    if isinstance(table_or_exc, DataError):
        assert first_bad is not None or not good, f"unexpected error {table_or_exc}"
        assert table_or_exc.path == str(path)
        assert table_or_exc.row == first_bad or (not good and table_or_exc.row is None)
        return
    assert first_bad is None or skipped is not None, "a bad row was loaded without an error"
    assert list(zip(table_or_exc.ids, table_or_exc.labels.tolist())) == good
    if skipped is not None:
        assert len(skipped) + len(good) == len(rows), "a row vanished"
        assert all(s.file == str(path) and s.row and s.reason for s in skipped)


@pytest.mark.parametrize("on_error", ["fail", "skip"])
@FAST
@given(rows=st.lists(ROW, min_size=1, max_size=8))
def test_jsonl_rows_load_or_are_named(tmp_path, rows, on_error):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows), encoding="utf-8")
    try:
        table = load_pairs([path], on_error=on_error)
    except DataError as exc:
        return _check(rows, path, exc, None)
    _check(rows, path, table, table.origin[0].skipped if on_error == "skip" else None)


CSV_TEXT = st.lists(st.sampled_from(list('ab ,"\n\r\t;') + ["é", "日", '""', "\r\n"]), max_size=20).map("".join)


@FAST
@given(rows=st.lists(st.fixed_dictionaries({"claim": CSV_TEXT, "evidence": CSV_TEXT,
                                            "label": st.sampled_from(["0", "1", "", "x"])}), min_size=1, max_size=6))
def test_csv_with_embedded_newlines_and_quotes(tmp_path, rows):
    path = tmp_path / "rows.csv"
    # quoted, so embedded \r, \n, quotes and commas stay inside their field
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["claim", "evidence", "label"], quoting=csv.QUOTE_ALL)
        w.writeheader()
        w.writerows(rows)
    rows = [{**r, "id": None} for r in rows]
    try:
        table = load_pairs([path], on_error="skip")
    except DataError as exc:
        return _check(rows, path, exc, None)
    kept = [r for r in rows if _valid_text(r["claim"]) and _valid_text(r["evidence"]) and r["label"] in ("0", "1")]
    assert table.claims == [r["claim"] for r in kept] and table.evidences == [r["evidence"] for r in kept]
    _check(rows, path, table, table.origin[0].skipped)


@FAST
@given(rows=st.lists(ROW, min_size=1, max_size=8))
def test_parquet_mixed_type_columns_load_or_are_named(tmp_path, rows):
    path = tmp_path / "rows.parquet"
    # Parquet needs one type per column: store as JSON-ish strings except when a column is uniform
    frame = pd.DataFrame([{k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()}
                          for r in rows])
    try:
        frame.to_parquet(path, index=False)
    except Exception:  # noqa: BLE001 - a frame arrow cannot store is not a loader case
        return
    back = pd.read_parquet(path).to_dict(orient="records")
    back = [{k: (None if isinstance(v, float) and math.isnan(v) and k != "label" else v) for k, v in r.items()}
            for r in back]
    try:
        table = load_pairs([path], on_error="skip")
    except DataError as exc:
        return _check(back, path, exc, None)
    _check(back, path, table, table.origin[0].skipped)


def test_bad_bytes_and_broken_files_are_data_errors(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"claim": "a", "evidence": "a", "label": 1}\n{"claim": "\xff", "evidence": "a", "label": 1}\n')
    with pytest.raises(DataError, match=r"row 2.*UTF-8"):
        load_pairs([p])
    t = load_pairs([p], on_error="skip")
    assert len(t) == 1 and t.origin[0].skipped[0].row == 2
    c = tmp_path / "bad.csv"
    c.write_text('claim,evidence,label\n"a","b",1\n"a","b",1,extra,fields\n')
    with pytest.raises(DataError, match="cannot read csv"):
        load_pairs([c])
    q = tmp_path / "bad.parquet"
    q.write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match="cannot read parquet"):
        load_pairs([q])
    s = tmp_path / "surrogate.jsonl"
    s.write_text('{"claim": "\\ud800 x", "evidence": "a", "label": 1}\n')
    with pytest.raises(DataError, match=r"row 1.*claim.*surrogate"):
        load_pairs([s])
