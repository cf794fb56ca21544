"""Adapter inputs keep our skip layout with counts, honour --on-error skip, name missing columns, and cluster
rows by the native claim/case id (warning when a file has none)."""
from __future__ import annotations

import json

import pytest

from attrib_audit.cli import main
from attrib_audit.data.errors import DataError
from test_adapters import load, write_jsonl

ARGS = ["--scorers", "lexical", "--n-boot", "30", "--n-perm", "20", "--quiet"]


def vitc(i: int, label: str, **extra) -> dict:
    row = {"unique_id": f"u{i}", "case_id": f"k{i // 2}", "claim": f"the river is {i} km long",
           "evidence": f"the river is {i} km long" if label == "SUPPORTS" else "it is short", "label": label}
    return {**row, **extra}


def rows(n: int = 12) -> list[dict]:
    return [vitc(i, "SUPPORTS" if i % 2 else "REFUTES") for i in range(n)]


def test_adapter_skips_use_our_layout_with_counts(tmp_path):
    path = write_jsonl(tmp_path / "vitc.jsonl", rows() + [vitc(20, "NOT ENOUGH INFO"), vitc(21, "NOT ENOUGH INFO")])
    assert main(["audit", str(path), "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c.sqlite"), *ARGS]) == 0
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert res["skipped"] == [{"file": str(path), "row": None, "field": None,
                               "reason": "label 'not enough info' dropped", "count": 2}]
    assert res["data"][0]["skip_counts"] == {"label 'not enough info' dropped": 2}


def test_on_error_skip_applies_to_adapter_rows(tmp_path, capsys):
    bad = vitc(3, "MAYBE")
    path = write_jsonl(tmp_path / "vitc.jsonl", rows()[:3] + [bad] + rows()[4:])
    out = ["--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c.sqlite"), *ARGS]
    assert main(["audit", str(path), *out]) == 2
    assert "vitc.jsonl, row 4, field 'label': label 'MAYBE' is not one of" in capsys.readouterr().err
    assert main(["audit", str(path), "--on-error", "skip", *out]) == 0
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    [entry] = res["skipped"]
    assert (entry["file"], entry["row"], entry["field"]) == (str(path), 4, "label") and "MAYBE" in entry["reason"]
    assert res["data"][0]["rows"] == 11 and res["data"][0]["n_skipped"] == 1


def test_missing_required_columns_are_named(tmp_path):
    path = write_jsonl(tmp_path / "vitc.jsonl", [{k: v for k, v in r.items() if k != "evidence"} for r in rows()])
    with pytest.raises(DataError, match=r"row 1, field 'evidence': missing column 'evidence' of the vitaminc format"):
        load(path, "vitaminc")


def test_vitaminc_clusters_by_a_shared_native_id_and_warns_without_one(tmp_path):
    shared = [{**{k: v for k, v in vitc(i, "SUPPORTS" if i % 2 else "REFUTES").items() if k != "case_id"},
               "id": f"claim{i // 3}"} for i in range(9)]
    recs, _, logs = load(write_jsonl(tmp_path / "shared.jsonl", shared), "vitaminc")
    groups = [recs[f"u{i}"].group for i in range(9)]
    assert groups == [f"vitaminc:claim{i // 3}" for i in range(9)] and len(set(groups)) == 3
    assert not any("no cluster column" in line for line in logs)

    bare = [{k: v for k, v in r.items() if k != "case_id"} for r in rows()]
    recs, origin, logs = load(write_jsonl(tmp_path / "bare.jsonl", bare), "vitaminc")
    assert len({r.cluster() for r in recs.values()}) == len(recs) and origin.n_unclustered == len(recs)
    assert any("warning: vitaminc" in line and "no cluster column (expected case_id or id)" in line for line in logs)
