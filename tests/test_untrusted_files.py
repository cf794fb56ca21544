"""Untrusted-input reproductions, each as it was run against the command line: no file the tool reads can run code,
fetch a dataset or leak a key, and no file it writes can destroy the user's data (symlinks, its own inputs, files
it did not write, two runs at once, the umask's permissions)."""
from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest

from attrib_audit.cli import main
from attrib_audit.data.demo import demo_paths
from attrib_audit.errors import InputError
from attrib_audit.files.outdir import staged_dir, write_text_atomic
from attrib_audit.probe.compare import CompareSettings, Coverage, ProbeComparison, ProbeResult
from attrib_audit.validate.store import LabelStore, store_path
from judge_servers import ScriptedServer

FAST = ["--scorers", "lexical", "--n-boot", "20", "--n-perm", "20", "--no-cache", "--quiet"]


def _audit(data: Path, out: Path, *extra: str) -> int:
    return main(["audit", str(data), *FAST, "--out", str(out), *extra])


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture
def pairs(tmp_path) -> Path:
    p = tmp_path / "pairs.jsonl"
    p.write_bytes(demo_paths()[0].read_bytes())
    return p


# ---- 1, 11: a config or results file never chooses code to import or a dataset to fetch ------------------------

def test_config_naming_a_module_factory_scorer_runs_nothing(pairs, tmp_path, capsys):
    stolen = tmp_path / "stolen.txt"
    cfg = tmp_path / "evil.json"
    cfg.write_text(json.dumps({"data": {"files": [{"path": str(pairs)}]},
                               "scorers": [{"name": "os:system", "options": {"command": f"echo key > {stolen}"}}]}))
    assert main(["audit", "--config", str(cfg), "--out", str(tmp_path / "o"), "--no-cache", "--quiet"]) == 2
    err = _one_line(capsys)
    assert not stolen.exists()
    assert f"{cfg}: scorers[0].name 'os:system' names code to import" in err and "--scorers os:system" in err


def test_config_with_a_url_in_a_scorer_option_is_refused(pairs, tmp_path, capsys):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"data": {"files": [{"path": str(pairs)}]},
                               "scorers": [{"name": "mymod:make", "options": {"endpoint": "http://evil.example/x"}}]}))
    assert main(["audit", "--config", str(cfg), "--scorers", "mymod:make", "--out", str(tmp_path / "o"),
                 "--no-cache", "--quiet"]) == 2
    assert "scorers[0].options.endpoint holds a URL" in _one_line(capsys)


def test_check_with_a_crafted_hf_id_fetches_nothing(pairs, tmp_path, capsys, monkeypatch):
    out = tmp_path / "o"
    assert _audit(pairs, out) == 0
    res = json.loads((out / "results.json").read_text())
    res["spec"]["data"]["hf"] = {"id": "attacker/exfiltrate", "split": "train", "revision": None, "config": None}
    (out / "results.json").write_text(json.dumps(res))
    capsys.readouterr()

    def fetched(*_a, **_k):
        raise AssertionError("a dataset named in results.json was fetched")

    monkeypatch.setattr("attrib_audit.data.sources.load_hf", fetched)
    assert main(["audit", "--check", str(out), "--no-cache", "--quiet"]) == 2
    err = _one_line(capsys)
    assert "data.hf.id 'attacker/exfiltrate' names a dataset to fetch" in err and str(out / "results.json") in err


# ---- 8: a results.json is a config ----------------------------------------------------------------------------

def test_config_from_a_results_json_reruns_its_spec(pairs, tmp_path, capsys):
    first, second = tmp_path / "a", tmp_path / "b"
    assert _audit(pairs, first, "--n-boot", "30") == 0
    capsys.readouterr()
    assert main(["audit", "--config", str(first / "results.json"), "--out", str(second), "--no-cache",
                 "--quiet"]) == 0, capsys.readouterr().err
    a, b = (json.loads((d / "results.json").read_text()) for d in (first, second))
    assert b["spec"] == a["spec"] and b["spec"]["stats"]["n_boot"] == 30
    assert [r["auroc"] for r in b["auroc"]] == [r["auroc"] for r in a["auroc"]]


# ---- 5: a key in a redirect's Location is never printed ---------------------------------------------------------

