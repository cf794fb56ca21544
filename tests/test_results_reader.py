"""Every command that reads results.json reads it through the typed records: a value of the wrong type anywhere, in a
file whose digest was recomputed (so it passes for one attrib-audit wrote), is one line naming the file and the key
(exit 2), never a traceback; a file of an earlier version that lacks the keys added since still reads."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from attrib_audit.audit.results import AuditResults, SliceRow
from attrib_audit.audit.saved import read_results
from attrib_audit.cli import main
from attrib_audit.data.origin import BenchmarkFile, HFBenchmark, HFPairs, PairsFile
from attrib_audit.errors import InputError
from attrib_audit.files.jsonfile import sealed_json
from attrib_audit.files.records import to_record

SUMMEVAL = Path(__file__).parent / "data" / "summeval_system_scores.jsonl"


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> Path:
    """An audit of three precomputed metrics on four systems' outputs (system-level section included)."""
    tmp = tmp_path_factory.mktemp("audited")
    rows = [json.loads(line) for line in SUMMEVAL.read_text(encoding="utf-8").splitlines() if line.strip()][:240]
    data = tmp / "summ.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp / "run"
    assert main(["audit", str(data), "--claim-col", "system", "--evidence-col", "group", "--system-col", "system",
                 "--scorers", "none", "--score-col", "lex=lexical", "--score-col", "mini=minilm", "--score-col",
                 "bert=bertscore", "--construct", "consistency", "--n-boot", "100", "--n-perm", "50", "--no-cache",
                 "--quiet", "--out", str(out)]) == 0
    return out


def _planted(audited: Path, tmp_path: Path, plant) -> Path:
    """A copy of the audit folder whose results.json has `plant` applied and its digest recomputed."""
    folder = tmp_path / "run"
    shutil.copytree(audited, folder)
    raw = json.loads((folder / "results.json").read_text())
    plant(raw)
    (folder / "results.json").write_text(sealed_json(raw))
    return folder


def _refused(command: str, folder: Path, capsys) -> str:
    """What `command` on `folder` printed, after checking it refused the folder in one line with exit 2."""
    capsys.readouterr()
    code = main(COMMANDS[command](folder))
    err = capsys.readouterr().err.strip()
    assert code == 2, (code, err)
    assert "\n" not in err and "Traceback" not in err, err
    return err


def _set(path: str, value):
    """A plant: the value at a dotted key path (`slices[0].n`) replaced."""
    def plant(raw: dict) -> None:
        parts = path.replace("[", ".").replace("]", "").split(".")
        at = raw
        for p in parts[:-1]:
            at = at[int(p)] if isinstance(at, list) else at[p]
        last = parts[-1]
        if isinstance(at, list):
            at[int(last)] = value
        else:
            at[last] = value
    return plant


