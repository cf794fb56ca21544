"""results.json records what it takes to reproduce it, and `audit --check` reruns it from the cache."""
from __future__ import annotations

import json
import shutil
import unicodedata

from attrib_audit import __version__
from attrib_audit.cli import main
from attrib_audit.data import demo_paths
from attrib_audit.files.hashing import file_sha256


def _audit(tmp_path, *extra):
    src = tmp_path / "pairs.jsonl"
    shutil.copy(demo_paths()[1], src)
    with open(src, "a") as fh:  # one bad row: skipped and recorded with --on-error skip
        fh.write('{"id": "bad", "claim": "   ", "evidence": "x", "label": 1}\n')
    out, cache = tmp_path / "out", tmp_path / "c.sqlite"
    rc = main(["audit", str(src), "--scorers", "lexical", "--n-boot", "300", "--seed", "7", "--out", str(out),
               "--cache", str(cache), "--on-error", "skip", "--quiet", *extra])
    assert rc == 0
    return src, out, cache


def test_results_record_version_signatures_hashes_seed_and_skips(tmp_path):
    src, out, _ = _audit(tmp_path)
    r = json.loads((out / "results.json").read_text())
    assert r["tool"]["version"] == __version__
    assert r["scorers"][0]["signature"] == f"lexical:jaccard:lower:re=\\w+:unicode={unicodedata.unidata_version}:v1"
    assert r["data"][0]["sha256"] == file_sha256(src) and r["data"][0]["rows"] == 200
    assert r["data"][0]["load"]["on_error"] == "skip"
    assert r["config"]["seed"] == 7 and r["config"]["n_boot"] == 300
    assert r["config"]["scorer_options"] == {} and r["spec"]["scorers"] == [{"name": "lexical", "options": {}}]
    assert r["skipped"] == [{"file": str(src), "row": 201, "field": "claim", "reason": "claim is empty"}]


def test_check_reproduces_from_cache_and_reports_diffs(tmp_path, capsys):
    src, out, cache = _audit(tmp_path)
    capsys.readouterr()
    assert main(["audit", "--check", str(out), "--cache", str(cache)]) == 0
    text = capsys.readouterr()
    assert "reproduced" in text.out and "scored anew" not in text.err  # every score came from the cache

    results = json.loads((out / "results.json").read_text())
    row = results["auroc"][0]
    row["ci_low"] = round(row["ci_low"] + 0.01, 6)
    (out / "results.json").write_text(json.dumps(results))
    assert main(["audit", "--check", str(out), "--cache", str(cache)]) == 1
    text = capsys.readouterr().out
    assert "NOT reproduced: 1 difference" in text and f"slice={row['slice']}].ci_low" in text

    with open(src, "a") as fh:
        fh.write("\n")
    assert main(["audit", "--check", str(out), "--cache", str(cache)]) == 1
    assert "changed: sha256" in capsys.readouterr().out


def test_check_without_cache_rescores_and_still_matches(tmp_path, capsys):
    _, out, _ = _audit(tmp_path)
    assert main(["audit", "--check", str(out), "--cache", str(tmp_path / "fresh.sqlite")]) == 0
    assert "scored anew" in capsys.readouterr().err
