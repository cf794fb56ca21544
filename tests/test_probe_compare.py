import json
from pathlib import Path

import numpy as np
import pytest

from attrib_audit.cli import main
from attrib_audit.data.errors import DataError
from attrib_audit.files.records import from_record, to_record
from attrib_audit.probe.compare import CompareConfig, DiffCI, ProbeComparison, compare_systems, rewrite_values
from attrib_audit.probe.examples import example_paths
from attrib_audit.probe.records import AsqaExample, Passage, QAPair, load_asqa, load_outputs
from attrib_audit.report.console import format_probe_table


def _examples(n: int) -> dict[str, AsqaExample]:
    return {f"e{i}": AsqaExample(id=f"e{i}", question="q?", qa_pairs=(QAPair("", (f"ans{i}",)),),
                                 long_answers=(f"the answer is ans{i} today",),
                                 docs=(Passage("T", f"ans{i} text"),)) for i in range(n)}


def test_rewrite_values_hand_computed():
    r = rewrite_values(["a b c d", "same  text", "x y"], ["a b c e", "same text", "p q"])
    np.testing.assert_allclose(r["altered"], [1, 0, 1])  # whitespace-only change is not an alteration
    np.testing.assert_allclose(r["token_jaccard"], [3 / 5, 1.0, 0.0])
    np.testing.assert_allclose(r["heavy_rewrite"], [1, 0, 1])


def test_compare_reports_flat_metrics_beside_a_full_rewrite():
    ex = _examples(20)
    base = {k: f"The answer is ans{k[1:]} [1]." for k in ex}
    tuned = {k: f"Ans{k[1:]}, as far as records go, holds [1]." for k in ex}
    res = compare_systems(base, tuned, ex, CompareConfig(n_boot=300)).results
    rows = {r.metric: r for r in res.metrics}
    assert rows["qa_em"].base.mean == rows["qa_em"].tuned.mean == 1.0
    assert rows["qa_em"].diff == DiffCI(mean=0.0, ci_low=0.0, ci_high=0.0, n=20, excludes_zero=False)
    assert rows["citations"].diff.mean == 0.0
    assert rows["rouge_l"].diff.mean < 0 and rows["rouge_l"].diff.excludes_zero
    assert res.rewrite["altered"].mean == 1.0 and res.rewrite["heavy_rewrite"].mean == 1.0
    assert "rouge_l" in res.verdict and "flat: qa_em, citations" in res.verdict
    record = to_record(res)
    assert record["metrics"][0]["diff"] == {"mean": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 20,
                                            "excludes_zero": False}
    assert from_record(ProbeComparison, json.loads(json.dumps(record, allow_nan=False))) == res
    assert "tuned − base" in format_probe_table(res)


def test_compare_counts_one_sided_ids_and_rejects_unknown_ones():
    ex = _examples(4)
    base = {"e0": "ans0", "e1": "ans1", "e2": "x"}
    tuned = {"e0": "ans0", "e1": "no", "e3": "y"}
    cov = compare_systems(base, tuned, ex, CompareConfig(n_boot=50)).results.coverage
    assert (cov.n_compared, cov.n_only_base, cov.n_only_tuned, cov.n_unanswered) == (2, 1, 1, 0)
    assert cov.examples["only_base"] == ["e2"]
    with pytest.raises(DataError, match="not in the data"):
        compare_systems({**base, "zz": "?"}, tuned, ex)
    with pytest.raises(DataError, match="share no example id"):
        compare_systems({"e0": "a"}, {"e1": "b"}, ex)


def test_cli_compare_on_the_shipped_example(tmp_path, capsys):
    out = tmp_path / "probe"
    assert main(["probe", "compare", "--out", str(out), "--n-boot", "500", "--cache", str(tmp_path / "c.sqlite")]) == 0
    printed = capsys.readouterr().out
    assert "rewrite detection" in printed and "reward_claim_support" in printed
    res = json.loads((out / "probe.json").read_text())
    rows = {r["metric"]: r for r in res["metrics"]}
    assert res["coverage"]["n_compared"] == 30
    # the shipped set is built so answer-level metrics stay flat while the text and grounding change
    for flat in ("qa_em", "rouge_l", "citations"):
        assert not rows[flat]["diff"]["excludes_zero"], flat
    assert rows["reward_claim_support"]["diff"]["ci_high"] < 0
    assert res["rewrite"]["heavy_rewrite"]["mean"] > 0.9
    assert (out / "per_example.csv").exists()


def test_cli_compare_explicit_files_without_reward(tmp_path, capsys):
    p = example_paths()
    out = tmp_path / "o"
    assert main(["probe", "compare", str(p["base"]), str(p["base"]), "--data", str(p["data"]), "--out", str(out),
                 "--n-boot", "100", "--reward-scorer", "none"]) == 0
    res = json.loads((out / "probe.json").read_text())
    assert [r["metric"] for r in res["metrics"]] == ["qa_em", "rouge_l", "citations"]
    assert res["rewrite"]["altered"]["mean"] == 0.0 and res["rewrite"]["token_jaccard"]["mean"] == 1.0
    capsys.readouterr()
    assert main(["probe", "compare", str(p["base"]), "--out", str(out)]) == 2  # one line on stderr, no traceback
    err = capsys.readouterr().err
    assert err.startswith("attrib-audit probe: compare: give BASE, TUNED and --data together") and err.count("\n") == 1


def test_shipped_example_is_consistent():
    p = example_paths()
    ex = load_asqa(p["data"])
    assert len(ex) == 30
    assert set(load_outputs(p["base"])) == set(load_outputs(p["tuned"])) == set(ex)


@pytest.mark.parametrize("edit, key", [
    (lambda d: d["metrics"][1]["diff"].update(ci_low="low"), "metrics[1].diff.ci_low"),
    (lambda d: d["coverage"].pop("n_compared"), "coverage.n_compared")])
def test_report_names_the_file_and_key_of_a_wrong_probe_json(tmp_path, capsys, edit, key):
    probe = json.loads((Path(__file__).parent / "data" / "report_probe_example.json").read_text())
    edit(probe)
    bad = tmp_path / "probe.json"
    bad.write_text(json.dumps(probe))
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r")]) != 0
    err = capsys.readouterr().err.strip()
    assert str(bad) in err and key in err and len(err.splitlines()) == 1, err
