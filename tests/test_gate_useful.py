"""Gates that are certified and useful: the supported-pass rate beside every certificate, 'certified but useless'
under the floor, and the joint Learn-then-Test certificate of a risk and a supported-pass floor."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
from scipy import stats

from attrib_audit.cli import main
from attrib_audit.stats.joint import certify_joint
from attrib_audit.stats.threshold import Target
from attrib_audit.stats.types import LabelledScores


def _draw(rng, n, shift):
    y = rng.integers(0, 2, n)
    return LabelledScores(rng.normal(size=n) + shift * y, y)


def test_joint_certificate_of_an_infeasible_pair_of_targets_errs_at_most_delta():
    """Unsupported N(0,1), supported N(1,1): false-pass ≤ 0.2 needs t ≥ 0.84, passing ≥ 60% of supported needs
    t ≤ 0.75, so no threshold meets both and every certificate is an error; LTT keeps them under δ = 0.1."""
    rng = np.random.default_rng(1)
    hits = sum(certify_joint(_draw(rng, 300, 1.0), Target("false_pass", 0.2), 0.6, 0.1).threshold is not None
               for _ in range(150))
    assert hits / 150 <= 0.1


def test_joint_certificate_of_a_feasible_pair_holds_both_in_the_population():
    rng = np.random.default_rng(2)
    got = [certify_joint(_draw(rng, 400, 3.0), Target("false_pass", 0.1), 0.6, 0.1) for _ in range(40)]
    ts = [c.threshold for c in got if c.threshold is not None]
    assert len(ts) >= 30
    fp, sp = stats.norm.sf(np.array(ts)), stats.norm.sf(np.array(ts) - 3.0)
    assert ((fp <= 0.1) & (sp >= 0.6)).mean() >= 0.9
    c = got[0]
    assert c.grid <= 40 and c.labels_at_hand == 400


def test_joint_certificate_says_how_many_labels_would_do_it():
    rng = np.random.default_rng(3)
    c = certify_joint(_draw(rng, 60, 2.5), Target("false_pass", 0.1), 0.6, 0.1)
    assert c.threshold is None and "none certifiable for both" in c.reason
    assert c.labels_needed is not None and c.labels_needed > 60 and f"about {c.labels_needed} labelled" in c.reason


def test_threshold_prints_supported_pass_and_marks_a_gate_that_passes_almost_nothing(tmp_path, capsys):
    """A coin-flip metric on 150 pairs: a false-pass target is certified by blocking nearly everything; the
    console says so (the old console showed the certificate as if it were a gate worth deploying)."""
    rng = np.random.default_rng(4)
    path = tmp_path / "pairs.jsonl"
    with path.open("w") as f:
        for i in range(150):
            y = int(rng.random() < 0.3)
            f.write(json.dumps({"id": f"p{i}", "dataset": "d", "claim": "c", "evidence": "e", "label": y,
                                "coin": float(rng.random())}) + "\n")
    argv = ["threshold", str(path), "--scorers", "lexical", "--score-col", "coin=coin", "--construct", "fact-check",
            "--max-false-pass", "0.1", "--out", str(tmp_path / "o"), "--n-boot", "200"]
    assert main(argv + ["--unit", "pair"]) == 0
    out = capsys.readouterr().out
    assert "supported passed" in out and "certified but useless: passes" in out
    assert main(argv + ["--unit", "pair", "--min-supported-pass", "0.6"]) == 0
    out = capsys.readouterr().out
    assert "Joint target" in out and "d coin: no candidate of the grid meets both" in out
    saved = json.loads((tmp_path / "o" / "thresholds.json").read_text())
    e = next(x for x in saved["entries"] if x["scorer"] == "coin")
    assert e["usefulness"]["useless"] and e["joint"]["threshold"] is None and saved["config"]["min_useful_pass"] == 0.5


def test_console_says_when_aurocs_are_weighted_to_a_pool():
    from attrib_audit.report.console import format_table
    from results_records import ROW, results

    res = results(scorers=[{"scorer": "lexical", "signature": "lexical", "n_pairs": 40, "n_unique": 40, "n_cached": 0,
                            "n_scored": 40, "n_batches": 1}],
                  auroc=[{"scorer": "lexical", "slice": "wice", "auroc": 0.6, "ci_low": 0.5, "ci_high": 0.7, **ROW}],
                  slices=[{"slice": "wice", "n": 40, "n_pos": 12, "n_groups": 40, "construct": "fact-check",
                           "status": "ok", "pool_size": 150.0,
                           "weighting": "horvitz-thompson: each pair weighs 1/inclusion_prob"}])
    assert "wice: weighted back to its pool by inclusion probabilities" in format_table(res)
    # a disagreement sample's weights sum to the pool size only in expectation: 143.4 for a pool of 150 pairs
    res = replace(res, slices=[replace(res.slices[0], pool_size=143.4)])
    text = format_table(res)
    assert "together about 143, the pool's size in expectation" in text and "143-pair pool" not in text


def test_console_explains_an_effective_count_only_when_one_is_fractional(tmp_path, capsys):
    from attrib_audit.audit.thresholds import read_thresholds
    from attrib_audit.report.console import format_gate_usefulness

    rng = np.random.default_rng(6)
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps({"id": f"p{i}", "dataset": "d", "claim": "c", "evidence": "e",
                                        "label": int(i % 3 == 0), "s": float(i % 3 == 0) + rng.random()}) + "\n"
                            for i in range(120)))
    assert main(["threshold", str(path), "--scorers", "lexical", "--score-col", "s=s", "--max-false-pass", "0.2",
                 "--unit", "pair", "--out", str(tmp_path / "o"), "--n-boot", "50"]) == 0
    capsys.readouterr()
    th = read_thresholds(tmp_path / "o")
    e = next(x for x in th.entries if x.certificate is not None)

    def with_count(n: float):
        assert e.certificate is not None
        return replace(th, entries=[replace(e, certificate=replace(e.certificate, n_effective=n))])

    assert "effective count" in format_gate_usefulness(with_count(16.65))
    assert "effective count" not in format_gate_usefulness(with_count(17.0))
