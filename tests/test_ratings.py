"""Graded human ratings: reading them (both readers), deriving a label only when asked, score-only files without
texts, and the audit's correlation section on them (checked against scipy)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from attrib_audit.data.columnar import batch_to_table
from attrib_audit.data.errors import DataError
from attrib_audit.data.labels import RatingCut, parse_rating
from attrib_audit.data.loaders import load_pairs
from attrib_audit.data.records import NO_LABEL
from attrib_audit.data.sources import DataSpec, FileSource
from attrib_audit.errors import SpecError

SRC = Path(__file__).resolve().parents[1] / "src"
SCORES = Path(__file__).resolve().parent / "data" / "summeval_system_scores.jsonl"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def score_rows(n_items: int = 12, n_systems: int = 4, seed: int = 0) -> list[dict]:
    g = np.random.default_rng(seed)
    out = []
    for i in range(n_items):
        for s in range(n_systems):
            r = float(g.integers(1, 6))
            out.append({"id": f"i{i}s{s}", "group": f"i{i}", "system": f"S{s}", "likert": r,
                        "m1": r + float(g.normal()), "m2": float(g.normal())})
    return out


@pytest.mark.parametrize("text, op, value", [(">=5", ">=", 5.0), ("== 1", "==", 1.0), ("<-0.5", "<", -0.5),
                                             (" > 2e1 ", ">", 20.0)])
def test_rating_cut_parses_op_and_number(text, op, value):
    cut = RatingCut.parse(text)
    assert (cut.op, cut.value) == (op, value)
    assert RatingCut.parse(str(cut)) == cut


@pytest.mark.parametrize("text", ["5", ">= five", "=>5", ">=nan", ">=inf", "", ">= 5 6", "~5"])
def test_rating_cut_refuses_anything_else(text):
    with pytest.raises(ValueError, match="expected OP NUMBER"):
        RatingCut.parse(text)


def test_rating_cut_applies_elementwise():
    r = np.array([1.0, 4.9, 5.0, 5.5])
    assert RatingCut.parse(">=5").apply(r).tolist() == [0, 0, 1, 1]
    assert RatingCut.parse("==1").apply(r).tolist() == [1, 0, 0, 0]
    assert RatingCut.parse("<5").apply(r).tolist() == [1, 1, 0, 0]


@pytest.mark.parametrize("value, ok", [(3, 3.0), (2.5, 2.5), (" 4 ", 4.0), (np.int64(2), 2.0), (-1e3, -1000.0)])
def test_parse_rating_accepts_finite_numbers(value, ok):
    assert parse_rating(value, path="f", row=1, field="r") == ok


@pytest.mark.parametrize("value, words", [(float("nan"), "finite"), ("nan", "finite"), (float("inf"), "finite"),
                                          ("-inf", "finite"), ("good", "not a number"), (None, "missing"),
                                          ("", "missing"), (True, "not a number"), ([1], "not a number")])
def test_bad_ratings_name_file_row_and_field(tmp_path, value, words):
    rows = score_rows(2, 2)
    rows[2]["likert"] = value
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows))
    with pytest.raises(DataError) as exc:
        load_pairs(path, columns={"rating": "likert"})
    assert exc.value.row == 3 and exc.value.field == "likert" and str(path) in str(exc.value)
    assert words in exc.value.reason


def test_score_only_file_loads_without_texts_or_label(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", score_rows())
    table = load_pairs(path, columns={"rating": "likert"})
    assert (table.labels == NO_LABEL).all() and not table.labelled.any()
    assert table.ratings.tolist() == [r["likert"] for r in score_rows()]
    assert table.origin[0].text_columns_missing == ("claim", "evidence")
    assert set(table.claims) == {""} and table.has_systems and table.has_ratings


def test_label_is_derived_only_when_asked(tmp_path):
    rows = score_rows()
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    table = load_pairs(path, columns={"rating": "likert"}, label_from_rating=RatingCut.parse(">=4"))
    assert table.labels.tolist() == [int(r["likert"] >= 4) for r in rows]
    assert table.origin[0].load.label_from_rating == ">=4"
    with pytest.raises(DataError, match="missing column 'label'"):
        load_pairs(path)  # no rating column named: the label is required, never guessed
    with pytest.raises(DataError, match="--rating-col"):
        load_pairs(path, label_from_rating=RatingCut.parse(">=4"))


def test_data_spec_checks_the_cut_strictly():
    with pytest.raises(SpecError, match="label_from_rating"):
        DataSpec(files=(FileSource(path="x.jsonl"),), columns={"rating": "r"}, label_from_rating="5")
    with pytest.raises(SpecError, match="rating column"):
        DataSpec(files=(FileSource(path="x.jsonl"),), label_from_rating=">=5")


def test_columnar_reader_reads_ratings_as_the_row_reader_does(tmp_path):
    rows = [{**r, "claim": f"c{i}", "evidence": f"e{i}", "label": int(r["likert"] >= 3)}
            for i, r in enumerate(score_rows())]
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    batch = pa.Table.from_pylist(rows)
    for kw in ({"columns": {"rating": "likert"}},
               {"columns": {"rating": "likert"}, "label_from_rating": RatingCut.parse(">4")}):
        fast = batch_to_table(batch, first_row=1, path=str(path), **kw)
        slow = load_pairs(path, **kw)
        assert fast is not None
        assert fast.ratings.tolist() == slow.ratings.tolist() and fast.labels.tolist() == slow.labels.tolist()
    nan_rows = [dict(r) for r in rows]
    nan_rows[5]["likert"] = float("nan")
    assert batch_to_table(pa.Table.from_pylist(nan_rows), first_row=1, path="p", columns={"rating": "likert"}) is None


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attrib_audit", *args], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, timeout=600)


def test_audit_of_a_score_only_file_gives_correlations_not_auroc(tmp_path):
    rows = score_rows(15, 4)
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    out = tmp_path / "o"
    proc = run_cli("audit", str(path), "--rating-col", "likert", "--scorers", "none", "--score-col", "m1=m1",
                   "--score-col", "m2=m2", "--n-boot", "100", "--no-cache", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    res = json.loads((out / "results.json").read_text())
    assert all(a["auroc"] is None and "no binary label" in a["note"] for a in res["auroc"])
    block = res["correlations"]
    assert block["rating"] == "likert"
    y = np.array([r["likert"] for r in rows])
    got = {(c["metric"], c["statistic"], c["grouping"]): c for c in block["slices"][0]["correlations"]}
    for m in ("m1", "m2"):
        x = np.array([r[m] for r in rows])
        assert got[(m, "pearson", "none")]["estimate"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
        assert got[(m, "spearman", "none")]["estimate"] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
        assert got[(m, "kendall", "none")]["estimate"] == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)
        c = got[(m, "pearson", "none")]
        assert c["ci_low"] <= c["estimate"] <= c["ci_high"] and c["n"] == len(rows) and c["n_missing"] == 0
    assert {(c["statistic"], c["grouping"]) for c in got.values()} >= {("pearson", "partial"), ("kendall", "system")}
    assert "Correlation with the human rating `likert`" in proc.stdout and "partial by system" in proc.stdout
    assert "no binary label" in proc.stdout


def test_text_scorer_on_a_score_only_file_is_one_line(tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", score_rows())
    proc = run_cli("audit", str(path), "--rating-col", "likert", "--scorers", "lexical", "--no-cache",
                   "--out", str(tmp_path / "o"))
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "missing column 'claim'" in lines[0] and "lexical" in lines[0] and str(path) in lines[0]


def test_missing_scores_are_counted_not_imputed(tmp_path):
    rows = score_rows(15, 4)
    for r in rows[:5]:
        r["m2"] = None
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    out = tmp_path / "o"
    proc = run_cli("audit", str(path), "--rating-col", "likert", "--scorers", "none", "--score-col", "m1=m1",
                   "--score-col", "m2=m2", "--n-boot", "50", "--no-cache", "--out", str(out), "--on-error", "skip")
    assert proc.returncode == 0, proc.stderr
    res = json.loads((out / "results.json").read_text())
    c = next(c for c in res["correlations"]["slices"][0]["correlations"] if c["metric"] == "m2")
    y = np.array([r["likert"] for r in rows[5:]])
    x = np.array([r["m2"] for r in rows[5:]])
    assert c["n_missing"] == 5 and c["n"] == len(rows) - 5
    d = next(d for d in res["correlations"]["slices"][0]["differences"] if d["statistic"] == "pearson")
    assert d["n"] == len(rows) - 5
    got = next(c for c in res["correlations"]["slices"][0]["correlations"]
               if c["metric"] == "m2" and c["statistic"] == "pearson" and c["grouping"] == "none")
    assert got["estimate"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)


def graded_datasets(path: Path) -> list[dict]:
    g = np.random.default_rng(1)
    rows = []
    for d, noise in (("A", 0.5), ("B", 1.0), ("C", 1.5)):
        for i in range(15):
            for s in range(4):
                r = float(g.integers(1, 6)) + 0.3 * s
                rows.append({"id": f"{d}{i}s{s}", "dataset": d, "group": f"{d}{i}", "system": f"S{s}", "likert": r,
                             "good": r + float(g.normal(scale=noise)), "bad": float(g.normal())})
    write_jsonl(path, rows)
    return rows


def test_statistic_drives_transfer_and_select(tmp_path):
    rows = graded_datasets(tmp_path / "g.jsonl")
    out = tmp_path / "o"
    proc = run_cli("audit", str(tmp_path / "g.jsonl"), "--rating-col", "likert", "--construct", "attribution",
                   "--scorers", "none", "--score-col", "good=good", "--score-col", "bad=bad", "--statistic",
                   "spearman", "--n-boot", "100", "--n-perm", "100", "--no-cache", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "regret: Spearman ρ lost" in proc.stdout
    res = json.loads((out / "results.json").read_text())
    assert res["config"]["statistic"] == "spearman" and res["spec"]["stats"]["statistic"] == "spearman"
    tr = res["transfer"]
    assert tr["statistic"] == "spearman"
    entry = tr["constructs"]["attribution"]
    assert entry["status"] == "ok" and "balanced_accuracy" not in entry
    for d in ("A", "B", "C"):
        sub = [r for r in rows if r["dataset"] == d]
        y = [r["likert"] for r in sub]
        for m in ("good", "bad"):
            want = stats.spearmanr([r[m] for r in sub], y)[0]
            assert entry["auroc"][m][d] == pytest.approx(want, abs=1e-12)  # the matrix holds the statistic
    assert entry["regret"]["lowest_regret_metric"] == "good"
    sel = run_cli("select", "--results", str(out))
    assert sel.returncode == 0, sel.stderr
    assert "compared by their Spearman ρ" in sel.stdout and "recommended for a new dataset: good" in sel.stdout
    assert "cost 0.000 Spearman ρ" in sel.stdout


def test_statistic_without_a_rating_is_one_line(tmp_path):
    rows = [{**r, "claim": "c", "evidence": "e", "label": int(r["likert"] > 3)} for r in score_rows()]
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    proc = run_cli("audit", str(path), "--scorers", "none", "--score-col", "m1=m1", "--statistic", "pearson",
                   "--n-boot", "20", "--no-cache", "--out", str(tmp_path / "o"))
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "--rating-col" in lines[0], proc.stderr
    assert not (tmp_path / "o").exists()  # refused before anything was loaded


def test_cut_sensitivity_gives_sklearn_aurocs_at_every_cut(tmp_path):
    from sklearn.metrics import roc_auc_score

    rows = score_rows(15, 4)
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    out = tmp_path / "o"
    proc = run_cli("audit", str(path), "--rating-col", "likert", "--label-from-rating", ">2.5", "--scorers", "none",
                   "--score-col", "m1=m1", "--score-col", "m2=m2", "--n-boot", "50", "--no-cache", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    res = json.loads((out / "results.json").read_text())
    y = np.array([r["likert"] for r in rows])
    block = res["cut_sensitivity"]
    assert block["cut"] == ">2.5"
    assert [r["cut"] for r in block["rows"]] == sorted(set(y.tolist()))[1:]
    assert [r["cut"] for r in block["rows"] if r["chosen"]] == [3.0]  # > 2.5 keeps the same rows as >= 3
    for r in block["rows"]:
        for a in r["aurocs"]:
            x = np.array([row[a["metric"]] for row in rows])
            assert a["auroc"] == pytest.approx(roc_auc_score(y >= r["cut"], x), abs=1e-12)
            assert a["ci_low"] <= a["auroc"] <= a["ci_high"]
        assert r["best"] == max(r["aurocs"], key=lambda a: a["auroc"])["metric"]
    auroc = {a["scorer"]: a["auroc"] for a in res["auroc"]}
    chosen = next(r for r in block["rows"] if r["chosen"])
    assert {a["metric"]: a["auroc"] for a in chosen["aurocs"]} == pytest.approx(auroc)  # the audit's own cut
    lows = {a["scorer"]: a["ci_low"] for a in res["auroc"]}
    assert {a["metric"]: a["ci_low"] for a in chosen["aurocs"]} == pytest.approx(lows)  # on the same draws
    assert "AUROC by the cut" in proc.stdout and "≥ 3 *" in proc.stdout
