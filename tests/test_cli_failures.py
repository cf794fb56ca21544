"""Every bad input ends in one line and exit 2 (3: a backend), checked before any scoring where possible;
output folders are replaced whole; every artefact carries the run id of its results.json."""
from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from attrib_audit.cli import main
from attrib_audit.files.outdir import run_id_of

ROWS = [{"id": f"r{i}", "dataset": d, "claim": c, "evidence": e, "label": y}
        for i, (d, c, e, y) in enumerate([("a", "Paris is in France", "Paris is in France.", 1),
                                          ("a", "Cats bark", "Dogs bark.", 0),
                                          ("a", "Rome is in Italy", "Rome is in Italy.", 1),
                                          ("a", "Oslo is in Peru", "Lima is in Peru.", 0),
                                          ("b", "Bern is Swiss", "Bern is in Switzerland.", 1),
                                          ("b", "Snow is hot", "Snow is cold.", 0),
                                          ("b", "Water is wet", "Water is wet.", 1),
                                          ("b", "Fish fly", "Birds fly.", 0)])]
FAST = ["--scorers", "lexical", "--n-boot", "30", "--n-perm", "30", "--quiet"]


@pytest.fixture
def data(tmp_path):
    p = tmp_path / "pairs.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    return p


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    return err


def _audit(data, out, *extra) -> int:
    return main(["audit", str(data), *FAST, "--out", str(out), *extra])


# --- bad input -> exit 2 and one line naming the cause --------------------------------------------------------------

@pytest.mark.parametrize("content,suffix,expect", [
    (b'\xff\xfe{"id": 1}\n', ".jsonl", "row 1: not UTF-8"),
    (b"id,claim\n\xff,x\n", ".csv", "line 2 is not UTF-8"),
    (b"PAR1 not really parquet PAR1", ".parquet", "not a readable Parquet file"),
    (b'"id","dataset"\r"\n"0,1', ".csv", "row 1: the header is not valid CSV"),  # found by test_cli_fuzz
    (b"", ".txt", "unknown file type"),
])
def test_unreadable_data_files_during_format_detection(tmp_path, capsys, content, suffix, expect):
    f = tmp_path / f"in{suffix}"
    f.write_bytes(content)
    assert _audit(f, tmp_path / "out") == 2
    assert expect in one_line(capsys)


def test_a_folder_given_as_data(tmp_path, capsys):
    (tmp_path / "dir.jsonl").mkdir()
    assert _audit(tmp_path / "dir.jsonl", tmp_path / "out") == 2
    assert "is a folder, not a data file" in one_line(capsys)


def test_out_is_checked_before_anything_is_loaded_or_scored(data, tmp_path, capsys, monkeypatch):
    import attrib_audit.audit.run as audit

    monkeypatch.setattr(audit, "run_audit", lambda *a, **k: pytest.fail("scored despite a bad --out"))
    (tmp_path / "taken").write_text("user file")
    assert _audit(tmp_path / "missing.jsonl", tmp_path / "taken") == 2  # --out wins over the missing data file
    err = one_line(capsys)
    assert "--out" in err and "existing file" in err
    assert (tmp_path / "taken").read_text() == "user file"
    assert _audit(data, tmp_path / "taken" / "sub") == 2
    assert "is a file, so no folder can be made under it" in one_line(capsys)


def test_out_in_a_read_only_folder(data, tmp_path, capsys, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if os.geteuid() == 0:  # root ignores permission bits: make the kernel's refusal explicit
        real = os.mkdir

        def refuse(path, *a, **k):
            if str(path).startswith(str(ro)):
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real(path, *a, **k)

        monkeypatch.setattr(os, "mkdir", refuse)
    try:
        assert _audit(data, ro / "out") == 2
        assert "cannot write in" in one_line(capsys)
    finally:
        ro.chmod(0o755)


def test_check_and_select_on_missing_or_garbage_folders(data, tmp_path, capsys):
    assert main(["audit", "--check", str(tmp_path / "nope")]) == 2
    assert "no such folder" in one_line(capsys)
    out = tmp_path / "out"
    assert _audit(data, out) == 0
    capsys.readouterr()
    (out / "bootstrap.npz").write_bytes(b"garbage, not a zip")
    assert main(["select", "--results", str(out)]) == 2
    assert "is not a bootstrap.npz" in one_line(capsys)


def test_label_map_and_scorer_opt_typos(data, tmp_path, capsys):
    assert _audit(data, tmp_path / "o", "--label-map", "yes=true") == 2
    assert "--label-map values must be 0 or 1" in one_line(capsys)
    assert _audit(data, tmp_path / "o", "--scorer-opt", "blend") == 2
    assert "SCORER.KEY=VALUE" in one_line(capsys)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "1e999"])
