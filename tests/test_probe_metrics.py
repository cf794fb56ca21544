import json

import numpy as np
import pytest

from attrib_audit.data.errors import DataError
from attrib_audit.probe.metrics import answer_metrics, rouge_l, str_em
from attrib_audit.probe.records import AsqaExample, QAPair, load_asqa, load_outputs
from attrib_audit.text.answers import citation_indices, normalize_answer, strip_citations


def _ex(*aliases: tuple[str, ...], longs=("ref",)) -> AsqaExample:
    return AsqaExample(id="e", question="q?", qa_pairs=tuple(QAPair("", a) for a in aliases),
                       long_answers=tuple(longs), docs=())


def test_normalize_answer_is_squad_normalisation():
    assert normalize_answer("The  Eiffel-Tower, in PARIS!") == "eiffeltower in paris"
    assert normalize_answer("an apple a day") == "apple day"


def test_str_em_counts_qa_pairs_with_any_alias_as_substring():
    ex = _ex(("1902",), ("Idris Vane", "I. Vane"), ("Brenna",))
    # pair 1: "1902" found; pair 2: second alias "i vane" matches "I. Vane" after normalisation; pair 3 absent
    assert str_em("It opened in 1902 [1], says I. Vane.", ex) == pytest.approx(2 / 3)
    assert str_em("Nothing relevant.", ex) == 0.0
    # ASQA's str_em is a substring test on normalised text, so "1902" is found inside "19021"
    assert str_em("code 19021", _ex(("1902",))) == 1.0
    # citation markers are removed before matching: "[1]" must not make "1" match
    assert str_em("no digits here [1]", _ex(("1",))) == 0.0


def test_rouge_l_hand_computed_and_max_over_references():
    # reference tokens: the cat sat it ran away (6); prediction: the cat sat it ran (5); LCS 5
    # P = 1, R = 5/6, F = 2PR/(P+R) = 10/11
    assert rouge_l("The cat sat [1]. It ran.", ["The cat sat. It ran away."]) == pytest.approx(10 / 11)
    assert rouge_l("The cat sat. It ran.", ["Dogs bark loudly.", "The cat sat. It ran away."]) == pytest.approx(10 / 11)
    assert rouge_l("", ["a reference"]) == 0.0


def test_citations_are_counted_per_number():
    assert citation_indices("A [1]. B [2][3]. C [1, 4].") == [1, 2, 3, 1, 4]
    assert citation_indices("no markers, [x] or [] here") == []
    assert strip_citations("A [1]. B [2][3].") == "A. B."


def test_answer_metrics_align_with_ids():
    examples = {"a": _ex(("x",), longs=("x y",)), "b": _ex(("z",), longs=("z",))}
    m = answer_metrics({"a": "x [1][2]", "b": "nope"}, examples, ["b", "a"])
    np.testing.assert_allclose(m["qa_em"], [0.0, 1.0])
    np.testing.assert_allclose(m["citations"], [0.0, 2.0])
    assert m["rouge_l"][1] == pytest.approx(2 / 3)  # P=1, R=1/2


def _write(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


GOOD = {"sample_id": "s1", "question": "q?", "qa_pairs": [{"question": "q1", "short_answers": ["Alpha"]}],
        "annotations": [{"long_answer": "A is the answer."}], "docs": [{"title": "T", "text": "A text."}]}


def test_load_asqa_reads_alce_layout_and_long_answers_alias(tmp_path):
    alt = {"id": "s2", "ambiguous_question": "q2?", "qa_pairs": [{"short_answers": ["B"]}], "long_answers": ["B."]}
    ex = load_asqa(_write(tmp_path / "d.jsonl", [GOOD, alt]))
    assert list(ex) == ["s1", "s2"]
    assert ex["s1"].docs[0].as_evidence() == "T: A text." and ex["s2"].question == "q2?" and ex["s2"].docs == ()


@pytest.mark.parametrize("bad, field", [
    ({**GOOD, "qa_pairs": []}, "qa_pairs"),
    ({**GOOD, "qa_pairs": [{"short_answers": ["the"]}]}, "qa_pairs[0].short_answers[0]"),
    ({**GOOD, "annotations": [{"long_answer": ""}]}, "annotations[0].long_answer"),
    ({**GOOD, "docs": [{"title": "T"}]}, "docs[0].text"),
])
def test_load_asqa_errors_name_row_and_field(tmp_path, bad, field):
    with pytest.raises(DataError) as err:
        load_asqa(_write(tmp_path / "d.jsonl", [GOOD | {"sample_id": "s0"}, bad]))
    assert err.value.row == 2 and err.value.field == field


def test_load_outputs_keeps_empty_answers_and_rejects_duplicates(tmp_path):
    out = load_outputs(_write(tmp_path / "o.jsonl", [{"id": "a", "output": ""}, {"sample_id": 7, "answer": "x"}]))
    assert out == {"a": "", "7": "x"}
    with pytest.raises(DataError, match="duplicated"):
        load_outputs(_write(tmp_path / "d.jsonl", [{"id": "a", "output": "x"}, {"id": "a", "output": "y"}]))
    with pytest.raises(DataError) as err:
        load_outputs(_write(tmp_path / "m.jsonl", [{"id": "a", "text": "x"}]))
    assert err.value.field == "output" and err.value.row == 1
