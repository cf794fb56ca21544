"""--hf loading through `datasets` (offline failure, a local dataset, the pin warning) and the format flags."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attrib_audit.cli import main
from attrib_audit.data.hf import pin_warning

SRC = Path(__file__).resolve().parents[1] / "src"
SHA = "b33329b29946b791649cf66d33e10b5a5bbdc44d"


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_CACHE": str(tmp_path / "hf" / "datasets")}
    return subprocess.run([sys.executable, "-m", "attrib_audit", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def ab_native(i: int, label: str, refs: list[str]) -> dict:
    return {"id": f"r{i}", "question": f"q{i // 2}", "claim": f"the tower is {i} metres tall",
            "references": refs, "attribution_label": label, "src_dataset": "ExpertQA"}


def test_hf_offline_fails_with_one_clear_line(tmp_path):
    proc = run_cli(tmp_path, "audit", "--hf", "osunlp/AttributionBench", "--hf-split", "test", "--hf-revision", SHA,
                   "--scorers", "lexical", "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "o"))
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "osunlp/AttributionBench" in lines[0] and "offline" in lines[0]


def test_hf_local_dataset_goes_through_the_adapter_and_records_the_revision(tmp_path):
    folder = tmp_path / "ab_hf"
    folder.mkdir()
    rows = [ab_native(i, "attributable" if i % 2 else "not attributable",
                      [f"the tower is {i} metres tall" if i % 2 else "a different sentence"]) for i in range(8)]
    rows.append(ab_native(99, "attributable", []))
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run_cli(tmp_path, "audit", "--hf", str(folder), "--hf-split", "test", "--scorers", "lexical",
                   "--n-boot", "20", "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    assert "may not be reproducible" in proc.stderr and "detected attributionbench" in proc.stderr
    assert "skipped 1: no non-empty reference: 1" in proc.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    entry = results["data"][0]
    assert entry["hf"] == str(folder) and entry["split"] == "test" and entry["revision"] is None
    assert entry["pinned"] is False and entry["format"] == "attributionbench" and entry["rows"] == 8
    assert entry["skip_counts"] == {"no non-empty reference": 1} and entry["hf_rows"] == 9
    auroc = {r["slice"]: r["auroc"] for r in results["auroc"]}
    assert auroc["attributionbench"] == 1.0  # supported claims are verbatim in their evidence


def test_pin_warning():
    assert "may not be reproducible" in pin_warning("x/y", None)
    assert "branch or tag" in pin_warning("x/y", "main")
    assert pin_warning("x/y", SHA) is None


# ---------------------------------------------------------------- format flags on the CLI (in-process)
def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def common(tmp_path: Path) -> list[str]:
    return ["--scorers", "lexical", "--n-boot", "20", "--cache", str(tmp_path / "c.sqlite"),
            "--out", str(tmp_path / "o"), "--quiet"]


def test_schema_flags_with_a_named_format_are_refused(tmp_path, capsys):
    path = write_jsonl(tmp_path / "ab.jsonl", [ab_native(i, "attributable", ["x"]) for i in range(2)])
    assert main(["audit", str(path), "--format", "attributionbench", "--label-map", "a=1", *common(tmp_path)]) == 2
    assert "describe our pair schema" in capsys.readouterr().err


def test_no_input_is_a_clear_error(tmp_path, capsys):
    assert main(["audit", *common(tmp_path)]) == 2
    assert "give one or more files, or --hf" in capsys.readouterr().err


def test_native_and_schema_files_in_one_audit_keep_their_constructs(tmp_path):
    ab = write_jsonl(tmp_path / "ab.jsonl", [ab_native(i, "attributable" if i % 2 else "not attributable",
                                                        [f"the tower is {i} metres tall" if i % 2 else "other"])
                                             for i in range(6)])
    own = write_jsonl(tmp_path / "own.jsonl",
                      [{"id": f"o{i}", "dataset": "mine", "claim": f"c {i}", "evidence": f"c {i}" if i % 2 else "z",
                                                "label": i % 2, "construct": "fact-check"} for i in range(6)])
    assert main(["audit", str(ab), str(own), *common(tmp_path)]) == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert {s["slice"]: s["construct"] for s in results["slices"]} == {"attributionbench": "attribution",
                                                                        "mine": "fact-check"}
    assert [d.get("format") for d in results["data"]] == ["attributionbench", "pairs"]


def test_unknown_construct_is_noted(tmp_path, capsys):
    own = write_jsonl(tmp_path / "own.jsonl", [{"id": f"o{i}", "dataset": "mine", "claim": "c", "evidence": "c",
                                                "label": i % 2} for i in range(4)])
    args = ["audit", str(own), "--construct", "atribution", "--scorers", "lexical", "--n-boot", "10",
            "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "o")]
    assert main(args) == 0
    assert "'atribution' is not registered" in capsys.readouterr().err


def test_datasets_command_lists_formats_constructs_and_mappings(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name in ("attributionbench", "hagrid", "vitaminc", "begin", "aggrefact", "summac", "wice", "true", "pairs"):
        assert f"\n{name} " in out or out.startswith(name)
    assert "'Generic' -> dropped" in out and "boundary-dialogue" in out and "NOT ENOUGH INFO" in out
    assert main(["datasets", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert {f["format"] for f in info["formats"]} >= {"wice", "true"} and "fact-check" in info["constructs"]


@pytest.mark.parametrize("flag, label", [([], None), (["--nei", "0"], 0)])
def test_nei_flag_reaches_the_adapter(tmp_path, flag, label):
    rows = [{"unique_id": f"u{i}", "case_id": f"k{i}", "claim": f"c{i}", "evidence": f"c{i}" if i % 2 else "e",
             "label": ["REFUTES", "SUPPORTS"][i % 2]} for i in range(4)]
    rows.append({"unique_id": "nei", "case_id": "k9", "claim": "n", "evidence": "e", "label": "NOT ENOUGH INFO"})
    path = write_jsonl(tmp_path / "vitc.jsonl", rows)
    assert main(["audit", str(path), *flag, *common(tmp_path)]) == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert results["slices"][0]["n"] == (4 if label is None else 5)
