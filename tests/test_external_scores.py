"""Precomputed scorers: `--score-col`, `--scores` files, evaluator exports and the Python API."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from sklearn.metrics import roc_auc_score

from attrib_audit.audit import AuditConfig, run_audit
from attrib_audit.cli import main
from attrib_audit.data import load_pairs
from attrib_audit.data.demo import demo_paths
from attrib_audit.scorers import get_scorer

DATA = Path(__file__).parent / "data" / "external"
FAST = ["--n-boot", "200", "--n-perm", "200", "--quiet", "--no-cache"]


@pytest.fixture(scope="module")
def ab_with_scores(tmp_path_factory):
    """The AttributionBench demo sample with `lex` (= the built-in lexical scores) and `noise` columns."""
    path = next(p for p in demo_paths() if p.name.startswith("attributionbench"))
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    lex = get_scorer("lexical").score([r["claim"] for r in rows], [r["evidence"] for r in rows]).scores
    rng = np.random.default_rng(3)
    for r, v in zip(rows, lex):
        r["lex"] = float(v)
        r["noise"] = float(r["label"] * 0.3 + rng.normal(0, 0.3))
    out = tmp_path_factory.mktemp("ab") / "ab.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out, rows


def _audit(args, out):
    assert main(["audit", *args, "--out", str(out), *FAST]) == 0
    return json.loads((out / "results.json").read_text())


def _strip(res):
    """What must agree between a built-in run and the same scores given precomputed (not provenance)."""
    return {k: res[k] for k in ("slices", "auroc", "paired", "failures", "transfer")}


def test_precomputed_lexical_column_reproduces_builtin_lexical(ab_with_scores, tmp_path):
    path, _ = ab_with_scores
    common = [str(path), "--construct", "attribution", "--slice-by", "source"]
    builtin = _audit([*common, "--scorers", "lexical", "--score-col", "noise=noise"], tmp_path / "a")
    given = _audit([*common, "--scorers", "none", "--score-col", "lexical=lex", "--score-col", "noise=noise"],
                   tmp_path / "b")
    assert [s["scorer"] for s in given["scorers"]] == [s["scorer"] for s in builtin["scorers"]] == ["lexical", "noise"]
    assert _strip(given) == _strip(builtin)
    assert builtin["transfer"]["constructs"]["attribution"]["status"] == "ok"
    sig = {s["scorer"]: s for s in given["scorers"]}
    assert sig["lexical"]["signature"].startswith("precomputed:ab.jsonl:lex:") and sig["lexical"]["n_scored"] == 0
    assert given["config"]["precomputed"]["lexical"] == {"name": "lexical", "column": "lex", "file": None,
                                                         "format": "auto", "lower": False}


def test_nan_and_text_scores_are_failures_counted_per_slice_and_listed_by_id(ab_with_scores, tmp_path):
    _, rows = ab_with_scores
    bad = {rows[0]["id"]: None, rows[1]["id"]: "n/a", rows[2]["id"]: float("nan")}
    frame = pd.DataFrame({"id": [r["id"] for r in rows],
                          "mine": [bad.get(r["id"], r["noise"]) for r in rows]})
    scores = tmp_path / "mine.csv"
    frame.to_csv(scores, index=False)
    path = next(p for p in demo_paths() if p.name.startswith("attributionbench"))
    res = _audit([str(path), "--slice-by", "source", "--scorers", "lexical", "--scores", str(scores)], tmp_path / "o")
    entry = res["precomputed"][0]
    assert entry["n_failed"] == 3 and {f["id"] for f in entry["failed"]} == set(bad)
    assert {f["reason"] for f in entry["failed"]} == {"missing value", "non-numeric value 'n/a'"}
    by_id = {r["id"]: r for r in rows}
    for fr in (f for f in res["failures"] if f["scorer"] == "mine"):
        expected = sum(1 for i in bad if f"attributionbench:{by_id[i]['source']}" == fr["slice"])
        assert fr["n_failed"] == expected
    for a in (a for a in res["auroc"] if a["scorer"] == "mine"):
        keep = [r for r in rows if f"attributionbench:{r['source']}" == a["slice"] and r["id"] not in bad]
        assert a["n"] == len(keep) and a["n_failed"] == 50 - len(keep)
        assert a["auroc"] == pytest.approx(roc_auc_score([r["label"] for r in keep], [r["noise"] for r in keep]),
                                           abs=1e-12)


def test_lower_flips_auroc(ab_with_scores, tmp_path):
    path, _ = ab_with_scores
    res = _audit([str(path), "--slice-by", "source", "--scorers", "none", "--score-col", "up=lex",
                  "--score-col", "down=lex:lower"], tmp_path / "o")
    auc = {(r["scorer"], r["slice"]): r["auroc"] for r in res["auroc"]}
    for (name, sl), v in auc.items():
        if name == "up":
            assert auc[("down", sl)] == pytest.approx(1 - v, abs=1e-12)
    assert res["precomputed"][1]["direction"].startswith("lower is better")


def test_unknown_and_missing_ids_fail_by_default_and_are_counted_with_skip(ab_with_scores, tmp_path, capsys):
    path, rows = ab_with_scores
    frame = pd.DataFrame({"id": [r["id"] for r in rows[1:]] + ["not-a-pair"], "mine": [0.5] * len(rows)})
    scores = tmp_path / "s.parquet"
    frame.to_parquet(scores)
    assert main(["audit", str(path), "--scores", f"{scores}:mine", "--scorers", "none", "--out", str(tmp_path / "o"),
                 *FAST]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"pair id {rows[0]['id']!r} has no score" in err and "s.parquet" in err
    res = _audit([str(path), "--scores", f"{scores}:mine", "--scorers", "none", "--on-error", "skip"], tmp_path / "o")
    entry = res["precomputed"][0]
    assert entry["unmatched_ids"] == ["not-a-pair"] and entry["n_missing_in_source"] == 1
    assert entry["failed"] == [{"id": rows[0]["id"], "reason": "no score for this pair in s.parquet"}]


def test_score_command_output_is_a_scores_file(ab_with_scores, tmp_path):
    path, rows = ab_with_scores
    out = tmp_path / "lex.parquet"
    assert main(["score", str(path), "--scorers", "lexical", "--out", str(out), "--quiet", "--no-cache"]) == 0
    res = _audit([str(path), "--scorers", "none", "--scores", str(out)], tmp_path / "o")
    # the __truncated_tokens/__failure columns are not scorers
    assert [s["scorer"] for s in res["scorers"]] == ["lexical"]
    assert res["precomputed"][0]["join"] == "id" and res["precomputed"][0]["n_failed"] == 0


def test_python_api_takes_numpy_pandas_pyarrow_and_a_mapping(ab_with_scores):
    path, rows = ab_with_scores
    table = load_pairs(path)
    lex = np.array([r["lex"] for r in rows])
    cfg = dict(scorers=("lexical",), n_boot=200, n_perm=200, quiet=True, cache_path=":memory:")
    base = run_audit(table, AuditConfig(**cfg), log=lambda *_: None).results
    ref = {r.slice: r for r in base.auroc}
    for given in (lex, pd.Series(lex), pa.array(lex), {r["id"]: r["lex"] for r in rows[::-1]}):
        res = run_audit(table, AuditConfig(**cfg, precomputed={"mine": given}), log=lambda *_: None).results
        mine = [r for r in res.auroc if r.scorer == "mine"]
        assert mine and all(r.auroc == ref[r.slice].auroc for r in mine)
    with pytest.raises(ValueError, match="has 3 values for 200 pairs"):
        run_audit(table, AuditConfig(**cfg, precomputed={"mine": lex[:3]}), log=lambda *_: None)
    with pytest.raises(ValueError, match="name of a scorer"):
        run_audit(table, AuditConfig(**cfg, precomputed={"lexical": lex}), log=lambda *_: None)
    nulls = pa.array([None if i < 5 else v for i, v in enumerate(lex)])
    res = run_audit(table, AuditConfig(**cfg, precomputed={"mine": nulls}), log=lambda *_: None).results
    assert res.precomputed[0].n_failed == 5


# --- evaluator exports: fixtures written from each tool's documented output format --------------------------
# The labelled pairs (tests/data/external/rag_pairs.jsonl) are the RAG answers the evaluators scored.
# * RAGAS: `EvaluationResult.to_pandas()` (docs.ragas.io, "Evaluate a simple RAG"/"EvaluationResult") has one row
#   per sample with `user_input`, `retrieved_contexts` (a list), `response`, `reference` and one column per metric;
#   ragas_result.csv is that frame's `to_csv` (lists print as Python lists, a failed metric is empty), and
#   ragas_v01_result.json is the v0.1 naming (`question`, `contexts`, `answer`, `ground_truth`) as
#   `to_json(orient="records")`.
# * DeepEval: the test-run file `deepeval test run` saves (DEEPEVAL_RESULTS_FOLDER; model `TestRun` dumped by alias):
#   `testCases[]` with `name`, `input`, `actualOutput`, `retrievalContext`, `metricsData[]` of
#   {name, threshold, success, score, reason, strictMode, evaluationModel, error, evaluationCost, verboseLogs}.
# * TruLens: `TruSession().get_records_and_feedback()[0].to_csv()` (trulens.org, "Logging"/"Viewing results"):
#   app_*, `record_id`, `input`, `output` (JSON-quoted), bookkeeping columns and one column per feedback
#   function plus `<feedback>_calls`.
RAGAS_FAITH = {"q1": 1.0, "q2": 0.0, "q3": 1.0, "q4": 0.5, "q6": 0.0, "q7": 0.75, "q8": 0.5}  # q5: not computed
DEEPEVAL_FAITH = {"q1": 1.0, "q2": 0.2, "q3": 0.9, "q5": 1.0, "q6": 0.1, "q7": 0.8, "q8": 0.3}  # q4: judge error
TRULENS_GROUND = {"q1": 0.95, "q2": 0.1, "q3": 0.9, "q4": 0.4, "q5": 0.85, "q7": 0.6, "q8": 0.45}  # q6: pending
LABELS = {"q1": 1, "q2": 0, "q3": 1, "q4": 0, "q5": 1, "q6": 0, "q7": 1, "q8": 0}


@pytest.mark.parametrize("spec, name, expected, failed", [
    ("ragas_result.csv", "faithfulness", RAGAS_FAITH, ("q5", "missing value")),
    ("ragas_v01_result.json:ragas=faithfulness", "ragas", RAGAS_FAITH, ("q5", "missing value")),
    ("deepeval_test_run.json:faithfulness", "faithfulness", DEEPEVAL_FAITH,
     ("q4", "deepeval error: Evaluation LLM outputted an invalid JSON. Please use a better evaluation model.")),
    ("trulens_records.csv", "Groundedness", TRULENS_GROUND, ("q6", "missing value")),
])
def test_evaluator_export_joins_labelled_pairs(tmp_path, spec, name, expected, failed):
    res = _audit([str(DATA / "rag_pairs.jsonl"), "--scorers", "lexical", "--scores", str(DATA / spec)], tmp_path / "o")
    entry = next(p for p in res["precomputed"] if p["scorer"] == name)
    assert entry["join"] == "text" and entry["n_unmatched"] == 0 and entry["failed"] == [
        {"id": failed[0], "reason": failed[1]}]
    scores = pd.read_parquet(tmp_path / "o" / "scores.parquet").set_index("id")[name]
    assert {i: v for i, v in scores.items() if v == v} == expected
    auc = next(r for r in res["auroc"] if r["scorer"] == name)
    ids = sorted(expected)
    assert auc["auroc"] == pytest.approx(roc_auc_score([LABELS[i] for i in ids], [expected[i] for i in ids]))


def test_export_auto_columns_leave_text_and_bookkeeping_out(tmp_path):
    res = _audit([str(DATA / "rag_pairs.jsonl"), "--scorers", "none", "--scores", str(DATA / "ragas_result.csv"),
                  "--scores", str(DATA / "deepeval_test_run.json:deepeval_relevancy=answer_relevancy")], tmp_path / "o")
    assert [s["scorer"] for s in res["scorers"]] == ["faithfulness", "answer_relevancy", "deepeval_relevancy"]
    res = _audit([str(DATA / "rag_pairs.jsonl"), "--scorers", "none", "--scores", str(DATA / "trulens_records.csv")],
                 tmp_path / "t")
    assert [s["scorer"] for s in res["scorers"]] == ["Groundedness"]  # not latency, tokens, cost or *_calls


def test_bad_score_inputs_are_one_line_errors(tmp_path, capsys):
    pairs = str(DATA / "rag_pairs.jsonl")
    cases = [(["--score-col", "x=nope"], "no column 'nope'"),
             (["--scores", str(DATA / "ragas_result.csv:nope")], "no score column 'nope'"),
             (["--scores", str(tmp_path / "absent.csv")], "absent.csv: file not found"),
             (["--score-col", "a=x", "--score-col", "a=y"], "two precomputed scorers are named 'a'"),
             (["--scorers", "lexical", "--score-col", "lexical=label"], "has the name of a scorer")]
    for extra, message in cases:
        scorers = [] if "--scorers" in extra else ["--scorers", "none"]
        rc = main(["audit", pairs, "--out", str(tmp_path / "o"), *FAST, *scorers, *extra])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and message in err and len(err.splitlines()) == 1, (extra, err)


def test_check_replays_precomputed_sources_and_sees_a_changed_score_file(ab_with_scores, tmp_path, capsys):
    path, rows = ab_with_scores
    scores = tmp_path / "mine.csv"
    pd.DataFrame({"id": [r["id"] for r in rows], "mine": [r["noise"] for r in rows]}).to_csv(scores, index=False)
    out = tmp_path / "o"
    res = _audit([str(path), "--scorers", "lexical", "--score-col", "lexl=lex:lower", "--scores", str(scores)], out)
    assert res["precomputed"][1]["sha256"] and res["config"]["precomputed"]["mine"]["file"] == str(scores)
    capsys.readouterr()
    assert main(["audit", "--check", str(out)]) == 0
    assert "reproduced" in capsys.readouterr().out
    pd.DataFrame({"id": [r["id"] for r in rows], "mine": [-r["noise"] for r in rows]}).to_csv(scores, index=False)
    assert main(["audit", "--check", str(out)]) == 1
    assert ".scorers[scorer=mine].signature" in capsys.readouterr().out


def test_malformed_exports_are_one_line_errors(tmp_path, capsys):
    nested = tmp_path / "nested.csv"
    pd.DataFrame({"response": ["a"], "retrieved_contexts": ["[" * 100_000 + "]" * 100_000],
                  "faithfulness": [1.0]}).to_csv(nested, index=False)
    scalar = tmp_path / "scalar.json"
    scalar.write_text("3")
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps({"testCases": [{"name": "a", "actualOutput": "x", "metricsData": [
        {"name": "Faithfulness", "score": 1}, {"name": "faithfulness", "score": 0}]}]}))
    dup = tmp_path / "dup.csv"
    pd.DataFrame({"id": ["q1", "q1"], "m": [0.1, 0.9]}).to_csv(dup, index=False)
    cases = [(nested, "ragas", "contexts look like a list but do not parse"),
             (scalar, "auto", "cannot tell the score file's format"),
             (twice, "auto", "metric 'faithfulness' appears twice in one test case"),
             (dup, "auto", "id key 'q1' appears twice with different values")]
    for path, fmt, message in cases:
        rc = main(["audit", str(DATA / "rag_pairs.jsonl"), "--scorers", "none", "--scores", str(path),
                   "--scores-format", fmt, "--out", str(tmp_path / "o"), *FAST])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and message in err and len(err.splitlines()) == 1, (path, err)


def test_score_col_of_a_csv_without_ids_joins_on_the_loaders_row_ids(ab_with_scores, tmp_path):
    _, rows = ab_with_scores
    csv = tmp_path / "pairs.csv"
    pd.DataFrame([{k: r[k] for k in ("claim", "evidence", "label", "noise")} for r in rows]).to_csv(csv, index=False)
    res = _audit([str(csv), "--scorers", "none", "--score-col", "mine=noise"], tmp_path / "o")
    assert res["auroc"][0]["auroc"] == pytest.approx(
        roc_auc_score([r["label"] for r in rows], [r["noise"] for r in rows]), abs=1e-12)
    assert res["precomputed"][0]["source"] == "pairs.csv" and res["precomputed"][0]["n_failed"] == 0


def test_export_row_matching_no_pair_is_named(tmp_path, capsys):
    seven = tmp_path / "seven.jsonl"
    seven.write_text("".join(line + "\n" for line in (DATA / "rag_pairs.jsonl").read_text().splitlines()
                             if '"q8"' not in line))
    args = [str(seven), "--scorers", "none", "--scores", str(DATA / "deepeval_test_run.json:faithfulness")]
    assert main(["audit", *args, "--out", str(tmp_path / "o"), *FAST]) == 2
    assert "score row 'test_case_3' matches no pair (1 such rows" in capsys.readouterr().err  # test_case_3 is q8
    res = _audit([*args, "--on-error", "skip"], tmp_path / "o")
    assert res["precomputed"][0]["unmatched_ids"] == ["test_case_3"] and res["precomputed"][0]["n_failed"] == 1
