"""Issue 25's remaining reproductions: a crafted results.json, run spec, plugin, label-server request or edited
report cell each ended in a traceback (or a dropped connection); each now gives one line (or a 4xx JSON reply)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from attrib_audit.data.demo import demo_paths

from test_cli_fuzz import run

FAST = ["--scorers", "lexical", "--n-boot", "20", "--n-perm", "20", "--no-cache", "--quiet"]


def one_line(code: int, err: str) -> str:
    """The single stderr line of a refused command."""
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, (code, err)
    return err.strip()


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("audited") / "out"
    code, err = run(["audit", str(demo_paths()[0]), *FAST, "--out", str(out)])
    assert code == 0, err
    return out


# ---- 1: a results.json that is not UTF-8, or holds an escaped lone surrogate --------------------------------------

@pytest.mark.parametrize("edit", ["not utf-8", "lone surrogate", "surrogate key"])
@pytest.mark.parametrize("command", ["report", "select", "plan", "check"])
def test_results_json_that_is_not_utf8_text_is_one_line(audited, tmp_path, edit, command):
    """`"\\udc80"` parsed fine and `report` died writing it (UnicodeEncodeError); bytes 0xff died reading."""
    d = tmp_path / "res"
    shutil.copytree(audited, d)
    raw = (d / "results.json").read_bytes()
    new = {"not utf-8": raw.replace(b'"attrib-audit"', b'"attrib-audit\xff"', 1),
           "lone surrogate": raw.replace(b'"attrib-audit"', b'"attrib-audit\\udc80"', 1),
           "surrogate key": raw.replace(b'"tool": {', b'"tool": {"\\ud800x": 1, ', 1)}[edit]
    assert new != raw
    (d / "results.json").write_bytes(new)
    argv = {"report": ["report", str(d)], "select": ["select", "--results", str(d)],
            "plan": ["plan", "--results", str(d), "--half-width", "0.05"],
            "check": ["audit", "--check", str(d), "--no-cache", "--quiet"]}[command]
    err = one_line(*run(argv))
    assert str(d / "results.json") in err
    if edit != "not utf-8":
        assert "lone surrogate" in err and ("field 'tool.name'" in err or "field 'tool.\\ud800x'" in err)


# ---- 2: a run spec (--config, or results.json's spec for --check) with wrongly typed values -------------------------

@pytest.mark.parametrize("edit, message", [
    ({"precomputed": "m"}, "precomputed: expected a list, got str"),
    ({"precomputed": [1, 2]}, "precomputed[0]: expected an object, got int"),
    ({"precomputed": [{"name": 3, "column": "x"}]}, "precomputed.name: expected a string, got 3"),
    ({"precomputed": [{"name": "m", "column": ["x"]}]}, "precomputed.column: expected a string, got ['x']"),
    ({"precomputed": [{"name": "m", "column": "x", "lower": "yes"}]}, "precomputed.lower: expected true or false"),
    ({"data": {"construct": 5}}, "data.construct: expected a string, got 5"),
    ({"data": {"construct": [1, 2]}}, "data.construct: expected a string, got [1, 2]"),
    ({"data": {"construct": {"a": 1}}}, "data.construct: expected a string, got {'a': 1}"),
    ({"data": {"dataset": [1]}}, "data.dataset: expected a string, got [1]"),
    ({"data": {"format": ["pairs"]}}, "data.format: expected a string"),
    ({"data": {"columns": [1]}}, "data.columns: expected an object, got [1]"),
    ({"data": {"label_map": ["yes"]}}, "data.label_map: expected an object"),
    ({"scorers": [{"name": "lexical", "options": [1]}]}, "scorers.lexical.options: expected an object, got [1]"),
    ({"scorers": [{"name": ["lexical"]}]}, "scorers.name: expected a scorer name"),
])
def test_wrongly_typed_spec_values_are_one_line_naming_file_and_key(tmp_path, edit, message):
    """`data.construct: 5` ended in AttributeError ('int' object has no attribute 'startswith'), a list in
    TypeError (unhashable), `precomputed[0].name: 3` ran on; each is now the file and the key."""
    spec = {"data": {"files": [{"path": str(demo_paths()[0])}]}, "scorers": [{"name": "lexical"}],
            "stats": {"n_boot": 20, "n_perm": 20}}
    spec = {**spec, **edit, "data": {**spec["data"], **edit.get("data", {})}}
    cfg = tmp_path / "spec.json"
    cfg.write_text(json.dumps(spec))
    err = one_line(*run(["audit", "--config", str(cfg), "--out", str(tmp_path / "o"), "--no-cache", "--quiet"]))
    assert str(cfg) in err and message in err, err
    assert not (tmp_path / "o").exists()


def test_wrongly_typed_spec_in_a_results_json_is_one_line_for_check(audited, tmp_path):
    d = tmp_path / "res"
    shutil.copytree(audited, d)
    res = json.loads((d / "results.json").read_text())
    res["spec"]["data"]["construct"] = [1]
    (d / "results.json").write_text(json.dumps(res))
    err = one_line(*run(["audit", "--check", str(d), "--no-cache", "--quiet"]))
    assert str(d / "results.json") in err and "data.construct: expected a string, got [1]" in err


@pytest.mark.parametrize("text, message", [
    ('{"data": {"files": [{"path": "x\\udc80.jsonl"}]}, "scorers": [{"name": "lexical"}]}',
     "field 'data.files[0].path': holds an escaped lone surrogate"),
    ('{"data": ' + "[" * 100_000, "nested too deeply"),
])
def test_config_file_that_is_not_utf8_text_is_one_line(tmp_path, text, message):
    cfg = tmp_path / "spec.json"
    cfg.write_text(text)
    err = one_line(*run(["audit", "--config", str(cfg), "--out", str(tmp_path / "o"), "--no-cache", "--quiet"]))
    assert str(cfg) in err and message in err, err
