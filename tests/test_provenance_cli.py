"""`attrib-audit provenance` end to end on a slice of the WiCE sample in tests/data, with real MiniLM."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from attrib_audit.cli import main

WICE = Path(__file__).parent / "data" / "wice_provenance.jsonl"


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("wice") / "wice_small.jsonl"
    path.write_text("".join(WICE.read_text().splitlines(keepends=True)[:4]))
    return path


def test_provenance_command_writes_results_and_prints_the_table(small, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["provenance", str(small), "--rankers", "lexical,minilm,blend,eq1", "--confusable", "3", "--seeds", "2",
               "--candidate-cap", "120", "--n-boot", "200", "--out", str(out), "--cache", str(tmp_path / "c.sqlite"),
               "--model-path", "mpnet=/nonexistent/mpnet", "--quiet"])
    assert rc == 0
    printed = capsys.readouterr().out
    for word in ("lexical", "minilm", "blend", "eq1", "random", "alpha sweep", "fooled"):
        assert word in printed
    res = json.loads((out / "provenance.json").read_text())
    d = res["datasets"][0]
    assert res["construct"] == "provenance" and d["n_examples"] == 4 and d["n_units"] == 4
    assert set(d["clean"]["rankers"]) == {"lexical", "minilm", "blend", "eq1"}
    base = d["clean"]["random_baseline"]
    assert 0 < base["estimate"] < 0.5 and base["ci_low"] <= base["estimate"] <= base["ci_high"]
    for r in d["clean"]["rankers"].values():
        assert 0 <= r["top1"]["ci_low"] <= r["top1"]["estimate"] <= r["top1"]["ci_high"] <= 1
    seeds = d["confusable"]["per_seed"]
    assert [s["n_candidates"] for s in seeds] == [120, 120]
    assert all(s["mean_pool_size"] > d["clean"]["mean_pool_size"] for s in seeds)
    assert len(d["confusable"]["summary"]["eq1"]["fooled"]["per_seed"]) == 2
    sweep = d["alpha_sweep"]["series"]
    assert sweep["alpha"] == pytest.approx([i / 10 for i in range(11)])
    assert len(sweep["clean_top1"]) == len(sweep["confusable_top1_mean"]) == 11
    # α = 0 is semantic-only and α = 1 lexical-only: the sweep's ends are the single-term rankers
    assert sweep["clean_top1"][0] == d["clean"]["rankers"]["minilm"]["top1"]["estimate"]
    assert sweep["clean_top1"][-1] == d["clean"]["rankers"]["lexical"]["top1"]["estimate"]
    assert res["config"]["eq1_weights"] == {"lex": 0.4, "sem": 0.45, "hint": 0.1, "cite": 0.05}
    assert res["embedding_truncation"] and all(t["texts"] > 0 for t in res["embedding_truncation"].values())


def test_unavailable_ranker_is_reported_and_bad_input_is_a_data_error(small, tmp_path, capsys):
    rc = main(["provenance", str(small), "--rankers", "lexical,mpnet", "--confusable", "0", "--alpha-step", "0",
               "--n-boot", "50", "--model-path", "mpnet=/nonexistent/mpnet", "--out", str(tmp_path), "--no-cache"])
    assert rc == 0
    res = json.loads((tmp_path / "provenance.json").read_text())
    assert res["unavailable"][0]["ranker"] == "mpnet" and "does not exist" in res["unavailable"][0]["reason"]
    assert "not run: mpnet" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "passages": [{"id": "s0", "text": "a"}], "gold": ["s1"]}\n')
    assert main(["provenance", str(bad), "--out", str(tmp_path), "--no-cache"]) == 2
    assert "row 1" in capsys.readouterr().err


def test_bad_settings_are_one_line_exit_2(small, tmp_path, capsys):
    assert main(["provenance", str(small), "--seeds", "0", "--out", str(tmp_path), "--no-cache"]) == 2
    assert capsys.readouterr().err == "attrib-audit provenance: --seeds must be at least 1\n"


def test_the_alpha_sweep_runs_only_when_asked_or_its_encoder_is_already_embedding(small, tmp_path, monkeypatch):
    from attrib_audit.scorers import embedding

    loaded = []
    real = embedding.load_sentence_transformer
    monkeypatch.setattr(embedding, "load_sentence_transformer", lambda *a: loaded.append(a) or real(*a))
    common = ["--confusable", "2", "--seeds", "1", "--candidate-cap", "50", "--n-boot", "50", "--no-cache", "--quiet"]
    assert main(["provenance", str(small), "--rankers", "lexical", *common, "--out", str(tmp_path / "a")]) == 0
    res = json.loads((tmp_path / "a" / "provenance.json").read_text())
    assert "alpha_sweep" not in res["datasets"][0] and res["embedding_truncation"] == {} and loaded == []
    assert main(["provenance", str(small), "--rankers", "lexical", "--alpha-step", "0.5", *common,
                 "--out", str(tmp_path / "b")]) == 0
    sweep = json.loads((tmp_path / "b" / "provenance.json").read_text())["datasets"][0]["alpha_sweep"]["series"]
    assert sweep["alpha"] == [0.0, 0.5, 1.0] and loaded


@pytest.mark.parametrize("edit, key", [
    (lambda d: d["datasets"][0]["clean"]["rankers"]["lexical"]["top1"].update(ci_low="low"),
     "datasets[0].clean.rankers.lexical.top1.ci_low"),
    (lambda d: d["datasets"][0]["confusable"].pop("summary"), "datasets[0].confusable.summary"),
    (lambda d: d["datasets"][0]["data"][0].update(examples="12"), "datasets[0].data[0].examples"),
    (lambda d: d["datasets"][0]["data"][0].pop("sha256"), "datasets[0].data[0].sha256")])
def test_report_names_the_file_and_key_of_a_wrong_provenance_json(tmp_path, capsys, edit, key):
    prov = json.loads((Path(__file__).parent / "data" / "report_provenance_wice.json").read_text())
    edit(prov)
    bad = tmp_path / "provenance.json"
    bad.write_text(json.dumps(prov))
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r")]) != 0
    err = capsys.readouterr().err.strip()
    assert str(bad) in err and key in err and len(err.splitlines()) == 1, err
