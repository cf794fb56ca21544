"""Hypothesis against the command line, in-process: random bytes, random JSON values per field, random CSV quoting,
random results folders. A run may succeed or fail, but a failure is exit 2 (or 3) with one line, never a traceback."""
from __future__ import annotations

import csv
import io
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from attrib_audit.data.adapters import FORMATS, get_adapter
from attrib_audit.data.demo import demo_paths
from cli_run import run_stderr as run

FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])
FIELDS = ("id", "dataset", "source", "question", "claim", "evidence", "label", "group", "construct")
JSON_VALUE = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                      max_size=3), max_leaves=6)


def assert_clean(code, err: str) -> None:
    assert isinstance(code, int) and code in (0, 2, 3), (code, err)
    assert "Traceback" not in err, err
    if code:
        lines = [ln for ln in err.strip().splitlines() if ln.startswith(("attrib-audit", "usage:"))]
        assert lines and err.strip().splitlines()[-1] == lines[-1], err  # ends in its one-line reason
        assert all("\n" not in ln for ln in lines)


def audit(path: Path, *extra: str) -> tuple[int, str]:
    return run(["audit", str(path), "--scorers", "lexical", "--n-boot", "20", "--n-perm", "20", "--no-cache", "--quiet",
                "--out", str(path.parent / "out"), *extra])


@FUZZ
@given(st.binary(max_size=300), st.sampled_from([".jsonl", ".csv", ".tsv", ".parquet", ".json"]))
def test_random_bytes_as_a_data_file(blob, suffix):
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / f"in{suffix}"
        f.write_bytes(blob)
        assert_clean(*audit(f))


@FUZZ
@given(st.lists(st.fixed_dictionaries({}, optional={f: JSON_VALUE for f in FIELDS}), min_size=1, max_size=6),
       st.sampled_from(["fail", "skip"]))
def test_random_json_values_in_every_field(rows, on_error):
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "in.jsonl"
        f.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
        assert_clean(*audit(f, "--on-error", on_error))


CELL = st.text(alphabet=st.sampled_from(list('ab ,"\n\r\t;01\'\\') + ["é", "\u2028"]), max_size=8)


@FUZZ
@given(st.lists(st.lists(CELL, min_size=5, max_size=5), min_size=1, max_size=6),
       st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC, csv.QUOTE_NONE]),
       st.sampled_from([",", "\t"]), st.booleans())