@pytest.mark.parametrize("opt", ["blend.w_lex", "judge.timeout"])
def test_a_scorer_option_that_is_not_a_finite_number_is_refused(data, tmp_path, capsys, opt, value):
    """`float()` takes nan and inf, which then pass every `x > 0`-style check (nan compares false) and reach a
    scorer."""
    name, key = opt.split(".")
    assert _audit(data, tmp_path / "o", "--scorers", f"lexical,{name}", "--scorer-opt", f"{opt}={value}") == 2
    err = one_line(capsys)
    assert f"--scorer-opt '{opt}={value}': {key} must be a finite number" in err, err
    assert not (tmp_path / "o").exists()


# --- caches -----------------------------------------------------------------------------------------------------------

def test_cache_pointing_at_the_input_file_is_refused_and_never_renamed(data, tmp_path, capsys):
    before = data.read_bytes()
    assert _audit(data, tmp_path / "out", "--cache", str(data)) == 2
    err = one_line(capsys)
    assert "score cache" in err and "not a SQLite database" in err and "left untouched" in err
    assert data.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["pairs.jsonl"]


def test_garbage_judge_request_cache_is_refused_before_scoring(data, tmp_path, capsys):
    (tmp_path / "s.judge-requests.sqlite").write_text("notes, not a database")
    assert _audit(data, tmp_path / "out", "--cache", str(tmp_path / "s.sqlite")) == 2
    assert "judge request cache" in one_line(capsys)
    assert (tmp_path / "s.judge-requests.sqlite").read_text() == "notes, not a database"
    assert not (tmp_path / "s.sqlite").exists()


