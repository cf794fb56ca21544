"""The published meta-evaluation layouts (SummEval's aligned annotations, FRANK's pair of files) converted to rating
rows, checked against the fixtures' own numbers, and audited: the correlation section on the converted files."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from attrib_audit.data.errors import DataError
from attrib_audit.data.metaeval import frank_rows, summeval_rows

SRC = Path(__file__).resolve().parents[1] / "src"
DATA = Path(__file__).resolve().parent / "data" / "metaeval"
ALIGNED = DATA / "model_annotations.aligned.jsonl"
SCORED = DATA / "model_annotations.aligned.paired.scored.jsonl"
HUMAN = DATA / "human_annotations.json"
METRICS = DATA / "baseline_factuality_metrics_outputs.json"


def native_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attrib_audit", *args], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, timeout=600)


@pytest.mark.parametrize("aspect", ["consistency", "coherence", "fluency", "relevance"])
@pytest.mark.parametrize("annotators", ["expert", "turker"])
def test_summeval_rows_are_one_per_article_and_system_rated_by_the_mean(aspect, annotators):
    conv = summeval_rows(ALIGNED, aspect=aspect, annotators=annotators)
    native = native_lines(ALIGNED)
    assert len(conv.rows) == len(native) == 12
    for row, line in zip(conv.rows, native):
        notes = line[f"{annotators}_annotations"]
        assert len(notes) == (3 if annotators == "expert" else 5)
        assert row["rating"] == pytest.approx(np.mean([n[aspect] for n in notes]))
        assert (row["system"], row["group"], row["summary"]) == (line["model_id"], line["id"], line["decoded"])
        assert "claim" not in row and "evidence" not in row  # the aligned file has no article
    assert {r["system"] for r in conv.rows} == {"M0", "M11", "M23"} and len({r["group"] for r in conv.rows}) == 4
    assert not conv.texts and conv.score_columns == () and "cannot score" in conv.notes[0]


def test_summeval_scored_paired_file_carries_texts_and_flattened_metric_scores():
    conv = summeval_rows(SCORED)
    assert conv.texts and conv.score_columns == ("rouge_1_f_score", "rouge_l_f_score", "bert_score_f1", "supert",
                                                 "blanc")
    assert conv.missing == {"rouge_1_f_score": 0, "rouge_l_f_score": 0, "bert_score_f1": 0, "supert": 0, "blanc": 1}
    for row, line in zip(conv.rows, native_lines(SCORED)):
        m = line["metric_scores_1"]
        assert (row["claim"], row["evidence"]) == (line["decoded"], line["text"])
        assert row["rouge_l_f_score"] == m["rouge"]["rouge_l_f_score"] and row["supert"] == m["supert"][0]
        assert row["blanc"] == m["blanc"]  # None stays None (null), never imputed


def test_frank_join_is_one_to_one_with_every_metric_a_score_column():
    conv = frank_rows(HUMAN, METRICS)
    human, metrics = json.loads(HUMAN.read_text()), json.loads(METRICS.read_text())
    assert len(conv.rows) == len(human) == 12
    assert conv.score_columns == ("Bleu", "Meteor", "Rouge 1", "Rouge 2", "Rouge L", "BertScore P Art",
                                  "BertScore R Art", "BertScore F1 Art", "FEQA", "QAGS", "OpenIE", "Dep Entail",
                                  "FactCC")  # split (text) is not a metric
    by_key = {(m["hash"], m["model_name"]): m for m in metrics}
    for row, h in zip(conv.rows, human):
        assert (row["group"], row["system"], row["rating"]) == (h["hash"], h["model_name"], h["Factuality"])
        assert row["source"] == h["dataset"] and row["split"] == h["split"]
        m = by_key[h["hash"], h["model_name"]]
        for col in conv.score_columns:
            v = m[col]
            assert row[col] == (None if v is None or v != v else v)
    assert {k: v for k, v in conv.missing.items() if v} == {"QAGS": 1, "FactCC": 1}
    assert {r["system"] for r in conv.rows} == {"bart", "pgn", "bus", "BERTS2S", "TConvS2S", "PtGen"}


def _write(tmp: Path, name: str, data) -> Path:
    p = tmp / name
    p.write_text(json.dumps(data) if not name.endswith(".jsonl") else "".join(json.dumps(r) + "\n" for r in data))
    return p


def test_frank_bad_input_is_one_line_naming_file_record_and_field(tmp_path):
    human, metrics = json.loads(HUMAN.read_text()), json.loads(METRICS.read_text())
    bad = [dict(r) for r in human]
    bad[3]["Factuality"] = "high"
    with pytest.raises(DataError, match=r"row 4, field 'Factuality': Factuality must be a finite number, got 'high'"):
        frank_rows(_write(tmp_path, "h.json", bad), METRICS)
    bad = [dict(r) for r in human]
    del bad[2]["model_name"]
    with pytest.raises(DataError, match=r"h2.json, row 3, field 'model_name'"):
        frank_rows(_write(tmp_path, "h2.json", bad), METRICS)
    dup = metrics + [dict(metrics[5])]
    with pytest.raises(DataError, match=r"m.json, row 13, field 'hash': repeated key .*first at record 6"):
        frank_rows(HUMAN, _write(tmp_path, "m.json", dup))
    with pytest.raises(DataError, match=r"h3.json, row 3, field 'hash': repeated key .*first at record 2"):
        frank_rows(_write(tmp_path, "h3.json", human[:2] + [human[1]]), METRICS)
    with pytest.raises(DataError, match=r"m2.json, row 12, field 'hash': key .* has no human annotation .*h4.json"):
        frank_rows(_write(tmp_path, "h4.json", human[:11]), _write(tmp_path, "m2.json", metrics))
    with pytest.raises(DataError, match=r"h5.json, row 1, field 'hash': key .*\('x', 'bart'\) has no record"):
        frank_rows(_write(tmp_path, "h5.json", [{**human[0], "hash": "x"}]), METRICS)
    mixed = [dict(r) for r in metrics]
    mixed[7]["QAGS"] = "n/a"
    with pytest.raises(DataError, match=r"m3.json, row 8, field 'QAGS': metric 'QAGS' mixes numbers"):
        frank_rows(HUMAN, _write(tmp_path, "m3.json", mixed))
    (tmp_path / "m4.json").write_text("[{")
    with pytest.raises(DataError, match=r"m4.json: not JSON"):
        frank_rows(HUMAN, tmp_path / "m4.json")


def test_summeval_bad_input_is_one_line_naming_file_row_and_field(tmp_path):
    native = native_lines(ALIGNED)
    bad = [dict(r) for r in native]
    del bad[4]["model_id"]
    with pytest.raises(DataError, match=r"s.jsonl, row 5, field 'model_id': missing field"):
        summeval_rows(_write(tmp_path, "s.jsonl", bad))
    bad = [dict(r) for r in native]
    bad[2]["expert_annotations"] = [{"consistency": "five"}, *bad[2]["expert_annotations"][1:]]
    with pytest.raises(DataError, match=r"s2.jsonl, row 3, field 'expert_annotations': annotation 1 has no numeric"):
        summeval_rows(_write(tmp_path, "s2.jsonl", bad))
    with pytest.raises(DataError, match=r"s3.jsonl, row 13, field 'id': repeated \(id, model_id\).*first at row 1"):
        summeval_rows(_write(tmp_path, "s3.jsonl", native + [native[0]]))
    with pytest.raises(DataError, match=r"unknown SummEval aspect"):
        summeval_rows(ALIGNED, aspect="faithfulness")


def test_convert_then_audit_frank_gives_the_correlation_section_equal_to_scipy(tmp_path):
    out = tmp_path / "frank.jsonl"
    done = cli("convert", "frank", str(HUMAN), str(METRICS), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "--score-col 'rouge_l=Rouge L'" in done.stdout and "--score-col factcc=FactCC" in done.stdout
    assert "'QAGS': 1 of 12 rows missing" in done.stderr
    run = tmp_path / "run"
    done = cli("audit", str(out), "--rating-col", "rating", "--scorers", "none", "--score-col", "rouge_l=Rouge L",
               "--score-col", "qags=QAGS", "--construct", "consistency", "--n-boot", "20", "--n-perm", "20",
               "--quiet", "--out", str(run))
    assert done.returncode == 0, done.stderr
    assert "Correlation with the human rating `rating`" in done.stdout
    assert "frank (12 rows, 4 items, 6 systems)" in done.stdout
    assert "rows without a score, left out of that metric: qags 1" in done.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    keep = [r for r in rows if r["QAGS"] is not None]
    want = stats.spearmanr([r["QAGS"] for r in keep], [r["rating"] for r in keep]).statistic
    line = next(x for x in done.stdout.splitlines() if x.split()[:3] == ["spearman", "all", "rows"])
    assert f"{want:.3f}" in line


def test_convert_then_audit_summeval_scores_text_and_precomputed_columns(tmp_path):
    out = tmp_path / "summeval.jsonl"
    done = cli("convert", "summeval", str(SCORED), "--aspect", "relevance", "--out", str(out))
    assert done.returncode == 0, done.stderr
    done = cli("audit", str(out), "--rating-col", "rating", "--scorers", "lexical", "--score-col",
               "bertscore=bert_score_f1", "--construct", "relevance", "--n-boot", "20", "--n-perm", "20", "--quiet",
               "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert "summeval (12 rows, 4 items, 3 systems)" in done.stdout
    header = next(x for x in done.stdout.splitlines() if x.strip().startswith("statistic"))
    assert header.split()[2:] == ["lexical", "bertscore"]
    aligned = tmp_path / "aligned.jsonl"
    assert cli("convert", "summeval", str(ALIGNED), "--out", str(aligned)).returncode == 0
    done = cli("audit", str(aligned), "--rating-col", "rating", "--scorers", "lexical", "--construct", "consistency",
               "--out", str(tmp_path / "run2"))
    assert done.returncode == 2  # the aligned file alone has no article: one line says lexical cannot read it
    assert "scorer 'lexical' reads the text; this file holds scores only" in done.stderr.strip().splitlines()[-1]
