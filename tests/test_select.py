import numpy as np

from attrib_audit.audit.recommend import recommend
from attrib_audit.stats.transfer import AurocMatrix


def mat(point, noise=0.01, b=300):
    rng = np.random.default_rng(0)
    point = np.asarray(point, dtype=float)
    m, d = point.shape
    reps = point[:, :, None] + rng.normal(0, noise, (1, d, b)) + rng.normal(0, noise / 4, (m, d, b))
    return AurocMatrix(tuple("abc")[:m], tuple("WXYZ")[:d], point, reps)


def test_a_metric_best_everywhere_transfers():
    r = recommend("attribution", mat([[0.9, 0.85, 0.8], [0.7, 0.6, 0.65], [0.6, 0.6, 0.6]]))
    assert r.metric == "a" and r.verdict == "transfers" and r.held_out_regret == 0.0 and r.folds_agreeing == 3


def test_a_crossover_does_not_transfer_and_says_so():
    r = recommend("attribution", mat([[0.9, 0.55, 0.9], [0.55, 0.9, 0.6], [0.6, 0.6, 0.6]]))
    assert r.metric == "a" and r.verdict == "does-not-transfer"
    assert r.portable_metrics == [] and "No audited metric is portable" in r.caveat
    assert r.held_out_regret > 0.1 and "label a sample of the new dataset" in r.caveat


def test_two_datasets_are_flagged():
    r = recommend("c", mat([[0.9, 0.8], [0.7, 0.6]]))
    assert "Only two datasets" in r.caveat


def _boot(scores, y, groups):
    from attrib_audit.stats import bootstrap_aurocs

    return bootstrap_aurocs(np.vstack(scores), y, groups, n_boot=500, rng=0)


def test_on_target_never_recommends_a_metric_no_better_than_chance():
    """WiCE-like: 150 pairs, every candidate a coin flip. The old rule called them 'tied: any will do'."""
    from attrib_audit.audit.recommend import on_target
    from attrib_audit.report.console import format_recommendation

    rng = np.random.default_rng(5)
    y = (rng.random(150) < 0.3).astype(int)
    rec = on_target("fact-check", "wice", ["lexical", "minilm", "lenratio"],
                    _boot([rng.normal(size=150) for _ in range(3)], y, np.arange(150)))
    assert rec.metric is None and rec.verdict == "no-better-than-chance"
    assert "no candidate is better than chance on wice (best: " in rec.caveat and "one-sided" in rec.caveat
    assert "will do" not in rec.caveat and "no recommendation" in format_recommendation(rec)
    assert set(rec.chance) == {"lexical", "minilm", "lenratio"}
    assert not any(v["wice"]["beats_chance"] for v in rec.chance.values())


def test_on_target_ties_only_among_metrics_that_beat_chance():
    """A strong metric and two at chance: 'best' against the ones beating chance, never tied with a coin flip."""
    from attrib_audit.audit.recommend import on_target

    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 300)
    good = 1.2 * y + rng.normal(size=300)
    rec = on_target("c", "d", ["good", "flip", "flip2"],
                    _boot([good, rng.normal(size=300), rng.normal(size=300)], y, np.arange(300)))
    assert rec.metric == "good" and rec.verdict == "best-on-target"
    assert "Not better than chance (never a choice): flip, flip2" in rec.caveat


def test_recommend_declines_when_nothing_beats_chance_anywhere():
    r = recommend("c", mat([[0.51, 0.5, 0.49], [0.5, 0.52, 0.5]], noise=0.05))
    assert r.metric is None and r.verdict == "no-better-than-chance" and "better than chance" in r.caveat
    r = recommend("c", mat([[0.9, 0.5, 0.85], [0.7, 0.52, 0.65]], noise=0.05))
    assert r.metric == "a" and "a is not better than chance on X" in r.caveat


def _one_dataset_results(beats):
    from results_records import PAIRED, ROW, results

    auroc = [{"scorer": n, "slice": "wice", "auroc": a, "ci_low": a - 0.1, "ci_high": a + 0.1, "p_chance": p,
              "p_chance_holm": p, "beats_chance": b, **ROW} for n, a, p, b in beats]
    paired = [{"scorer_a": "lexical", "scorer_b": "minilm", "slice": "wice", "diff": 0.016, "ci_low": -0.1,
               "ci_high": 0.13, "excludes_zero": False, **PAIRED}]
    return results(transfer={"level": 0.95, "n_perm": 100, "notes": [], "slices": [],
                             "constructs": {"fact-check": {"datasets": ["wice"], "status": "insufficient",
                                                           "reason": "one dataset of this construct"}},
                             "excluded_slices": []}, auroc=auroc, paired=paired)