def test_random_csv_quoting(rows, quoting, delimiter, break_quotes):
    buf = io.StringIO()
    w = csv.writer(buf, quoting=quoting, delimiter=delimiter, escapechar="\\", quotechar='"')
    w.writerow(["id", "dataset", "claim", "evidence", "label"])
    try:
        for i, r in enumerate(rows):
            w.writerow([f"{i}{r[0]}", r[1], r[2], r[3], r[4]])
    except csv.Error:  # a row Python's csv cannot write unquoted: not an input anyone could have
        reject()
    text = buf.getvalue()
    if break_quotes:  # an unbalanced quote somewhere
        text = text[: len(text) // 2] + '"' + text[len(text) // 2:]
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / ("in.tsv" if delimiter == "\t" else "in.csv")
        f.write_text(text, encoding="utf-8")
        assert_clean(*audit(f))


RESULT_KEYS = ("run_id", "config", "data", "scorers", "slices", "auroc", "paired", "truncation", "failures", "transfer")


@FUZZ
@given(st.dictionaries(st.sampled_from(RESULT_KEYS), JSON_VALUE, max_size=6), st.binary(max_size=60),
       st.sampled_from(["report", "select", "agree"]))
def test_random_results_folders(results, npz, command):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "res"
        d.mkdir()
        (d / "results.json").write_text(json.dumps(results))
        (d / "bootstrap.npz").write_bytes(npz)
        (d / "scores.parquet").write_bytes(npz)
        argv = {"report": ["report", str(d)], "select": ["select", "--results", str(d)],
                "check": ["audit", "--check", str(d), "--no-cache"],
                "agree": ["agree", "--results", str(d), "--a", "lexical", "--b", "human", "--n-boot", "10"]}[command]
        code, err = run(argv)
        assert "Traceback" not in err and isinstance(code, int) and code in (0, 1, 2, 3), (code, err)


NATIVE = [f for f in FORMATS if f not in ("auto", "pairs")]


@FUZZ
@given(st.sampled_from(NATIVE).flatmap(lambda fmt: st.tuples(st.just(fmt), st.lists(
    st.fixed_dictionaries({f: JSON_VALUE for f in get_adapter(fmt).fields}), min_size=1, max_size=4))),
    st.booleans())
def test_random_json_values_in_every_field_of_each_benchmark_format(fmt_rows, explicit):
    fmt, rows = fmt_rows
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "in.jsonl"  # a stem no format knows: the construct comes from --construct
        f.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
        assert_clean(*audit(f, "--construct", "attribution", *(["--format", fmt] if explicit else [])))


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """One real audit folder (results.json, scores.parquet, bootstrap.npz) whose results.json the next test edits."""
    out = tmp_path_factory.mktemp("audited") / "out"
    code, err = run(["audit", str(demo_paths()[0]), "--scorers", "lexical", "--n-boot", "20", "--n-perm", "20",
                     "--construct", "attribution", "--no-cache", "--quiet", "--out", str(out)])
    assert code == 0, err
    return out


@FUZZ
@given(st.dictionaries(st.sampled_from(RESULT_KEYS), JSON_VALUE, max_size=3),
       st.sampled_from(["report", "select", "agree"]))
def test_random_values_in_a_real_results_json(audited, over, command):
    """Beside a real scores.parquet and bootstrap.npz (same run id), fields of results.json replaced at random."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "res"
        shutil.copytree(audited, d)
        recorded = json.loads((audited / "results.json").read_text())
        (d / "results.json").write_text(json.dumps({**recorded, **over, "run_id": recorded["run_id"]}))
        argv = {"report": ["report", str(d)], "select": ["select", "--results", str(d)],
                "agree": ["agree", "--results", str(d), "--a", "lexical", "--b", "human", "--n-boot", "10"]}[command]
        code, err = run(argv)
        assert "Traceback" not in err and isinstance(code, int) and code in (0, 1, 2, 3), (code, err)


SPEC_VALUE = JSON_VALUE | st.fixed_dictionaries({}, optional={
    k: JSON_VALUE for k in ("files", "hf", "format", "columns", "n_boot", "seed", "engine", "device", "name",
                            "options")})


@FUZZ
@given(st.fixed_dictionaries({}, optional={k: SPEC_VALUE for k in ("data", "scorers", "stats", "engine",
                                                                    "precomputed", "version", "spec")}),
       st.sampled_from([".json", ".toml"]))
def test_random_config_files(raw, suffix):
    """A --config file of random sections and values (TOML files hold the JSON text: invalid TOML) is exit 0/2."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / f"c{suffix}"
        cfg.write_text(json.dumps(raw))
        code, err = run(["audit", "--config", str(cfg), "--no-cache", "--quiet", "--out", str(Path(tmp) / "o")])
        assert_clean(code, err)


ATTACKS = {  # what a config file names that only a command line may choose, and the key the refusal names
    "plugin": ({"name": "os:system", "options": {"command": "touch {marker}"}}, None, "scorers[0].name"),
    "url": ({"name": "judge", "options": {"model": "http://evil.example/{marker}"}}, None, "options.model holds a URL"),
    "key variable": ({"name": "judge", "options": {"api_key_env": "HOME"}}, None, "api_key_env"),
    "cache path": ({"name": "judge", "options": {"request_cache": "{marker}"}}, None, "request_cache"),
    "dataset": ({"name": "lexical"}, {"id": "attacker/data"}, "data.hf.id 'attacker/data'"),
}


@FUZZ
@given(st.sampled_from(sorted(ATTACKS)), st.sampled_from(["config", "results.json"]))
def test_config_files_never_choose_code_urls_datasets_secrets_or_paths(attack, container):
    scorer, hf, key = ATTACKS[attack]
    with tempfile.TemporaryDirectory() as tmp:
        marker = Path(tmp) / "ran"
        scorer = json.loads(json.dumps(scorer).replace("{marker}", str(marker)))
        spec = {"data": {"files": [{"path": str(demo_paths()[0])}], **({"hf": hf} if hf else {})},
                "scorers": [scorer]}
        cfg = Path(tmp) / ("results.json" if container == "results.json" else "c.json")
        cfg.write_text(json.dumps({"spec": spec, "auroc": []} if container == "results.json" else spec))
        code, err = run(["audit", "--config", str(cfg), "--no-cache", "--quiet", "--out", str(Path(tmp) / "o")])
        assert_clean(code, err)
        assert code == 2 and str(cfg) in err and key in err, err
        assert not marker.exists() and not (Path(tmp) / "o").exists()


@pytest.mark.parametrize("command", ["audit", "report"])
@pytest.mark.parametrize("entry", [".", "results.json", "plots", "report.md", "report.html"])
def test_symlinked_output_folders_and_entries_are_never_followed(tmp_path, command, entry):
    """An output folder, or an entry in it, that is a symbolic link: the link's target is never written or deleted,
    whatever the command; the outcome is a clean exit."""
    out = tmp_path / "o"
    code, err = run(["audit", str(demo_paths()[0]), "--scorers", "lexical", "--n-boot", "20", "--n-perm", "20",
                     "--no-cache", "--quiet", "--out", str(out), "--report"])
    assert code == 0, err
    victim = tmp_path / "victim"
    if entry == ".":
        victim.mkdir()
        (victim / "results.json").write_text("precious")
        (victim / "index.txt").write_text("results.json\n")
        moved = tmp_path / "real"
        out.rename(moved)
        out.symlink_to(victim, target_is_directory=True)
    elif entry == "plots":
        victim.mkdir()
        (victim / "precious.png").write_text("precious")
        (victim / "index.txt").write_text("precious.png\n")
        shutil.rmtree(out / "plots")
        (out / "plots").symlink_to(victim, target_is_directory=True)
    else:
        victim.write_text("precious")
        (out / entry).unlink()
        (out / entry).symlink_to(victim)
    before = sorted((p.name, p.read_text()) for p in victim.iterdir()) if victim.is_dir() else victim.read_text()
    argv = (["report", str(out)] if command == "report" else
            ["audit", str(demo_paths()[0]), "--scorers", "lexical", "--n-boot", "20", "--n-perm", "20",
             "--no-cache", "--quiet", "--out", str(out), "--report", "--seed", "1"])
    code, err = run(argv)
    assert_clean(code, err)
    after = sorted((p.name, p.read_text()) for p in victim.iterdir()) if victim.is_dir() else victim.read_text()
    assert after == before
    assert (out / entry).is_symlink() or entry == "." and out.is_symlink()
