import json

import numpy as np
import pandas as pd
import pytest

from attrib_audit.data import DataError, load_demo, load_pairs, parse_label


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


ROW = {"id": "a", "dataset": "d", "claim": "c", "evidence": "e", "label": 1}


def test_demo_samples_load(demo_data):
    t = load_pairs(demo_data / "attributionbench_id.jsonl")
    assert len(t) == 200 and int(t.labels.sum()) == 100
    assert len(set(t.groups)) == 66
    assert sorted(set(t.sources)) == ["AttributedQA", "ExpertQA", "LFQA", "Stanford-GenSearch"]
    assert t.origin[0].rows == 200 and len(t.origin[0].sha256) == 64


def test_demo_is_packaged_with_constructs():
    t = load_demo()
    assert len(t) == 400
    assert set(t.constructs) == {"attribution", "boundary-dialogue"}


def test_missing_column_names_file_and_column(tmp_path):
    p = _write_jsonl(tmp_path / "x.jsonl", [{"id": "a", "claim": "c", "label": 1}])
    with pytest.raises(DataError, match=r"x\.jsonl.*missing column 'evidence'.*--evidence-col"):
        load_pairs(p)


def test_empty_evidence_names_row(tmp_path):
    p = _write_jsonl(tmp_path / "x.jsonl", [ROW, {**ROW, "id": "b", "evidence": "   "}])
    with pytest.raises(DataError, match=r"row 2, field 'evidence': evidence is empty"):
        load_pairs(p)


def test_labels_need_explicit_mapping(tmp_path):
    p = _write_jsonl(tmp_path / "x.jsonl",
                     [{**ROW, "label": "attributable"}, {**ROW, "id": "b", "label": "not attributable"}])
    with pytest.raises(DataError, match="--label-map"):
        load_pairs(p)
    t = load_pairs(p, label_map={"attributable": 1, "not attributable": 0})
    assert t.labels.tolist() == [1, 0]


@pytest.mark.parametrize("raw,want",
                         [(0, 0), (1, 1), (True, 1), (False, 0), ("true", 1), ("False", 0), ("1", 1), (1.0, 1)])
def test_implicit_binary_labels(raw, want):
    assert parse_label(raw, None, path="f", row=1, field="label") == want


@pytest.mark.parametrize("raw", [2, -1, 0.5, "yes", None, float("nan"), ""])
def test_non_binary_labels_rejected(raw):
    with pytest.raises(DataError, match="row 3"):
        parse_label(raw, None, path="f", row=3, field="label")


def test_duplicate_ids_rejected_across_files(tmp_path):
    a = _write_jsonl(tmp_path / "a.jsonl", [ROW])
    b = _write_jsonl(tmp_path / "b.jsonl", [ROW])
    with pytest.raises(DataError, match="duplicated id 'a'"):
        load_pairs([a, b])


def test_invalid_json_line_reported(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text(json.dumps(ROW) + "\n{not json\n")
    with pytest.raises(DataError, match=r"row 2: invalid JSON"):
        load_pairs(p)


def test_csv_parquet_and_column_mapping(tmp_path):
    frame = pd.DataFrame({"uid": ["1", "2"], "hyp": ["a cat, \"quoted\"\nnewline", "b"], "premise": ["x", "y"],
                          "gold": [1, 0], "cluster": ["g", "g"]})
    cols = {"id": "uid", "claim": "hyp", "evidence": "premise", "label": "gold", "group": "cluster"}
    frame.to_csv(tmp_path / "p.csv", index=False)
    frame.to_parquet(tmp_path / "p.parquet")
    for name in ("p.csv", "p.parquet"):
        t = load_pairs(tmp_path / name, columns=cols)
        assert t.claims[0] == "a cat, \"quoted\"\nnewline"
        assert t.labels.tolist() == [1, 0] and t.groups == ["g", "g"] and t.datasets == ["p", "p"]


def test_group_defaults_to_id_and_slices(tmp_path):
    p = _write_jsonl(tmp_path / "x.jsonl", [ROW, {**ROW, "id": "b", "source": "s1", "label": 0}])
    t = load_pairs(p)
    assert t.groups == ["a", "b"]
    assert t.slice_keys("source") == ["d", "d:s1"]
    sub = t.take(np.array([1]))
    assert sub.ids == ["b"] and sub.labels.tolist() == [0]
