"""One run spec: flags, --config (JSON/TOML), results.json and --check all run the same thing; scorer options
are validated; --check compares everything, takes nothing machine-local from the results file, and --rescore."""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from attrib_audit.audit.spec import RunSpec, SpecError, load_spec_file
from attrib_audit.cli import main
from attrib_audit.data import demo_paths
from attrib_audit.files.records import to_record

AB = demo_paths()[0]  # attributionbench sample: 4 sources of one construct, so `transfer` is computed
FAST = ["--scorers", "lexical", "--n-boot", "60", "--n-perm", "50", "--seed", "3", "--slice-by", "source",
        "--construct", "attribution", "--quiet"]


def with_length(tmp_path: Path) -> Path:
    """The sample with an `evidence_words` column, audited as a second metric so `transfer` is computed."""
    rows = [json.loads(line) for line in AB.read_text().splitlines() if line.strip()]
    path = tmp_path / "data" / AB.name
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps({**r, "evidence_words": len(r["evidence"].split())}) + "\n" for r in rows))
    return path


TWO = ["--score-col", "words=evidence_words"]


def audit(tmp_path: Path, *args: str, out: str = "out") -> Path:
    assert main(["audit", *args, "--out", str(tmp_path / out), "--cache", str(tmp_path / "c.sqlite"), *FAST]) == 0
    return tmp_path / out


def results(folder: Path) -> dict:
    return json.loads((folder / "results.json").read_text())


def check(tmp_path: Path, folder: Path, *extra: str) -> int:
    return main(["audit", "--check", str(folder), "--cache", str(tmp_path / "c.sqlite"), *extra])


