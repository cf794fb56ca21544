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
