"""Each benchmark adapter on a small fixture written in its exact native format, odd cases included."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from attrib_audit.data.adapters import PAIRS, AdapterOptions, detect_format, load_wice_provenance
from attrib_audit.data.adapters.load import load_native_file, resolve_format
from attrib_audit.data.constructs import CONSTRUCTS, unknown_construct_note
from attrib_audit.data.errors import DataError
from attrib_audit.data.loaders import iter_rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def load(path: Path, fmt: str, **kw):
    logs: list[str] = []
    records, origin = load_native_file(path, fmt, log=logs.append, **kw)
    return {r.id: r for r in records}, origin, logs


# ---------------------------------------------------------------- attributionbench
def ab_rows() -> list[dict]:
    return [
        {"id": "a1", "question": "q1", "claim": "c1", "references": ["r1", "", "r2"],
         "attribution_label": "attributable",
         "src_dataset": "LFQA", "extra_field": {"nested": 1}},
        {"id": "a2", "question": "q1", "claim": "c2", "references": ["r3"], "attribution_label": " Not Attributable",
         "src_dataset": "LFQA"},
        {"id": "a3", "question": "q2", "claim": "c3", "references": [], "attribution_label": "attributable",
         "src_dataset": "ExpertQA"},
        {"id": "a4", "question": "q2", "claim": "c4", "references": ["  ", ""], "attribution_label": "attributable",
         "src_dataset": "ExpertQA"},
        {"id": "a5", "question": "q3", "claim": "c5", "references": ["r5"], "attribution_label": None,
         "src_dataset": "ExpertQA"},
        {"id": "a6", "question": "q3", "claim": "c6", "references": ["r6"], "src_dataset": "ExpertQA"},
    ]


def test_attributionbench_maps_labels_joins_references_and_counts_skips(tmp_path):
    recs, origin, logs = load(write_jsonl(tmp_path / "ab.jsonl", ab_rows()), "attributionbench")
    assert set(recs) == {"a1", "a2"}
    assert recs["a1"].label == 1 and recs["a2"].label == 0
    assert recs["a1"].evidence == "r1\n\nr2"  # empty references are not joined in
    assert recs["a1"].source == "LFQA" and recs["a1"].question == "q1"
    assert recs["a1"].group == recs["a2"].group  # one cluster per question
    assert recs["a1"].construct == "attribution" and recs["a1"].dataset == "attributionbench"
    assert origin.skip_counts == {"no non-empty reference": 2, "label missing (attribution_label)": 2}
    assert origin.native_rows == 6 and origin.rows == 2 and origin.n_skipped == 4
    assert "skipped 4" in logs[0] and "no non-empty reference: 2" in logs[0]


def test_attributionbench_unknown_label_names_row_and_field(tmp_path):
    rows = ab_rows()[:2] + [{**ab_rows()[0], "id": "a9", "attribution_label": "maybe"}]
    with pytest.raises(DataError) as err:
        load(write_jsonl(tmp_path / "ab.jsonl", rows), "attributionbench")
    assert err.value.row == 3 and err.value.field == "attribution_label" and "'maybe'" in str(err.value)


def test_attributionbench_references_from_parquet_and_csv(tmp_path):
    frame = pd.DataFrame(ab_rows()[:2]).drop(columns=["extra_field"])
    frame.to_parquet(tmp_path / "ab.parquet")
    recs, _, _ = load(tmp_path / "ab.parquet", "attributionbench")  # list column -> numpy arrays
    assert recs["a1"].evidence == "r1\n\nr2"
    frame.assign(references=frame.references.map(json.dumps)).to_csv(tmp_path / "ab.csv", index=False)
    recs, _, _ = load(tmp_path / "ab.csv", "attributionbench")  # JSON list in a CSV cell
    assert recs["a1"].evidence == "r1\n\nr2" and recs["a2"].label == 0


# ---------------------------------------------------------------- hagrid
def hagrid_rows() -> list[dict]:
    quotes = [{"idx": 1, "docid": "d1", "text": "Quote one."}, {"idx": 2, "docid": "d2", "text": "Quote two."}]
    return [
        {"query_id": "7", "query": "who?", "quotes": quotes, "answers": [
            {"answer": "...", "attributable": 1, "informative": 1, "sentences": [
                {"index": 0, "text": "First claim [1].", "attributable": 1, "informative": 1},
                {"index": 1, "text": "Second claim [1][2].", "attributable": 0, "informative": 1},
                {"index": 2, "text": "Third claim [1, 2]", "attributable": 1, "informative": 1},
                {"index": 3, "text": "Unlabelled [1].", "attributable": None, "informative": None},
                {"index": 4, "text": "No citation.", "attributable": 1, "informative": 1},
                {"index": 5, "text": "Bad citation [9].", "attributable": 0, "informative": 1},
            ]},
            {"answer": "...", "attributable": None, "informative": 0, "sentences": []},
        ]},
        {"query_id": "8", "query": "what?", "quotes": quotes, "answers": []},
    ]


def test_hagrid_one_pair_per_labelled_citing_sentence(tmp_path):
    recs, origin, _ = load(write_jsonl(tmp_path / "hagrid_dev.jsonl", hagrid_rows()), "hagrid")
    assert sorted(recs) == ["hagrid:7:0:0", "hagrid:7:0:1", "hagrid:7:0:2"]
    first, second, third = (recs[f"hagrid:7:0:{i}"] for i in range(3))
    assert (first.claim, first.evidence, first.label) == ("First claim.", "Quote one.", 1)
    assert (second.claim, second.evidence, second.label) == ("Second claim.", "Quote one.\n\nQuote two.", 0)
    assert third.evidence == "Quote one.\n\nQuote two." and third.claim == "Third claim"
    assert first.question == "who?" and first.group == "hagrid:7" and first.construct == "attribution"
    assert origin.skip_counts == {"sentence unlabelled (attributable is null)": 1, "sentence cites no quote": 1,
                                 "sentence cites a quote missing from quotes": 1, "answer without sentences": 1,
                                 "query without answers": 1}


# ---------------------------------------------------------------- vitaminc
def vitc_rows() -> list[dict]:
    base = {"page": "P", "revision_type": "real"}
    return [
        {"unique_id": "u1", "case_id": "k1", "claim": "c1", "evidence": "e1", "label": "SUPPORTS", **base},
        {"unique_id": "u2", "case_id": "k1", "claim": "c2", "evidence": "e1", "label": "REFUTES", **base},
        {"unique_id": "u3", "case_id": "k2", "claim": "c3", "evidence": "e3", "label": "NOT ENOUGH INFO", **base},
        {"unique_id": "u4", "case_id": "k2", "claim": "c4", "evidence": "e4", "label": "", **base},
        {"unique_id": "u5", "case_id": "k3", "claim": "c5", "evidence": "", "label": "SUPPORTS", **base},
    ]


def test_vitaminc_drops_nei_by_default_and_maps_it_to_zero_on_request(tmp_path):
    path = write_jsonl(tmp_path / "vitc.jsonl", vitc_rows())
    recs, origin, _ = load(path, "vitaminc")
    assert {k: r.label for k, r in recs.items()} == {"u1": 1, "u2": 0}
    assert recs["u1"].group == recs["u2"].group == "vitaminc:k1" and recs["u1"].construct == "fact-check"
    assert origin.skip_counts == {"label 'not enough info' dropped": 1, "label missing (label)": 1,
                                     "empty evidence": 1}
    recs, origin, _ = load(path, "vitaminc", options=AdapterOptions(nei="0"))
    assert recs["u3"].label == 0 and "label 'not enough info' dropped" not in origin.skip_counts


# ---------------------------------------------------------------- begin (raw TSV)
BEGIN_HEADER = ["model_name", "data_source", "knowledge", "message", "response", "begin_label"]


def write_raw_tsv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    path.write_text("\n".join("\t".join(r) for r in [header, *rows]) + "\n", encoding="utf-8")
    return path


def test_begin_tsv_reads_quotes_literally_drops_generic_and_counts(tmp_path):
    rows = [
        ["t5", "wow", '"Bring It On" is a 2000 film', 'did you see "bring it on?', '"bring it on" is from 2000',
         "Fully attributable"],
        ["gpt2", "wow", 'the "king of rock', "hi", "i like him", "Not fully attributable"],
        ["ctrl", "wow", "k3", "m3", "that's cool", "Generic"],
        ["doha", "wow", "k4", "m4", "r4", ""],
    ]
    recs, origin, _ = load(write_raw_tsv(tmp_path / "begin_dev_wow.tsv", BEGIN_HEADER, rows), "begin")
    assert len(recs) == 2
    r1, r2 = recs["begin_dev_wow:1"], recs["begin_dev_wow:2"]
    assert r1.evidence == '"Bring It On" is a 2000 film' and r1.claim == '"bring it on" is from 2000'
    assert r1.question == 'did you see "bring it on?' and r1.label == 1 and r1.source == "wow/t5"
    assert (r1.system, r2.system) == ("t5", "gpt2")  # the generating model, for the system-level audit
    assert r2.evidence == 'the "king of rock' and r2.label == 0 and r2.construct == "boundary-dialogue"
    assert origin.skip_counts == {"label 'generic' dropped": 1, "label missing (begin_label)": 1}
    # the generic (quote-aware) TSV reader would have altered these fields
    generic = dict(iter_rows(tmp_path / "begin_dev_wow.tsv"))
    assert generic[1]["knowledge"] != r1.evidence


def test_begin_tsv_wrong_field_count_names_the_row(tmp_path):
    rows = [["t5", "wow", "k", "m", "r", "Fully attributable"], ["t5", "wow", "k\tsplit", "m", "r", "Generic"]]
    with pytest.raises(DataError) as err:
        load(write_raw_tsv(tmp_path / "b.tsv", BEGIN_HEADER, rows), "begin")
    assert err.value.row == 2 and "7 tab-separated fields" in str(err.value)


def test_begin_extra_columns_and_jsonl_form(tmp_path):
    rows = [["t5", "wow", "k", "m", "r", "Fully attributable", "x"],
            ["t5", "wow", "k", "m", "r2", "Not fully attributable", "y"]]
    recs, _, _ = load(write_raw_tsv(tmp_path / "b.tsv", BEGIN_HEADER + ["extra"], rows), "begin")
    assert [r.label for r in recs.values()] == [1, 0]
    recs, _, _ = load(write_jsonl(tmp_path / "b.jsonl", [dict(zip(BEGIN_HEADER, r)) for r in rows]), "begin")
    assert [r.label for r in recs.values()] == [1, 0]


# ---------------------------------------------------------------- aggrefact / summac
def test_aggrefact_labels_as_given_source_is_dataset(tmp_path):
    rows = [{"dataset": "AggreFact-CNN", "doc": "d1", "claim": "c1", "label": 1},
            {"dataset": "AggreFact-CNN", "doc": "d1", "claim": "c2", "label": 0},
            {"dataset": "Wice", "doc": "d2", "claim": "c3", "label": None, "contamination": "x"}]
    recs, origin, _ = load(write_jsonl(tmp_path / "llm_aggrefact.jsonl", rows), "aggrefact")
    assert [(r.label, r.source, r.construct) for r in recs.values()] == [
        (1, "AggreFact-CNN", "boundary-grounding"), (0, "AggreFact-CNN", "boundary-grounding")]
    assert len({r.group for r in recs.values()}) == 1 and origin.skip_counts == {"label missing (label)": 1}
    rows.append({"dataset": "X", "doc": "d", "claim": "c", "label": 2})
    with pytest.raises(DataError) as err:
        load(write_jsonl(tmp_path / "bad.jsonl", rows), "aggrefact")
    assert err.value.row == 4 and err.value.field == "label"


def test_summac_document_claim_label(tmp_path):
    rows = [{"document": "d1", "claim": "c1", "label": 1, "cut": "test", "dataset": "cogensumm"},
            {"document": "d1", "claim": "c2", "label": 0, "cut": "test", "dataset": "cogensumm"},
            {"document": "d2", "claim": "", "label": 0, "cut": "test", "dataset": "xsumfaith"}]
    recs, origin, _ = load(write_jsonl(tmp_path / "summac.jsonl", rows), "summac")
    assert [(r.label, r.source) for r in recs.values()] == [(1, "cogensumm"), (0, "cogensumm")]
    assert origin.construct == "boundary-summarisation" and origin.skip_counts == {"empty claim": 1}


# ---------------------------------------------------------------- true
def test_true_construct_and_dataset_from_file_name(tmp_path):
    frame = pd.DataFrame({"id": ["s1", "s1", "s2"], "grounding": ["g1", "g1", "g2"],
                          "generated_text": ["t1", "t2", "t3"], "label": [1, 0, 1]})
    frame.to_csv(tmp_path / "summeval_download.csv")  # pandas index column, duplicated ids, as TRUE writes them
    recs, origin, _ = load(tmp_path / "summeval_download.csv", "true")
    assert [r.label for r in recs.values()] == [1, 0, 1]
    assert {r.dataset for r in recs.values()} == {"true-summeval"} and origin.construct == "boundary-summarisation"
    frame.to_csv(tmp_path / "qags_xsum_download.csv")
    assert load(tmp_path / "qags_xsum_download.csv", "true")[1].dataset == "true-qags_xsum"
    frame.to_csv(tmp_path / "vitc_dev_download.csv")
    assert load(tmp_path / "vitc_dev_download.csv", "true")[1].construct == "fact-check"
    with_nan = pd.DataFrame({"grounding": ["g1", "g2", "g3"], "generated_text": ["t1", "t2", "t3"],
                             "label": [1, None, 0]})
    with_nan.to_csv(tmp_path / "frank_valid_download.csv")  # pandas writes the labels as 1.0 / "" / 0.0
    recs, origin, _ = load(tmp_path / "frank_valid_download.csv", "true")
    assert [r.label for r in recs.values()] == [1, 0] and origin.skip_counts == {"label missing (label)": 1}
    frame.to_csv(tmp_path / "mine.csv")
    with pytest.raises(DataError, match="pass --construct"):
        load(tmp_path / "mine.csv", "true")
    assert load(tmp_path / "mine.csv", "true", construct="fact-check")[1].construct == "fact-check"


# ---------------------------------------------------------------- wice
def wice_row(i: int, label: str, support: list[list[int]]) -> dict:
    return {"label": label, "supporting_sentences": support, "claim": f"claim {i}",
            "evidence": ["(meta data) TITLE:  Page  ", f"Sentence a{i}.", f"Sentence b{i}."],
            "meta": {"id": f"dev{i}", "claim_title": f"Article {i // 2}", "claim_section": "s", "claim_context": "c"}}


def test_wice_labels_partial_flag_and_provenance(tmp_path):
    rows = [wice_row(0, "supported", [[1], [1, 2]]), wice_row(1, "partially_supported", [[2]]),
            wice_row(2, "not_supported", [[]]), {**wice_row(3, "supported", [[1]]), "label": None}]
    path = write_jsonl(tmp_path / "dev.jsonl", rows)
    recs, origin, _ = load(path, "wice")
    assert {k: r.label for k, r in recs.items()} == {"wice-dev0": 1, "wice-dev1": 0, "wice-dev2": 0}
    assert recs["wice-dev0"].evidence == "(meta data) TITLE:  Page   Sentence a0. Sentence b0."
    assert recs["wice-dev0"].group == recs["wice-dev1"].group != recs["wice-dev2"].group
    assert origin.skip_counts == {"label missing (label)": 1}
    recs, _, _ = load(path, "wice", options=AdapterOptions(wice_partial=1))
    assert recs["wice-dev1"].label == 1
    logs: list[str] = []
    prov = load_wice_provenance(path, log=logs.append)
    assert [p["id"] for p in prov] == ["wiceprov-dev0", "wiceprov-dev1"]
    assert prov[0]["gold"] == ["s1", "s2"] and prov[0]["passages"][1] == {"id": "s1", "title": "Page",
                                                                          "text": "Sentence a0."}
    assert prov[0]["question"] == "claim 0" and prov[0]["answers"] == [] and prov[0]["claim_wiki_title"] == "Article 0"
    assert "skipped 2" in logs[0] and "no supporting sentences: 1" in logs[0]


def test_wice_provenance_bad_index_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "dev.jsonl", [wice_row(0, "supported", [[7]])])
    with pytest.raises(DataError) as err:
        load_wice_provenance(path, log=None)
    assert err.value.row == 1 and err.value.field == "supporting_sentences"


# ---------------------------------------------------------------- detection and registry
@pytest.mark.parametrize("fmt, columns", [
    ("attributionbench", ["id", "question", "claim", "references", "attribution_label", "src_dataset"]),
    ("hagrid", ["query_id", "query", "quotes", "answers"]),
    ("vitaminc", ["unique_id", "case_id", "claim", "evidence", "label", "page", "revision_type"]),
    ("begin", BEGIN_HEADER),
    ("aggrefact", ["dataset", "doc", "claim", "label"]),
    ("summac", ["document", "claim", "label", "dataset", "cut"]),
    ("wice", ["label", "supporting_sentences", "claim", "evidence", "meta"]),
    ("true", ["", "grounding", "generated_text", "label"]),
    (PAIRS, ["id", "dataset", "claim", "evidence", "label", "group"]),
])
def test_detect_format_from_fields(fmt, columns):
    assert detect_format(columns) == fmt


def test_detection_refuses_ambiguous_fields():
    with pytest.raises(DataError, match="several formats"):
        detect_format(["doc", "document", "claim", "label"])
    with pytest.raises(DataError, match="--format pairs"):
        detect_format(["id", "dataset", "claim", "evidence", "label", "document"])


def test_resolve_format_reads_only_the_header_and_says_what_it_found(tmp_path):
    path = write_raw_tsv(tmp_path / "b.tsv", BEGIN_HEADER, [['t5', 'wow', '"k', 'm', 'r', 'Generic']])
    logs: list[str] = []
    assert resolve_format("auto", path, logs.append) == "begin"
    assert "detected begin" in logs[0]
    assert resolve_format("summac", path, logs.append) == "summac"


def test_every_adapter_construct_is_registered():
    from attrib_audit.data.adapters import ADAPTERS
    from attrib_audit.data.adapters.true import TRUE_FILES

    for a in ADAPTERS.values():
        assert a.construct in CONSTRUCTS or a.construct_for is not None, a.name
    assert set(TRUE_FILES.values()) <= set(CONSTRUCTS)
    assert unknown_construct_note("attribution") is None and "not registered" in unknown_construct_note("atribution")


def test_all_skipped_is_an_error_naming_the_reasons(tmp_path):
    rows = [{**r, "references": []} for r in ab_rows()]
    with pytest.raises(DataError, match="all 6 attributionbench rows were skipped"):
        load(write_jsonl(tmp_path / "ab.jsonl", rows), "attributionbench")


def test_malformed_nested_fields_name_row_and_field(tmp_path):
    rows = hagrid_rows()
    rows[1] = {**rows[1], "answers": ["not an object"]}
    with pytest.raises(DataError) as err:
        load(write_jsonl(tmp_path / "h.jsonl", rows), "hagrid")
    assert err.value.row == 2 and err.value.field == "answers"
    path = write_jsonl(tmp_path / "w.jsonl", [wice_row(0, "supported", [["one"]])])
    with pytest.raises(DataError) as err:
        load_wice_provenance(path, log=None)
    assert err.value.field == "supporting_sentences" and "'one'" in str(err.value)
