"""Provenance loaders: small files in each public format, our JSONL schema, and errors that name file/row/field."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from attrib_audit.data.errors import DataError
from attrib_audit.provenance.loaders import load_provenance

WICE = Path(__file__).parent / "data" / "wice_provenance.jsonl"


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _ours(i: int, **extra) -> dict:
    return {"id": f"ex{i}", "dataset": "mine", "question": f"Claim number {i} about cats.", "answers": [],
            "passages": [{"id": "s0", "title": "T", "text": "Cats sleep a lot."},
                         {"id": "s1", "title": "T", "text": "Dogs bark."},
                         {"id": "s2", "title": "T", "text": "   "}],
            "gold": ["s0"], **extra}


def test_our_schema_claim_is_the_unit_and_empty_passages_are_counted(tmp_path):
    ps = load_provenance(_jsonl(tmp_path / "p.jsonl", [_ours(1, claim_wiki_title="Cat"), _ours(2)]))
    ex = ps.examples[0]
    assert ex.units == ("Claim number 1 about cats.",) and ex.gold == frozenset({"s0"})
    assert [p.id for p in ex.passages] == ["s0", "s1"] and ex.group == "Cat" and ps.examples[1].group == "ex2"
    assert ps.skipped == {"empty_passage": 2} and ps.origin[0].format == "jsonl"


def test_our_schema_answer_sentences_and_citations(tmp_path):
    row = _ours(1, units=["Cats sleep.", "Dogs bark loudly."], citations=[["s0"], []], answers=["cats"])
    ex = load_provenance(_jsonl(tmp_path / "p.jsonl", [row])).examples[0]
    assert ex.units == ("Cats sleep.", "Dogs bark loudly.") and ex.citations == (frozenset({"s0"}), frozenset())
    row = _ours(1, answer="Cats sleep a lot. Dogs bark.")
    assert load_provenance(_jsonl(tmp_path / "q.jsonl", [row])).examples[0].units == ("Cats sleep a lot.", "Dogs bark.")


@pytest.mark.parametrize("bad, field", [
    ({"gold": ["s9"]}, "gold"),
    ({"passages": [{"id": "s0", "text": "a"}, {"id": "s0", "text": "b"}], "gold": []}, "passages"),
    ({"units": ["a"], "citations": [["s7"]]}, "citations"),
    ({"passages": None}, "passages"),
])
def test_our_schema_errors_name_file_row_field(tmp_path, bad, field):
    path = _jsonl(tmp_path / "bad.jsonl", [_ours(1), {**_ours(2), **bad}])
    with pytest.raises(DataError) as err:
        load_provenance(path)
    assert err.value.row == 2 and err.value.field == field and str(path) in str(err.value)


def test_duplicate_example_ids_are_an_error(tmp_path):
    with pytest.raises(DataError, match="appears 2 times"):
        load_provenance(_jsonl(tmp_path / "d.jsonl", [_ours(1), _ours(1)]))


def test_alce_asqa_units_citations_and_gold(tmp_path):
    rec = {"question": "Who won?", "sample_id": "-123",
           "qa_pairs": [{"question": "q1", "short_answers": ["The Lakers"]},
                        {"question": "q2", "short_answers": ["1987"]}],
           "docs": [{"title": "A", "text": "The Lakers won in 1987.", "answers_found": [1, 1]},
                    {"title": "B", "text": "Nothing here.", "answers_found": [0, 0]},
                    {"title": "C", "text": "Celtics history.", "answers_found": [0, 0]}],
           "answer": "gold long answer.",
           "output": "The Lakers won the title [1][3]. It happened in 1987 [2, 7]."}
    path = tmp_path / "asqa_eval.json"
    path.write_text(json.dumps([rec]))
    ps = load_provenance(path)
    ex = ps.examples[0]
    assert ps.origin[0].format == "alce" and ex.id == "-123"
    assert ex.units == ("The Lakers won the title.", "It happened in 1987.")
    assert ex.citations == (frozenset({"1", "3"}), frozenset({"2"}))
    assert ex.gold == frozenset({"1"}) and ex.answers == ("The Lakers", "1987")
    assert ps.skipped == {"citation_out_of_range": 1}
    # without answers_found, gold = docs containing a normalised short answer; units from the gold `answer`
    for d in rec["docs"]:
        del d["answers_found"]
    del rec["output"]
    path.write_text(json.dumps([rec]))
    ex = load_provenance(path).examples[0]
    assert ex.gold == frozenset({"1"}) and ex.units == ("gold long answer.",)


def test_hotpotqa_original_and_hf_layouts(tmp_path):
    orig = {"_id": "h1", "question": "Which magazine was started first?", "answer": "Arthur's Magazine",
            "supporting_facts": [["Arthur's Magazine", 0], ["First for Women", 0]],
            "context": [["Arthur's Magazine", ["Arthur's Magazine was a monthly.", " It began in 1844."]],
                        ["First for Women", ["First for Women is a magazine."]],
                        ["Radio City", ["Radio City is a station."]]]}
    path = tmp_path / "hotpot_dev_distractor_v1.json"
    path.write_text(json.dumps([orig]))
    ex = load_provenance(path).examples[0]
    assert ex.gold == frozenset({"Arthur's Magazine", "First for Women"}) and len(ex.passages) == 3
    assert ex.units == ("Which magazine was started first? Arthur's Magazine",) and ex.answers == ("Arthur's Magazine",)
    assert ex.passages[0].text == "Arthur's Magazine was a monthly. It began in 1844."
    hf = {"id": "h1", "question": orig["question"], "answer": orig["answer"], "type": "comparison",
          "supporting_facts": {"title": ["Arthur's Magazine", "First for Women"], "sent_id": [0, 0]},
          "context": {"title": [c[0] for c in orig["context"]], "sentences": [c[1] for c in orig["context"]]}}
    ex2 = load_provenance(_jsonl(tmp_path / "hotpot.jsonl", [hf])).examples[0]
    assert (ex2.gold, ex2.units, [p.text for p in ex2.passages]) == (ex.gold, ex.units, [p.text for p in ex.passages])
    bad = {**orig, "supporting_facts": [["Nope", 0]]}
    path.write_text(json.dumps([orig, bad]))
    with pytest.raises(DataError) as err:
        load_provenance(path)
    assert err.value.row == 2 and err.value.field == "supporting_facts"


def _marco(qid: int, answers, well, selected) -> dict:
    return {"query": f"what is thing {qid}", "query_id": qid, "query_type": "DESCRIPTION", "answers": answers,
            "wellFormedAnswers": well,
            "passages": {"is_selected": selected,
                         "passage_text": [f"passage {j} of {qid}" for j in range(len(selected))],
                         "url": [f"http://x/{j}" for j in range(len(selected))]}}


def test_msmarco_hf_layout_parquet_and_skips(tmp_path):
    rows = [_marco(1, ["A thing is a gadget."], ["A thing is a small gadget. It is blue."], [0, 1, 0]),
            _marco(2, ["No Answer Present."], [], [0, 0, 0]),
            _marco(3, ["Yes."], [], [0, 0])]
    path = tmp_path / "msmarco.parquet"
    pd.DataFrame(rows).to_parquet(path)
    ps = load_provenance(path)
    assert ps.origin[0].format == "msmarco" and len(ps) == 1
    ex = ps.examples[0]
    assert ex.units == ("A thing is a small gadget.",
                        "It is blue.") and ex.gold == frozenset({"1"}) and ex.answers == ()
    assert ps.skipped == {"no_answer_present": 1, "no_selected_passage": 1}


def test_msmarco_original_columnwise_json(tmp_path):
    data = {"query": {"0": "what is a gadget", "1": "define foo"}, "query_id": {"0": 10, "1": 11},
            "answers": {"0": ["A gadget is a device."], "1": ["Foo is a word."]},
            "wellFormedAnswers": {"0": "[]", "1": "[]"},
            "passages": {"0": [{"is_selected": 1, "passage_text": "A gadget is a small device.", "url": "u"},
                               {"is_selected": 0, "passage_text": "Gadgets are sold online.", "url": "v"}],
                         "1": [{"is_selected": 0, "passage_text": "Foo bar.", "url": "u"},
                               {"is_selected": 1, "passage_text": "Foo is a placeholder word.", "url": "v"}]}}
    path = tmp_path / "dev_v2.1.json"
    path.write_text(json.dumps(data))
    ps = load_provenance(path)
    assert [e.id for e in ps.examples] == ["10", "11"] and ps.examples[1].gold == frozenset({"1"})
    assert ps.examples[0].units == ("A gadget is a device.",)


def test_unknown_format_and_limit(tmp_path):
    with pytest.raises(DataError, match="cannot tell the format"):
        load_provenance(_jsonl(tmp_path / "x.jsonl", [{"foo": 1}]))
    ps = load_provenance(_jsonl(tmp_path / "p.jsonl", [_ours(i) for i in range(5)]), limit=2)
    assert len(ps) == 2 and ps.skipped["beyond_limit"] == 3


def test_wice_provenance_sample_loads():
    ps = load_provenance(WICE)
    assert len(ps) == 24 and ps.n_units == 24
    assert len({e.group for e in ps.examples}) == 23
    assert all(e.gold and e.gold <= {p.id for p in e.passages} for e in ps.examples)