def test_a_redirect_carrying_the_key_does_not_print_it(pairs, tmp_path, capsys, monkeypatch):
    key = "sk-live-Zq81xKey"
    monkeypatch.setenv("ATTRIB_AUDIT_JUDGE_API_KEY", key)
    with ScriptedServer(lambda *_: (302, "moved", {"Location": f"http://127.0.0.1:9/steal/{key}/x"})) as srv:
        rc = main(["audit", str(pairs), "--scorers", "judge", "--judge-url", srv.url, "--judge-model", "m",
                   "--judge-retries", "0", "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "o"),
                   "--n-boot", "20", "--n-perm", "20", "--quiet"])
    captured = capsys.readouterr()
    assert rc == 3 and "HTTP 302" in captured.err
    assert key not in captured.err and key not in captured.out and "/steal/***/x" in captured.err


# ---- 2: never onto an input of the same command ---------------------------------------------------------------

def test_label_export_never_overwrites_the_store_or_the_pool(tmp_path, capsys):
    pool = tmp_path / "to_label.jsonl"
    assert main(["sample", str(demo_paths()[0]), "--n", "20", "--strategy", "random", "--out", str(pool)]) == 0
    ids = [json.loads(line)["id"] for line in pool.read_text().splitlines()]
    store = LabelStore(store_path(pool))
    for pid in ids[:5]:
        store.put("alice", pid, "supported")
    before = pool.read_bytes()
    capsys.readouterr()
    for target in (store_path(pool), pool):
        assert main(["label", str(pool), "--export", str(target)]) == 2
        assert "is an input of this command" in _one_line(capsys)
    assert len(LabelStore(store_path(pool)).decisions("alice")) == 5 and pool.read_bytes() == before
    assert main(["label", str(pool), "--export", str(tmp_path / "labelled.jsonl")]) == 0  # elsewhere: fine


@pytest.mark.parametrize("command", ["sample", "score"])
def test_sample_and_score_never_truncate_their_input(pairs, command, capsys):
    before = pairs.read_bytes()
    argv = (["sample", str(pairs), "--n", "10", "--strategy", "random"] if command == "sample"
            else ["score", str(pairs), "--scorers", "lexical", "--no-cache", "--quiet"])
    assert main([*argv, "--out", str(pairs)]) == 2
    assert "is an input of this command" in _one_line(capsys) and pairs.read_bytes() == before


def test_an_existing_file_it_did_not_write_needs_force(pairs, tmp_path, capsys):
    mine = tmp_path / "mine.jsonl"
    mine.write_text("my notes\n")
    argv = ["sample", str(pairs), "--n", "10", "--strategy", "random", "--out", str(mine)]
    assert main(argv) == 2
    assert "exists and attrib-audit did not write it" in _one_line(capsys) and mine.read_text() == "my notes\n"
    assert main([*argv, "--force"]) == 0 and len(mine.read_text().splitlines()) == 10
    assert main([*argv, "--seed", "1"]) == 0  # now it is attrib-audit's own: rewritten without --force


# ---- 3, 4, 10: symlinks are never followed, what the tool did not write is never deleted -----------------------

def test_report_never_follows_a_plots_symlink(pairs, tmp_path, capsys):
    out = tmp_path / "o"
    assert _audit(pairs, out) == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.png").write_bytes(b"not a plot")
    (outside / "index.txt").write_text("precious.png\n")
    (out / "plots").symlink_to(outside, target_is_directory=True)
    capsys.readouterr()
    assert main(["report", str(out)]) == 2
    assert "plots is a symbolic link" in _one_line(capsys)
    assert sorted(p.name for p in outside.iterdir()) == ["index.txt", "precious.png"]
    assert (outside / "precious.png").read_bytes() == b"not a plot"


def test_audit_out_keeps_a_plots_folder_and_report_it_never_wrote(pairs, tmp_path):
    out = tmp_path / "o"
    assert _audit(pairs, out) == 0
    (out / "plots").mkdir()
    (out / "plots" / "mine.png").write_bytes(b"mine")
    (out / "report.md").write_text("my own report\n")
    assert _audit(pairs, out, "--seed", "1") == 0
    assert (out / "plots" / "mine.png").read_bytes() == b"mine" and (out / "report.md").read_text() == "my own report\n"
    assert json.loads((out / "results.json").read_text())["spec"]["stats"]["seed"] == 1


