"""The transfer and sensitivity blocks of a saved results.json are read through their records: written byte for byte
as the records' JSON, read back equal, and a value of the wrong type in a sealed file (its digest recomputed) is one
line naming the file and key in `report`, `select` and `audit --check` (exit 2), never a traceback."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from attrib_audit.audit import AuditConfig, run_audit
from attrib_audit.audit.sensitivity import SensitivitySection
from attrib_audit.audit.transfer import TransferSection
from attrib_audit.data import demo_paths, load_pairs
from attrib_audit.files.jsonfile import is_sealed, sealed_json
from attrib_audit.files.records import from_record, to_record
from cli_run import run_main as run


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """An audit of four sources of one construct (transfer, lodo and exchangeability all computed), two metrics."""
    table = load_pairs([demo_paths()[0]], construct="attribution")
    length = np.array([len(e) for e in table.evidences], dtype=float)
    config = AuditConfig(scorers=("lexical",), slice_by="source", n_boot=50, n_perm=50, cache_path=":memory:",
                         quiet=True, precomputed={"length": length})
    out = tmp_path_factory.mktemp("audit")
    run_audit(table, config, log=lambda _line: None).save(out)
    return out


def test_the_saved_blocks_read_back_as_records_that_write_the_same_json(folder):
    res = json.loads((folder / "results.json").read_text())
    transfer = from_record(TransferSection, res["transfer"])
    sensitivity = from_record(SensitivitySection, res["sensitivity"])
    assert isinstance(transfer, TransferSection) and isinstance(sensitivity, SensitivitySection)
    assert json.dumps(to_record(transfer)) == json.dumps(res["transfer"])
    assert json.dumps(to_record(sensitivity)) == json.dumps(res["sensitivity"])
    e = transfer.constructs["attribution"]
    assert e.status == "ok" and e.statistics is not None and e.statistics.metrics == ["lexical", "length"]
    assert [x.status for x in sensitivity.lodo] == ["ok"] and sensitivity.exchangeability[0].test.n_perm == 50


def _set(obj: dict, path: list, value: object) -> None:
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


PLANTED = [
    (["transfer", "notes", 1], [], "key 'transfer.notes[1]': expected a string, got a list"),
    (["transfer", "constructs", "attribution", "regret", "n_boot"], {"a": 1},
     "key 'transfer.constructs.attribution.regret.n_boot': expected an integer, got an object"),
    (["transfer", "constructs", "attribution", "regret", "selector", "minus_best_fixed_ci"], [0.1],
     "key 'transfer.constructs.attribution.regret.selector.minus_best_fixed_ci': expected a list of 2, got a list"),
    (["transfer", "slices", 0, "auprc", "lexical", "auprc"], "x",
     "key 'transfer.slices[0].auprc.lexical.auprc': expected a number, got a string"),
    (["transfer", "constructs", "attribution", "status"], "maybe",
     "key 'transfer.constructs.attribution.status': expected one of 'ok', 'insufficient', got a string"),
    (["sensitivity", "length", "halves", 0, "scorers", 0, "n_short"], "12",
     "key 'sensitivity.length.halves[0].scorers[0].n_short': expected an integer, got a string"),
    (["sensitivity", "lodo", 0, "drops", 0, "verdict"], None,
     "key 'sensitivity.lodo[0].drops[0].verdict': expected a string, got null"),
    (["sensitivity", "exchangeability", 0, "p_interaction"], True,
     "key 'sensitivity.exchangeability[0].p_interaction': expected a number, got a boolean"),
]


@pytest.mark.parametrize("path,value,message", PLANTED, ids=[".".join(map(str, p[0])) for p in PLANTED])
def test_a_wrong_type_in_a_sealed_block_is_one_line_naming_the_file_and_key(folder, tmp_path, path, value, message):
    copy = tmp_path / "planted"
    copy.mkdir()
    for f in folder.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    res = json.loads((copy / "results.json").read_text())
    _set(res, path, value)
    (copy / "results.json").write_text(sealed_json(res))  # the digest recomputed: the file passes as written by us
    assert is_sealed(json.loads((copy / "results.json").read_text()))
    for argv in (["report", str(copy)], ["select", "--results", str(copy)], ["audit", "--check", str(copy)]):
        code, _, err = run(argv)
        assert code == 2, (argv, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)
        assert f"{copy / 'results.json'}: {message}" in err, (argv, err)


def test_verbose_audit_with_a_graded_statistic_prints_its_transfer_detail(tmp_path):
    """A correlation as the transfer statistic has no threshold to move: the detail leaves out balanced accuracy and
    length correlates instead of failing on their absence."""
    g = np.random.default_rng(1)
    rows = [{"id": f"{d}{i}s{s}", "dataset": d, "group": f"{d}{i}", "likert": (r := float(g.integers(1, 6)) + 0.3 * s),
             "good": r + float(g.normal(scale=noise)), "bad": float(g.normal())}
            for d, noise in (("A", 0.5), ("B", 1.0), ("C", 1.5)) for i in range(15) for s in range(4)]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run(["audit", str(tmp_path / "g.jsonl"), "--rating-col", "likert", "--construct", "attribution",
                          "--scorers", "none", "--score-col", "good=good", "--score-col", "bad=bad", "--statistic",
                          "spearman", "--n-boot", "60", "--n-perm", "60", "--no-cache", "--quiet", "-v", "--out",
                          str(tmp_path / "o")])
    assert code == 0, err
    assert "== transfer within construct 'attribution' (3 datasets) ==" in out and "Two-way decomposition" in out
    assert "Balanced accuracy" not in out
