import json

import pandas as pd
import pytest

from attrib_audit.cli import main

FAST = ["--scorers", "lexical,minilm", "--n-boot", "200", "--quiet"]


def test_audit_writes_results_and_scores(tmp_path, demo_data, capsys):
    out = tmp_path / "out"
    rc = main(["audit", str(demo_data / "attributionbench_id.jsonl"), "--slice-by", "source", "--out", str(out), *FAST])
    assert rc == 0
    res = json.loads((out / "results.json").read_text())
    assert {r["slice"] for r in res["auroc"]} == {f"attributionbench:{s}" for s in
                                                  ("AttributedQA", "ExpertQA", "LFQA", "Stanford-GenSearch")}
    for r in res["auroc"]:
        assert {"scorer", "slice", "auroc", "ci_low", "ci_high", "n", "n_pos", "n_groups"} <= set(r)
        assert r["ci_low"] <= r["auroc"] <= r["ci_high"] and r["n"] == 50 and r["n_pos"] == 25
    assert {(p["scorer_a"], p["scorer_b"]) for p in res["paired"]} == {("lexical", "minilm")}
    assert res["data"][0]["sha256"] and res["scorers"][1]["signature"].startswith("minilm:")
    scores = pd.read_parquet(out / "scores.parquet")
    assert len(scores) == 200 and {"id", "label", "lexical", "minilm"} <= set(scores.columns)
    printed = capsys.readouterr().out
    assert "attributionbench:LFQA" in printed and "200 pairs, 400 scored anew" in printed
    # a second run of the same audit scores nothing anew
    assert main(["audit", str(demo_data / "attributionbench_id.jsonl"), "--slice-by", "source", "--out", str(out),
                 *FAST]) == 0
    assert "0 scored anew, 400 from cache" in capsys.readouterr().out


def test_one_class_slice_is_reported_not_fatal(tmp_path, capsys):
    rows = [{"id": f"a{i}", "dataset": "allpos", "claim": f"c {i}", "evidence": f"c e {i}",
             "label": 1} for i in range(4)]
    rows += [{"id": f"b{i}", "dataset": "mixed", "claim": f"c {i}", "evidence": "c e" if i % 2 else "z", "label": i % 2}
             for i in range(6)]
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), "--scorers", "lexical", "--n-boot", "100",
                 "--quiet"]) == 0
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    status = {s["slice"]: s["status"] for s in res["slices"]}
    assert status == {"allpos": "one_class", "mixed": "ok"}
    assert "undefined (one class)" in capsys.readouterr().out


def test_data_error_exits_2_with_message(tmp_path, capsys):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"id": "a", "claim": "c", "evidence": "", "label": 1}) + "\n")
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), "--scorers", "lexical", "--quiet"]) == 2
    assert "bad.jsonl, row 1, field 'evidence': evidence is empty" in capsys.readouterr().err


def test_unavailable_scorer_skipped_in_one_line(tmp_path, demo_data, capsys):
    rc = main(["audit", str(demo_data / "begin_wow.jsonl"), "--out", str(tmp_path / "o"), "--scorers", "lexical,minilm",
               "--model-path", f"minilm={tmp_path / 'nowhere'}", "--n-boot", "100"])
    assert rc == 0
    err = capsys.readouterr().err
    assert "[skip] minilm: minilm: path" in err and "does not exist" in err
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert [u["scorer"] for u in res["unavailable"]] == ["minilm"]
    assert {r["scorer"] for r in res["auroc"]} == {"lexical"}


def test_score_with_no_scorer_available_writes_nothing_and_fails_in_one_line(tmp_path, demo_data, capsys):
    """Every requested scorer skipped: an output without scores would pass for a finished run."""
    (tmp_path / "o").mkdir()
    out, data = tmp_path / "o" / "s.parquet", str(demo_data / "begin_wow.jsonl")
    rc = main(["score", data, "--out", str(out), "--scorers", "minilm", "--model-path",
               f"minilm={tmp_path / 'nowhere'}",
               "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and not list((tmp_path / "o").iterdir())
    assert err.startswith("attrib-audit score: no scorer ran: minilm (minilm: path") and "does not exist" in err
    assert err.count("\n") == 1
    # one scorer runs: the other is skipped with a note and the scores that exist are written
    rc = main(["score", data, "--out", str(out), "--scorers", "lexical,minilm", "--model-path",
               f"minilm={tmp_path / 'nowhere'}", "--quiet"])
    assert rc == 0 and list(pd.read_parquet(out).columns).count("lexical") == 1
    assert "[skip] minilm: minilm: path" in capsys.readouterr().err


def test_audit_with_no_scorer_available_writes_nothing_and_fails_in_one_line(tmp_path, demo_data, capsys):
    """As `score`: a results.json with every scorer 'not run' and no AUROC would pass for a finished audit."""
    out = tmp_path / "audit"
    rc = main(["audit", str(demo_data / "begin_wow.jsonl"), "--out", str(out), "--scorers", "minilm",
               "--model-path", f"minilm={tmp_path / 'nowhere'}", "--no-cache", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert err.splitlines()[-1].startswith("attrib-audit audit: no scorer ran: minilm (minilm: path")


def test_score_command_and_models_list(tmp_path, demo_data, capsys):
    out = tmp_path / "s.parquet"
    assert main(["score", str(demo_data / "begin_wow.jsonl"), "--out", str(out), "--quiet"]) == 0
    assert len(pd.read_parquet(out)) == 200
    assert main(["models", "list"]) == 0
    listing = capsys.readouterr().out
    assert "minilm" in listing and "ready" in listing and "package:" in listing


@pytest.mark.parametrize("argv", [["demo", "--scorers", "lexical", "--n-boot", "100", "--quiet"]])
def test_demo_runs(tmp_path, argv, capsys):
    assert main([*argv, "--out", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    assert "attributionbench:LFQA" in out and "begin:wow/t5" in out
