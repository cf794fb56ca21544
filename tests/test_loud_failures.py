"""Failures are loud: weights that are present but do not load stop the audit (not "[skip]" with exit 0), and a
bug in report code exits non-zero instead of becoming a note (only a missing key in a saved file is a note)."""
from __future__ import annotations

import json

import pytest

from attrib_audit.cli import main
from attrib_audit.data import demo_paths
from tiny_hf import NLI3, tiny_classifier


def test_corrupt_local_model_is_an_error_not_a_skip(tmp_path, capsys):
    folder = tmp_path / "nli"
    tiny_classifier(folder, NLI3)
    (folder / "model.safetensors").write_bytes(b"\x00garbage" * 64)
    capsys.readouterr()
    rc = main(["audit", str(demo_paths()[1]), "--scorers", "lexical,nli-mnli", "--model-path", f"nli-mnli={folder}",
               "--out", str(tmp_path / "o"), "--n-boot", "20", "--quiet", "--cache", str(tmp_path / "c.sqlite")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "[skip]" not in err
    assert "nli-mnli: weights at" in err and "are present but do not load" in err
    assert not (tmp_path / "o" / "results.json").exists()


def test_absent_weights_are_still_a_one_line_skip(tmp_path, capsys):
    rc = main(["audit", str(demo_paths()[1]), "--scorers", "lexical,minilm", "--model-path",
               f"minilm={tmp_path / 'nowhere'}", "--out", str(tmp_path / "o"), "--n-boot", "20", "--n-perm", "20",
               "--cache", str(tmp_path / "c.sqlite")])
    assert rc == 0 and "[skip] minilm" in capsys.readouterr().err


@pytest.fixture
def folder(tmp_path):
    out = tmp_path / "o"
    assert main(["audit", str(demo_paths()[0]), "--scorers", "lexical", "--slice-by", "source", "--n-boot", "20",
                 "--n-perm", "20", "--out", str(out), "--quiet", "--cache", str(tmp_path / "c.sqlite")]) == 0
    return out


def test_a_bug_in_report_code_is_raised_not_a_note(folder, monkeypatch):
    from attrib_audit.report import auroc
    from attrib_audit.report.build import build_report

    def broken(*_a, **_k):
        raise AttributeError("'NoneType' object has no attribute 'scorer'")  # what a typo in report code raises

    monkeypatch.setattr(auroc, "auroc_table", broken)
    with pytest.raises(AttributeError):
        build_report(folder)


def test_a_missing_key_in_the_saved_file_is_one_line_naming_it(folder):
    from attrib_audit.report.build import build_report
    from attrib_audit.report.inputs import ReportError

    res = json.loads((folder / "results.json").read_text())
    for row in res["auroc"]:
        del row["slice"]
    (folder / "results.json").write_text(json.dumps(res))
    with pytest.raises(ReportError, match=r"results\.json: key 'auroc\[0\]\.slice' is missing$"):
        build_report(folder)  # the rows are checked when the file is read: one line naming the key