def test_audit_out_with_a_plots_symlink_and_other_files_keeps_the_new_run(pairs, tmp_path, capsys):
    out = tmp_path / "o"
    assert _audit(pairs, out) == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (out / "plots").symlink_to(outside, target_is_directory=True)
    (out / "notes.txt").write_text("notes")
    assert _audit(pairs, out, "--seed", "2") == 0, capsys.readouterr().err
    assert json.loads((out / "results.json").read_text())["spec"]["stats"]["seed"] == 2
    assert (out / "plots").is_symlink() and (outside / "keep.txt").read_text() == "keep"
    assert (out / "notes.txt").read_text() == "notes"


def test_an_audit_report_replaces_only_its_own_report(pairs, tmp_path, capsys):
    out = tmp_path / "o"
    assert _audit(pairs, out) == 0
    (out / "report.md").write_text("my own report\n")
    capsys.readouterr()
    assert main(["report", str(out)]) == 2  # report.md is the user's: refused, nothing half-written
    assert "report.md exists and attrib-audit did not write it" in _one_line(capsys)
    assert (out / "report.md").read_text() == "my own report\n" and not (out / "report.html").exists()
    assert main(["report", str(out), "--force"]) == 0 and "my own report" not in (out / "report.md").read_text()
    assert main(["report", str(out)]) == 0  # its own report now: rewritten without --force


def test_probe_per_example_csv_never_follows_a_symlink(tmp_path):
    out = tmp_path / "probe"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "per_example.csv").symlink_to(victim)
    comparison = ProbeComparison(
        config=CompareSettings(n_boot=200, seed=0, level=0.95, ci="percentile", rewrite_jaccard_threshold=0.9),
        data={}, coverage=Coverage(n_compared=2, n_only_base=0, n_only_tuned=0, n_unanswered=0), metrics=(),
        rewrite={}, verdict="")
    result = ProbeResult(results=comparison, per_example={"em": np.array([1.0, 0.0])})
    with pytest.raises(InputError, match="per_example.csv is a symbolic link"):
        result.save(out)
    assert victim.read_text() == "precious"


def test_score_provenance_json_never_follows_a_symlink(pairs, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "s.csv"
    Path(f"{out}.provenance.json").symlink_to(victim)
    assert main(["score", str(pairs), "--scorers", "lexical", "--no-cache", "--quiet", "--out", str(out)]) == 2
    assert "provenance.json is a symbolic link" in _one_line(capsys)
    assert victim.read_text() == "precious" and not out.exists()


def test_outputs_keep_the_umask_permissions(pairs, tmp_path):
    old = os.umask(0o022)
    try:
        out = tmp_path / "o"
        assert _audit(pairs, out) == 0
        write_text_atomic(out / "extra.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    for name in ("results.json", "scores.parquet", "bootstrap.npz", "extra.json"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644, name


NAMES = ("results.json", "scores.parquet", "bootstrap.npz", *(f"part{i:02d}.txt" for i in range(40)))


@pytest.mark.parametrize("existing", [False, True])
def test_two_runs_publishing_one_folder_at_once_leave_one_whole_set(tmp_path, existing):
    """Two runs publish the same folder at the same instant, into a new folder or one that also holds a note of
    the user's (moved in entry by entry): no error, and afterwards every file comes from one run."""
    errors: list[BaseException] = []

    def publish(out: Path, tag: str, gate: threading.Barrier) -> None:
        try:
            with staged_dir(out) as tmp:
                for name in NAMES:
                    (tmp / name).write_text(tag)
                gate.wait(timeout=10)  # both runs publish at the same instant
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    for round_ in range(15):
        out = tmp_path / f"o{round_}"
        if existing:
            with staged_dir(out) as tmp:
                for name in NAMES:
                    (tmp / name).write_text("earlier")
            (out / "notes.txt").write_text("the user's")
        gate = threading.Barrier(2)
        runs = [threading.Thread(target=publish, args=(out, tag, gate)) for tag in ("A", "B")]
        for t in runs:
            t.start()
        for t in runs:
            t.join()
        assert errors == []
        tags = {(out / n).read_text() for n in NAMES}
        assert len(tags) == 1 and tags <= {"A", "B"}, (round_, tags)
        assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(
            NAMES + (("notes.txt",) if existing else ()))