PLANTS = [  # (key path planted, value, key path the line names, what it says was expected)
    ("slices[0].n", "x", "slices[0].n", "expected an integer, got a string"),
    ("auroc[2].ci_low", [], "auroc[2].ci_low", "expected a number or null, got a list"),
    ("config", True, "config", "expected an object, got a boolean"),
    ("systems.slices[0].design", None, "systems.slices[0].design", "expected an object, got null"),
    ("paired[0].n_dropped", {"lex": "many"}, "paired[0].n_dropped.lex", "expected an integer, got a string"),
    ("scorers[1].n_pairs", 1.5, "scorers[1].n_pairs", "expected an integer, got a number"),
    ("tool", [], "tool", "expected an object, got a list"),
    ("failures[0].examples", [3], "failures[0].examples[0]", "expected a string, got a number"),
]
COMMANDS = {  # each reader command, with what it needs besides the folder
    "report": lambda d: ["report", str(d)],
    "select": lambda d: ["select", "--results", str(d)],
    "select --level system": lambda d: ["select", "--results", str(d), "--level", "system"],
    "audit --check": lambda d: ["audit", "--check", str(d), "--no-cache"],
    "plan --results": lambda d: ["plan", "--results", str(d), "--half-width", "0.1"],
    "threshold --results": lambda d: ["threshold", "--results", str(d), "--scorers", "lex", "--max-false-pass", "0.2"],
    "systems --results": lambda d: ["systems", "--results", str(d)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("key,value,named,expected", PLANTS, ids=[p[0] for p in PLANTS])
def test_a_wrong_type_anywhere_is_one_line_naming_the_file_and_key(audited, tmp_path, capsys, command, key, value,
                                                                    named, expected):
    folder = _planted(audited, tmp_path, _set(key, value))
    err = _refused(command, folder, capsys)
    assert err.endswith(f"{folder / 'results.json'}: key '{named}': {expected}"), err


OUT_OF_RANGE = [  # a value of the right type that no audit writes: refused when read, never drawn or divided by
    ("auroc[0].auroc", 7.5, "auroc[0]", "auroc = 7.5 is outside [0, 1]"),
    ("slices[0].n", -5, "slices[0]", "n = -5 is outside [0, inf]"),
    ("paired[0].ci_high", 3.0, "paired[0]", "ci_high = 3 is outside [-1, 1]"),
]


@pytest.mark.parametrize("key,value,named,expected", OUT_OF_RANGE, ids=[p[0] for p in OUT_OF_RANGE])
def test_a_value_out_of_its_range_is_one_line_naming_the_row(audited, tmp_path, capsys, key, value, named, expected):
    folder = _planted(audited, tmp_path, _set(key, value))
    capsys.readouterr()
    for argv in (["report", str(folder)], ["select", "--results", str(folder)]):
        code = main(argv)
        err = capsys.readouterr().err.strip()
        assert code == 2 and "\n" not in err and "Traceback" not in err, (code, err)
        assert err.endswith(f"{folder / 'results.json'}: key '{named}': {expected}"), err


def test_the_unplanted_folder_reads_in_every_command(audited, tmp_path, capsys):
    """The plants above are what fails: the same folder, untouched, passes each reader."""
    for name, argv in COMMANDS.items():
        folder = tmp_path / name.replace(" ", "_")
        shutil.copytree(audited, folder)
        assert main(argv(folder)) in (0, 1), (name, capsys.readouterr().err)  # select may find nothing to recommend
        assert "Traceback" not in capsys.readouterr().err


def test_a_file_without_the_keys_added_since_reads_with_their_defaults(audited, tmp_path):
    """results.json of an earlier version: no chance test in the AUROC rows, no statistic or chance_test in the
    config, no unavailable/precomputed/skipped blocks, no clamped counts, no run spec or command."""
    def older(raw: dict) -> None:
        for k in ("unavailable", "precomputed", "skipped", "spec", "command", "systems", "elapsed_s"):
            raw.pop(k, None)
        for k in ("statistic", "chance_test", "precomputed"):
            raw["config"].pop(k)
        for r in raw["auroc"]:
            for k in ("p_chance", "p_chance_holm", "beats_chance"):
                r.pop(k, None)
        for f in raw["failures"]:
            f.pop("n_clamped")
    folder = _planted(audited, tmp_path, older)
    res = read_results(folder)
    assert res.config.statistic == "auroc" and res.config.chance_test is None and res.precomputed == []
    assert all(r.chance is None and not r.beats_chance for r in res.auroc) and res.spec is None
    assert res.systems is None and all(f.n_clamped == 0 for f in res.failures)
    assert main(["report", str(folder)]) == 0


DATA_PLANTS = [  # a data entry (where the pairs came from) edited by hand
    ("data[0].rows", "200", "data[0].rows", "expected an integer, got a string"),
    ("data[0].load.columns", [], "data[0].load.columns", "expected an object, got a list"),
    ("data[0].load.label_map", {"yes": "1"}, "data[0].load.label_map.yes", "expected an integer, got a string"),
    ("data[0].skipped", {}, "data[0].skipped", "expected a list, got an object"),
    ("data[0].skipped", [{"file": "f", "row": "2", "field": None, "reason": "bad"}], "data[0].skipped[0].row",
     "expected an integer or null, got a string"),
    ("data[0]", "summ.jsonl", "data[0]", "expected an object, got a string"),
]


@pytest.mark.parametrize("command", ["report", "select", "audit --check"])
@pytest.mark.parametrize("key,value,named,expected", DATA_PLANTS, ids=[f"{p[0]}={p[1]!r}" for p in DATA_PLANTS])
def test_a_wrong_type_in_a_data_entry_is_one_line_naming_the_file_and_key(audited, tmp_path, capsys, command, key,
                                                                           value, named, expected):
    folder = _planted(audited, tmp_path, _set(key, value))
    capsys.readouterr()
    code = main(COMMANDS[command](folder))
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "Traceback" not in err, (code, err)
    assert err.endswith(f"{folder / 'results.json'}: key '{named}': {expected}"), err


@pytest.mark.parametrize("command", ["report", "select", "audit --check"])
def test_a_data_entry_of_no_known_kind_names_the_key_it_lacks(audited, tmp_path, capsys, command):
    folder = _planted(audited, tmp_path, lambda raw: raw["data"][0].pop("sha256"))
    capsys.readouterr()
    code = main(COMMANDS[command](folder))
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err, (code, err)
    assert err.endswith(f"{folder / 'results.json'}: key 'data[0].sha256' is missing"), err


def test_data_entries_read_as_their_kind_and_earlier_ones_with_defaults(audited, tmp_path):
    """Each kind of source reads as its record; the keys added since (load options, skipped rows, skip counts,
    unclustered pairs) read as their defaults in an entry an earlier version wrote."""
    hf = {"path": "hf:org/set[test]", "hf": "org/set", "config": None, "split": "test", "revision": None,
          "pinned": False, "fingerprint": "f1", "hf_rows": 7}
    adapted = {"format": "attributionbench", "construct": "attribution", "dataset": "ab", "native_rows": 6,
               "rows": 4, "skipped": [{"file": "ab.jsonl", "row": None, "field": None, "reason": "empty", "count": 2}],
               "n_skipped": 2}

    def entries(raw: dict) -> None:
        raw["data"] += [{"path": "old.jsonl", "sha256": "ab" * 32, "rows": 3},
                        {"path": "ab.jsonl", "sha256": "cd" * 32, **adapted},
                        {**hf, **adapted}, {**hf, "format": "pairs", "rows": 7, "skipped": []}]
    folder = _planted(audited, tmp_path, entries)
    res = read_results(folder)
    now, old, bench, hf_bench, hf_pairs = res.data
    assert [type(d) for d in res.data] == [PairsFile, PairsFile, BenchmarkFile, HFBenchmark, HFPairs]
    assert now.load is not None and now.load.columns["claim"] == "system" and now.skipped == ()
    assert old.load is None and old.skipped == () and old.format is None
    assert bench.skip_counts == {} and bench.n_unclustered is None and bench.skipped[0].count == 2
    assert hf_bench.hf == "org/set" and hf_bench.native_rows == 6 and hf_pairs.rows == 7 and hf_pairs.pinned is False
    assert main(["report", str(folder)]) == 0


def test_a_required_key_missing_is_one_line_too(audited, tmp_path):
    folder = _planted(audited, tmp_path, lambda raw: raw["slices"][0].pop("status"))
    with pytest.raises(InputError, match=r"results\.json: key 'slices\[0\]\.status' is missing$"):
        read_results(folder)


def test_the_records_read_back_equal_the_ones_written(audited):
    res = read_results(audited)
    assert isinstance(res, AuditResults) and isinstance(res.slices[0], SliceRow) and res.systems is not None
    assert json.loads(sealed_json(to_record(res))) == json.loads((audited / "results.json").read_text())


SPEC_PLANTS = [  # the run spec is read strictly (it is what `audit --check` runs): its keys as written, its own checks
    ("spec.precomputed", "m", "spec.precomputed: expected a list, got str"),
    ("spec.stats.level", 95, "spec.stats.level: expected a number between 0 and 1, got 95"),
    ("spec.data.construct", [1], "spec.data.construct: expected a string, got [1]"),
    ("spec.stats.n_bot", 5, "spec.stats: unknown key n_bot; valid: n_boot, seed, n_perm, slice_by, level, "
                            "window_sensitivity, system_resample, statistic"),
    ("spec.precomputed[0].lower", "yes", "spec.precomputed.lower: expected true or false, got 'yes'"),
    ("spec.scorers", {"name": "lexical"}, "spec.scorers: expected a list, got dict"),
    ("config.precomputed.lex.column", 3, "key 'config.precomputed.lex.column': expected a string, got a number"),
    ("config.precomputed.lex", [], "key 'config.precomputed.lex': expected an object, got a list"),
]


@pytest.mark.parametrize("command", ["report", "select", "audit --check"])
@pytest.mark.parametrize("key,value,expected", SPEC_PLANTS, ids=[p[0] for p in SPEC_PLANTS])
def test_a_wrong_run_spec_or_precomputed_source_is_one_line_naming_the_file_and_key(audited, tmp_path, capsys, command,
                                                                                     key, value, expected):
    folder = _planted(audited, tmp_path, _set(key, value))
    err = _refused(command, folder, capsys)
    assert err.endswith(f"{folder / 'results.json'}: {expected}"), err


def test_the_run_spec_and_precomputed_sources_read_as_records(audited):
    from attrib_audit.audit.spec import RunSpec
    from attrib_audit.external.sources import ScoreSource

    res = read_results(audited)
    assert isinstance(res.spec, RunSpec) and res.spec.precomputed[0] == ScoreSource(name="lex", column="lexical")
    assert res.config.precomputed["lex"] == res.spec.precomputed[0]


def test_a_run_spec_without_the_keys_added_since_reads_with_their_defaults(audited, tmp_path):
    """Every key of the spec that has a default was absent from some earlier version's file (or may be)."""
    def older(raw: dict) -> None:
        spec = raw["spec"]
        for part in ("stats", "engine", "version"):
            spec.pop(part)
        for k in [k for k in spec["data"] if k != "files"]:
            spec["data"].pop(k)
        for f in spec["data"]["files"]:
            for k in ("construct", "dataset"):
                f.pop(k, None)
        for p in spec["precomputed"]:
            for k in ("file", "format", "lower"):
                p.pop(k)
    folder = _planted(audited, tmp_path, older)
    res = read_results(folder)
    assert res.spec is not None and res.spec.stats.system_resample == ("inputs",)
    assert res.spec.stats.statistic == "auroc" and res.spec.data.label_from_rating is None
    assert main(["report", str(folder)]) == 0


def test_values_handed_to_run_audit_are_recorded_as_their_source(tmp_path):
    """A precomputed metric given as values (Python) has no file or column to read again: its config entry names
    where its values came from, and reads back as that record."""
    import numpy as np

    from attrib_audit.audit import AuditConfig, run_audit
    from attrib_audit.audit.results import HandedSource
    from attrib_audit.data import demo_paths, load_pairs

    table = load_pairs([str(demo_paths()[0])], construct="attribution")
    values = np.linspace(0, 1, len(table))
    result = run_audit(table, AuditConfig(scorers=(), precomputed={"mine": values}, n_boot=200, n_perm=20,
                                          cache_path=":memory:", quiet=True))
    assert result.results.config.precomputed == {"mine": HandedSource(name="mine", source="python")}
    result.save(tmp_path / "run")
    raw = json.loads((tmp_path / "run" / "results.json").read_text())
    assert raw["config"]["precomputed"] == {"mine": {"name": "mine", "source": "python"}}
    assert read_results(tmp_path / "run").config.precomputed == result.results.config.precomputed


# ---- agreement.json and thresholds.json beside results.json: read as their records ---------------------------------

def _agreed(audited: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "agreed"
    shutil.copytree(audited, folder)
    for b in ("lex", "mini"):
        assert main(["agree", "--results", str(folder), "--a", "human", "--b", b, "--n-boot", "30"]) == 0
    return folder


def test_agreement_json_keeps_one_record_per_pair_and_the_report_reads_them(audited, tmp_path, capsys):
    from attrib_audit.audit.agreement import AgreementFile, agreement_record
    from attrib_audit.report.inputs import load_inputs

    folder = _agreed(audited, tmp_path)
    assert main(["agree", "--results", str(folder), "--a", "human", "--b", "lex", "--n-boot", "30"]) == 0  # again
    raw = json.loads((folder / "agreement.json").read_text())
    read = agreement_record(raw, folder / "agreement.json")
    assert isinstance(read, AgreementFile) and [(p.a, p.b) for p in read.pairs] == [("human", "mini"), ("human", "lex")]
    assert read.run_id == json.loads((folder / "results.json").read_text())["run_id"]
    assert all("run_id" not in p for p in raw["pairs"])  # written once for the file, not per comparison
    inputs = load_inputs(folder)
    assert inputs.agreement == read
    one = {**raw["pairs"][0], "run_id": raw["run_id"]}  # the layout of earlier versions: one comparison, top level
    assert agreement_record(one, "old.json").pairs == [read.pairs[0]]


@pytest.mark.parametrize(("plant", "message"), [
    (lambda r: r["pairs"][1]["overall"].__setitem__("n", "many"),
     "key 'pairs[1].overall.n': expected an integer, got a string"),
    (lambda r: r["pairs"][0].pop("slices"), "key 'pairs[0].slices' is missing"),
    (lambda r: r.__setitem__("pairs", {}), "key 'pairs': expected a list, got an object"),
])
def test_a_wrong_value_in_agreement_json_is_one_line_naming_the_file_and_key(audited, tmp_path, capsys, plant,
                                                                             message):
    folder = _agreed(audited, tmp_path)
    raw = json.loads((folder / "agreement.json").read_text())
    plant(raw)
    (folder / "agreement.json").write_text(sealed_json(raw))
    capsys.readouterr()
    assert main(["report", str(folder)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"agreement.json: {message}" in err[0] and "Traceback" not in err[0]