def test_one_dataset_headline_says_at_chance_in_terminal_and_report():
    from attrib_audit.report.console import format_verdicts
    from attrib_audit.report.transfer import headline_blocks

    res = _one_dataset_results([("lexical", 0.544, 0.2, False), ("minilm", 0.528, 0.3, False)])
    text = format_verdicts(res.transfer, res.auroc, res.paired)
    assert "no candidate is better than chance on this data (best: lexical, AUROC 0.544 [0.444, 0.644]" in text
    assert "no verdict" not in text and "use " not in text
    blocks = headline_blocks(res.transfer, None, res.auroc, res.paired)
    assert "no candidate is better than chance" in blocks[0].text


def test_one_dataset_headline_gives_the_on_target_verdict():
    from attrib_audit.report.console import format_verdicts

    res = _one_dataset_results([("lexical", 0.80, 1e-5, True), ("minilm", 0.78, 1e-4, True)])
    text = format_verdicts(res.transfer, res.auroc, res.paired)
    assert "fact-check (one dataset, wice): use lexical" in text and "minilm +0.016 [-0.100, +0.130]" in text
    assert "Tied with minilm" in text and "second labelled dataset" in text


def test_paired_marks_only_flag_differences_whose_ci_excludes_zero():
    from attrib_audit.report.console import transfer as console

    assert console._SIGN[0] == "" and "+" not in console._SIGN[1] and "−" not in console._SIGN[-1]
    assert console._SIGN[1].strip() and console._SIGN[-1].strip()


def test_wice_sample_audit_select_and_report_say_no_candidate_beats_chance(tmp_path, capsys):
    """30 WiCE claims (tests/data, ODC-BY annotations) with lexical and a claim/evidence length-ratio column:
    the audit headline, `select` and the report all decline to recommend a coin flip."""
    import json
    from pathlib import Path

    from attrib_audit.cli import main

    src = Path(__file__).parent / "data" / "wice.jsonl"
    data = tmp_path / "wice.jsonl"
    with data.open("w") as f:
        for line in src.read_text().splitlines():
            r = json.loads(line)
            r["lenratio"] = len(r["claim"].split()) / max(1, len(r["evidence"].split()))
            f.write(json.dumps(r) + "\n")
    out = tmp_path / "a"
    assert main(["audit", str(data), "--scorers", "lexical", "--score-col", "lenratio=lenratio", "--construct",
                 "fact-check", "--n-boot", "300", "--n-perm", "20", "--no-cache", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "fact-check (one dataset, wice): no candidate is better than chance on this data" in text
    assert main(["select", "--results", str(out)]) == 0
    text = capsys.readouterr().out
    assert "no recommendation: no candidate is better than chance on wice" in text and "will do" not in text
    assert main(["report", str(out)]) == 0
    assert "no candidate is better than chance" in (out / "report.md").read_text()
    res = json.loads((out / "results.json").read_text())
    assert all(not r["beats_chance"] and 0 < r["p_chance"] < 1 for r in res["auroc"])


def test_on_target_at_chance_under_a_correlation_names_the_statistic_and_its_null():
    """With --statistic spearman the chance test is of ρ > 0: the answer must not speak of AUROC > 0.5."""
    from attrib_audit.audit.correlations import statistic_boot
    from attrib_audit.audit.recommend import on_target

    rng = np.random.default_rng(7)
    n = 120
    rating = rng.normal(size=n)
    boot = statistic_boot("spearman", "noise", rating=rating, scores=rng.normal(size=(2, n)),
                          items=[f"q{i}" for i in range(n)], systems=None, n_boot=300, seed=0)
    rec = on_target("summarisation", "noise", ["a", "b"], boot, "Spearman ρ")
    assert rec.metric is None and rec.verdict == "no-better-than-chance"
    assert "Spearman ρ" in rec.caveat and "ρ > 0" in rec.caveat
    assert "AUROC" not in rec.caveat
    assert rec.chance_test.startswith("one-sided Wald z test of Spearman ρ > 0") and "AUROC" not in rec.chance_test