def test_corrupt_judge_request_cache_is_moved_aside_like_the_score_cache(tmp_path):
    from attrib_audit.scorers.judge.backends import Reply
    from attrib_audit.scorers.judge.requests_cache import RequestCache

    path = tmp_path / "r.sqlite"
    cache = RequestCache(path)
    for i in range(3000):
        cache.put(f"k{i}", "sig", {"i": i}, Reply("x" * 50))
    cache.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(path, "r+b") as fh:  # the header stays, pages in the middle are damaged
        fh.seek(path.stat().st_size // 2)
        fh.write(np.random.default_rng(0).bytes(16384))
    with pytest.warns(RuntimeWarning, match="judge request cache .* is corrupt"):
        again = RequestCache(path)
    assert again.moved_aside is not None and again.moved_aside.exists() and again.count() == 0
    again.put("k", "sig", {}, Reply("ok"))
    assert again.get("k") == Reply("ok")
    again.close()


# --- staged output folders and run ids -----------------------------------------------------------------------------

def test_a_failed_save_leaves_the_earlier_results_whole(data, tmp_path, monkeypatch):
    import attrib_audit.audit.results as audit

    out = tmp_path / "out"
    assert _audit(data, out) == 0
    (out / "notes.txt").write_text("mine")
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(audit, "write_bootstrap_npz", broken)
    with pytest.raises(OSError):
        _audit(data, out, "--seed", "7")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no partial folder left


def test_every_artefact_carries_the_run_id_and_a_rerun_replaces_the_set(data, tmp_path, capsys):
    out = tmp_path / "out"
    assert _audit(data, out, "--report") == 0
    assert main(["agree", "--results", str(out), "--a", "lexical", "--b", "human", "--n-boot", "30"]) == 0
    first = json.loads((out / "results.json").read_text())["run_id"]
    assert {run_id_of(out / n) for n in ("results.json", "scores.parquet", "bootstrap.npz",
                                         "agreement.json")} == {first}
    assert f'content="{first}"' in (out / "report.html").read_text() and first in (out / "report.md").read_text()
    (out / "notes.txt").write_text("mine")
    assert _audit(data, out, "--seed", "1") == 0
    second = json.loads((out / "results.json").read_text())["run_id"]
    assert second != first
    assert {run_id_of(out / n) for n in ("results.json", "scores.parquet", "bootstrap.npz")} == {second}
    assert (out / "notes.txt").read_text() == "mine"  # not ours: carried over
    assert not (out / "agreement.json").exists() and not (out / "report.md").exists()  # the old run's derivatives


def test_report_leaves_out_a_stale_agreement_json_and_names_it(data, tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert _audit(data, a) == 0 and _audit(data, b) == 0
    assert main(["agree", "--results", str(a), "--a", "lexical", "--b", "human", "--n-boot", "30"]) == 0
    shutil.copy(a / "agreement.json", b / "agreement.json")  # from another run
    capsys.readouterr()
    assert main(["report", str(b)]) == 0
    err = capsys.readouterr().err
    assert f"left out {b / 'agreement.json'}" in err
    md = (b / "report.md").read_text()
    assert "Files left out" in md and "Cohen" not in md
    shutil.copy(a / "bootstrap.npz", b / "bootstrap.npz")
    assert main(["select", "--results", str(b)]) == 2
    assert "is from run" in one_line(capsys)
    shutil.copy(a / "scores.parquet", b / "scores.parquet")
    assert main(["agree", "--results", str(b), "--a", "lexical", "--b", "human"]) == 2
    assert "is from run" in one_line(capsys)


def test_score_out_is_checked_before_scoring(data, tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["score", str(data), "--out", str(tmp_path / "f" / "s.parquet"), "--quiet"]) == 2
    assert "is an existing file, not a folder" in one_line(capsys)
    assert main(["score", str(data), "--out", str(tmp_path), "--quiet"]) == 2
    assert "is a folder; give a file path" in one_line(capsys)


def test_out_dot_writes_into_the_working_folder_without_moving_it(data, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    monkeypatch.chdir(work)
    assert _audit(data, ".") == 0
    assert _audit(data, ".", "--seed", "2") == 0
    assert Path.cwd() == work and (work / "notes.txt").read_text() == "mine"
    assert json.loads((work / "results.json").read_text())["run_id"] == run_id_of(work / "scores.parquet")
    assert not [p for p in list(work.iterdir()) + list(tmp_path.iterdir())  # no partial folder left; the writer's
                if p.name.startswith(".") and p.name != ".attrib-audit.json"]    # manifest says what it wrote


def test_select_on_a_results_json_that_does_not_match_its_bootstrap(data, tmp_path, capsys):
    out = tmp_path / "out"
    assert _audit(data, out, "--construct", "attribution") == 0
    res = json.loads((out / "results.json").read_text())
    for s in res["slices"]:
        s["slice"] = "renamed-" + s["slice"]
    (out / "results.json").write_text(json.dumps(res))  # same run id, edited by hand
    capsys.readouterr()
    assert main(["select", "--results", str(out)]) == 2
    assert "names slices that bootstrap.npz does not hold" in one_line(capsys)
    res["slices"] = [None]
    (out / "results.json").write_text(json.dumps(res))
    assert main(["select", "--results", str(out)]) == 2
    assert "results.json: key 'slices[0]': expected an object, got null" in one_line(capsys)


@pytest.mark.parametrize("argv, command, reason", [
    (["audit", "x.jsonl", "--seed", "-1"], "attrib-audit audit", "argument --seed: must be a non-negative integer"),
    (["agree", "--n-boot", "0"], "attrib-audit agree", "argument --n-boot: must be at least 10, not 0"),
    (["models", "bogus"], "attrib-audit models", "argument action: invalid choice: 'bogus'"),
    (["probe", "compare", "--n-boot", "0"], "attrib-audit probe compare", "argument --n-boot: must be at least 10"),
    ([], "attrib-audit", "the following arguments are required: COMMAND"),
])
def test_a_usage_error_is_one_line_naming_the_command_and_its_help(capsys, argv, command, reason):
    """argparse's own error() printed the whole usage block (36 lines for audit) above the reason."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"{command}: error: {reason}") and err.endswith(f"(see {command} --help)\n")