def test_unknown_scorer_option_is_a_one_line_error_listing_the_valid_ones(tmp_path, capsys):
    rc = main(["audit", str(AB), "--scorers", "lexical,bertscore", "--scorer-opt", "bertscore.num_layer=5",
               "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and "Traceback" not in err
    assert "'bertscore' has no option num_layer" in err and "num_layers" in err and "rescale_with_baseline" in err
    assert not (tmp_path / "o").exists()  # refused before anything ran


def test_spec_in_results_runs_again_from_json_and_toml_config(tmp_path):
    data = with_length(tmp_path)
    ref = results(audit(tmp_path, str(data), *TWO))
    assert ref["transfer"]["constructs"]["attribution"]["status"] == "ok"
    spec = ref["spec"]
    assert spec["stats"] == {"n_boot": 60, "seed": 3, "n_perm": 50, "slice_by": "source", "level": 0.95,
                             "window_sensitivity": None, "system_resample": ["inputs"], "statistic": "auroc"}
    assert spec["data"]["files"][0]["format"] == "pairs" and len(spec["data"]["files"][0]["sha256"]) == 64
    assert to_record(RunSpec.from_dict(spec)) == spec  # round trip
    (tmp_path / "audit.json").write_text(json.dumps(spec))
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    shutil.copy(data, cfg / AB.name)
    (cfg / "audit.toml").write_text(f"""
[data]
files = [{{ path = "{AB.name}" }}]  # relative: read from this file's folder
construct = "attribution"
[[scorers]]
name = "lexical"
[stats]
n_boot = 60
seed = 3
n_perm = 50
slice_by = "source"
[[precomputed]]
name = "words"
column = "evidence_words"
""")
    for i, name in enumerate(("audit.json", "cfg/audit.toml")):
        out = tmp_path / f"from_config_{i}"
        assert main(["audit", "--config", str(tmp_path / name), "--out", str(out),
                     "--cache", str(tmp_path / "c.sqlite"), "--quiet"]) == 0
        got = results(out)
        files = got["spec"]["data"]["files"]
        assert files[0]["path"] == str(data if name == "audit.json" else cfg / AB.name)
        assert {**got["spec"], "data": {**got["spec"]["data"], "files": []}} == \
            {**spec, "data": {**spec["data"], "files": []}}
        assert files[0]["sha256"] == spec["data"]["files"][0]["sha256"]
        for key in ("auroc", "paired", "transfer", "slices"):
            assert got[key] == ref[key], key
    argv = ["audit", "--config", str(tmp_path / "audit.json"), "--n-boot", "50", "--out", str(tmp_path / "x")]
    assert main(argv) == 2


@pytest.mark.parametrize("raw, message", [
    ({"data": {"files": [{"path": "x.jsonl"}]}, "scorers": [{"name": "lexical"}], "stats": {"n_bot": 5}},
     "unknown key n_bot; valid: n_boot, seed, n_perm, slice_by, level"),
    ({"data": {"files": [{"path": "x.jsonl"}]}, "scorers": [{"name": "judge", "options": {"url": "http://x"}}]},
     "never read from a spec or results file: pass --judge-url"),
    ({"data": {"files": [{"path": "x.jsonl"}]}, "scorers": [{"name": "blend", "options": {"w_lexical": 1}}]},
     "'blend' has no option w_lexical; valid: path, w_lex, w_sem"),
    ({"data": {"files": [{"path": "x.jsonl"}]}, "scorers": [{"name": "lexical"}], "stats": {"level": 95}},
     "stats.level: expected a number between 0 and 1"),
])
def test_bad_specs_are_refused_with_the_field_named(tmp_path, raw, message, capsys):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RunSpec.from_dict(raw)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(SpecError, match=str(path)):
        load_spec_file(path)
    assert main(["audit", "--config", str(path), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def _first_float(node, trail=()):
    """The key/index trail to the first float leaf of a JSON value, and that float."""
    items = sorted(node.items()) if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        found = _first_float(v, (*trail, k))
        if found:
            return found
    return (trail, node) if isinstance(node, float) else None


def test_check_compares_everything_transfer_included_within_the_stated_tolerance(tmp_path, capsys):
    out = audit(tmp_path, str(with_length(tmp_path)), *TWO)
    assert results(out)["transfer"]["constructs"]["attribution"]["regret"]["lowest_regret_metric"] in ("lexical",
                                                                                                       "words")
    capsys.readouterr()
    assert check(tmp_path, out) == 0  # n_perm=50 and level come back from the spec (10000 would change p-values)
    captured = capsys.readouterr()
    assert "reproduced: every value of results.json, transfer included" in captured.out
    assert "from results.json (run spec)" in captured.err and "within ±1e-09" in captured.err
    original = (out / "results.json").read_text()

    def tamper(edit) -> None:
        res = json.loads(original)
        edit(res)
        (out / "results.json").write_text(json.dumps(res))

    def swap(r):
        att = r["transfer"]["constructs"]["attribution"]["regret"]
        att["lowest_regret_metric"] = "words" if att["lowest_regret_metric"] == "lexical" else "lexical"

    tamper(swap)
    assert check(tmp_path, out) == 1
    assert ".transfer.constructs.attribution.regret.lowest_regret_metric: recorded" in capsys.readouterr().out

    trail, value = _first_float(json.loads(original)["transfer"]["constructs"])

    def nudge(delta):
        def edit(r):
            node = r["transfer"]["constructs"]
            for k in trail[:-1]:
                node = node[k]
            node[trail[-1]] = value + delta
        return edit

    tamper(nudge(1e-3))
    assert check(tmp_path, out) == 1
    assert f".transfer.constructs.{trail[0]}" in capsys.readouterr().out
    assert check(tmp_path, out, "--tolerance", "0.01") == 0
    tamper(nudge(1e-12))
    assert check(tmp_path, out) == 0


def test_check_rescore_recomputes_instead_of_replaying_the_cache(tmp_path, capsys):
    out = audit(tmp_path, str(AB))
    with sqlite3.connect(tmp_path / "c.sqlite") as db:  # a cache that lies
        db.execute("UPDATE scores SET score = 1.0 - score")
    capsys.readouterr()
    assert check(tmp_path, out) == 1
    assert "NOT reproduced" in capsys.readouterr().out
    assert check(tmp_path, out, "--rescore") == 0
    captured = capsys.readouterr()
    assert "recomputed" in captured.out and "scores recomputed (--rescore)" in captured.err


def ab_native_rows() -> list[dict]:
    rows = [json.loads(line) for line in AB.read_text().splitlines() if line.strip()]
    return [{"id": r["id"], "question": r.get("question"), "claim": r["claim"], "references": [r["evidence"]],
             "attribution_label": "attributable" if r["label"] else "not attributable", "src_dataset": r["source"]}
            for r in rows]


def test_check_reproduces_an_adapter_input(tmp_path, capsys):
    native = tmp_path / "ab_native.jsonl"
    native.write_text("".join(json.dumps(r) + "\n" for r in ab_native_rows()))
    out = audit(tmp_path, str(native))  # format detected: attributionbench
    assert results(out)["spec"]["data"]["files"][0]["format"] == "attributionbench"
    capsys.readouterr()
    assert check(tmp_path, out) == 0, capsys.readouterr()
    native.write_text(native.read_text() + "\n")
    assert check(tmp_path, out) == 1
    assert "changed: sha256" in capsys.readouterr().out


def test_check_refuses_a_folder_without_results_and_flags_that_would_change_the_spec(tmp_path, capsys):
    assert main(["audit", "--check", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere is not a folder (no such folder)" in err
    assert main(["audit", "--check", str(tmp_path), "--n-boot", "10"]) == 2
    assert "n_boot cannot be set by flags beside it" in capsys.readouterr().err


def test_crafted_results_cannot_choose_endpoints_key_variables_or_cache_paths(tmp_path, capsys, monkeypatch):
    from judge_servers import RuleServer

    out = audit(tmp_path, str(AB))
    monkeypatch.setenv("ATTRIB_AUDIT_JUDGE_GGUF", str(tmp_path / "no-local-judge.gguf"))  # no judge here
    evil = tmp_path / "evil"
    with RuleServer() as server:
        res = results(out)
        res["spec"]["scorers"].append({"name": "judge", "options": {"model": "m"}})
        res["config"]["scorers"].append("judge")
        res["config"]["cache"] = str(evil / "scores.sqlite")
        res["config"]["scorer_options"] = {"judge": {"url": server.url, "model": "m", "api_key_env": "HOME",
                                                     "request_cache": str(evil / "requests.sqlite")}}
        (out / "results.json").write_text(json.dumps(res))
        capsys.readouterr()
        rc = check(tmp_path, out)
        captured = capsys.readouterr()
        assert server.hits == {}  # not one request reached the endpoint the file named
        assert rc == 1 and "NOT reproduced" in captured.out  # the judge could not run here: a difference, not a request
        assert "never from results.json" in captured.err and f"score cache: {tmp_path / 'c.sqlite'}" in captured.err

        res["spec"]["scorers"][-1]["options"]["url"] = server.url  # a spec that names an endpoint is refused
        (out / "results.json").write_text(json.dumps(res))
        assert check(tmp_path, out) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pass --judge-url" in err and server.hits == {}
    assert not evil.exists()  # no cache file was created (or moved aside) where the file said


def test_check_reproduces_an_hf_input(tmp_path):
    import os
    import subprocess
    import sys

    from test_hf_and_cli_formats import SRC, ab_native

    folder = tmp_path / "ab_hf"
    folder.mkdir()
    rows = [ab_native(i, "attributable" if i % 2 else "not attributable",
                      [f"the tower is {i} metres tall" if i % 3 else "a different sentence"]) for i in range(12)]
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache, out = str(tmp_path / "c.sqlite"), str(tmp_path / "o")
    audit_argv = ["audit", "--hf", str(folder), "--hf-split", "test", "--scorers", "lexical", "--n-boot", "30",
                  "--n-perm", "30", "--cache", cache, "--out", out, "--quiet"]
    script = ("import sys; from attrib_audit.cli import main; "
              # --check fetches the dataset results.json names only when asked to again
              f"assert main({audit_argv!r}) == 0; "
              f"sys.exit(main(['audit', '--check', {out!r}, '--hf', {str(folder)!r}, '--cache', {cache!r}]))")
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_CACHE": str(tmp_path / "hf" / "datasets")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reproduced: every value" in proc.stdout
    assert results(tmp_path / "o")["spec"]["data"]["hf"] == {"id": str(folder), "split": "test", "revision": None,
                                                             "config": None}


def test_check_never_imports_a_plugin_only_the_results_file_names(tmp_path, capsys, monkeypatch):
    out = audit(tmp_path, str(AB))
    res = results(out)
    pwned = tmp_path / "pwned"
    res["spec"]["scorers"].append({"name": "os:system", "options": {"command": f"touch {pwned}"}})
    (out / "results.json").write_text(json.dumps(res))
    capsys.readouterr()
    assert check(tmp_path, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "scorers[1].name 'os:system' names code to import" in err
    assert "--scorers os:system" in err and str(out / "results.json") in err
    assert not pwned.exists()


def test_data_loads_from_a_data_spec_without_argparse(tmp_path):
    from attrib_audit.data import DataError
    from attrib_audit.data.sources import DataSpec, FileSource, load_data

    native = tmp_path / "ab_native.jsonl"
    native.write_text("".join(json.dumps({**r, "id": "n-" + r["id"]}) + "\n" for r in ab_native_rows()[:20]))
    table = load_data(DataSpec(files=(FileSource(path=str(AB), construct="attribution"),
                                      FileSource(path=str(native)))))
    assert len(table) == 220 and [o.format for o in table.origin] == ["pairs", "attributionbench"]
    with pytest.raises(DataError, match="duplicated id"):  # ids are unique across every file of a spec
        load_data(DataSpec(files=(FileSource(path=str(AB)), FileSource(path=str(AB)))))
