"""The `sensitivity` section: LODO verdicts on a known matrix, matched-length bins by hand, window
sensitivity with exact truncation counts on a tiny model, chunked vs truncated, printing and report."""
import json
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import tiny_hf
from attrib_audit.audit import AuditConfig, run_audit
from attrib_audit.audit.sensitivity import evidence_words, length_section, lodo_section
from attrib_audit.cli import main
from attrib_audit.data import load_demo
from attrib_audit.files.records import to_record
from attrib_audit.report.console import format_sensitivity
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.stats.bootstrap import BootstrapAUROC


def _scores_with_auroc(auroc: float, n: int = 10) -> np.ndarray:
    """Scores of n negatives (0..n-1) then n positives, each positive above exactly k_i negatives, sum k_i =
    auroc·n²."""
    wins = round(auroc * n * n)
    k = np.full(n, wins // n) + (np.arange(n) < wins % n)
    return np.concatenate([np.arange(n, dtype=float), k - 0.5])


def _boots(points: dict[str, np.ndarray], sd=0.005, n_boot=400, seed=0):
    """Real per-dataset bootstraps whose scores give exactly `points`, with replicates scattered around them."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 10)
    out = {}
    for d, p in points.items():
        scores = np.vstack([_scores_with_auroc(a) for a in p])
        assert np.allclose([roc_auc_score(y, s) for s in scores], p)
        boot = BootstrapAUROC(point=p, replicates=p[:, None] + rng.normal(0, sd, (p.size, n_boot)),
                              n=np.full(p.size, y.size), n_groups=y.size, n_boot=n_boot, scores=scores, labels=y,
                              codes=np.arange(y.size), rng_state={})
        out[d] = boot
    return out


def test_lodo_verdict_table_on_a_constructed_matrix():
    # a is best on x and y but poor on z; b is second on x, y and best on z; c is never close.
    # Regret (best − metric): a = [0, 0, .25] (mean .083), b = [.1, .1, 0] (mean .067): b is recommended,
    # and no metric is within the best's CI everywhere. Dropping z leaves a best on both: recommended a, portable a.
    pts = {"x": np.array([0.90, 0.80, 0.70]), "y": np.array([0.90, 0.80, 0.70]), "z": np.array([0.60, 0.85, 0.70])}
    [row] = to_record(lodo_section({"k": ["x", "y", "z"]}, ["a", "b", "c"], _boots(pts)))
    assert row["status"] == "ok"
    assert row["full"] == {"recommended": "b", "verdict": "does-not-transfer", "portable": []}
    table = {d["dropped"]: (d["recommended"], d["verdict"], d["portable"],
                            d["recommended_changed"]) for d in row["drops"]}
    assert table == {"x": ("b", "does-not-transfer", [], False), "y": ("b", "does-not-transfer", [], False),
                     "z": ("a", "transfers", ["a"], True)}
    assert row["stable"] is False
    [two] = lodo_section({"k": ["x", "y"]}, ["a", "b", "c"], _boots({d: pts[d] for d in "xy"}))
    assert two.status == "insufficient"


def test_matched_length_bins_and_halves_against_a_hand_computation():
    rng = np.random.default_rng(3)
    n = 90
    lengths = rng.integers(3, 60, n)
    evidences = [" ".join(["w"] * k) for k in lengths]
    y = np.tile([0, 1], n // 2)
    scores = y * 0.5 + rng.normal(0, 0.5, n) + lengths / 100
    table = SimpleNamespace(labels=y, groups=[f"g{i}" for i in range(n)], evidences=evidences)
    rows = {"d1": np.arange(0, 40), "d2": np.arange(40, 90)}
    words = evidence_words(evidences)
    assert words.tolist() == lengths.tolist()
    out = to_record(length_section(table, rows, {"s": ScoreBatch.plain(scores)}, {"k": ["d1", "d2"]}, words,
                                   SimpleNamespace(n_boot=20, seed=0)))
    [b] = out["bins"]
    edges = np.quantile(lengths, [0, 1 / 3, 2 / 3, 1])  # pooled over both datasets
    np.testing.assert_allclose(b["edges"], edges)
    for c in b["cells"]:
        r = rows[c["dataset"]]
        lo, hi = edges[c["bin"]], edges[c["bin"] + 1]
        inside = (lengths[r] >= lo) & ((lengths[r] < hi) if c["bin"] < 2 else (lengths[r] <= hi))
        assert c["n"] == inside.sum() and c["n_pos"] == y[r][inside].sum()
        assert c["auroc"] == pytest.approx(roc_auc_score(y[r][inside], scores[r][inside]))
        assert c["ci_low"] <= c["auroc"] + 1e-9 or c["ci_low"] is None
    for h in out["halves"]:
        r = rows[h["slice"]]
        med = np.median(lengths[r])
        short, long = lengths[r] <= med, lengths[r] > med
        [s] = h["scorers"]
        assert h["median_words"] == med and s["n_short"] == short.sum() and s["n_long"] == long.sum()
        assert s["diff"] == pytest.approx(roc_auc_score(y[r][long], scores[r][long])
                                          - roc_auc_score(y[r][short], scores[r][short]))


def _small_demo(tmp_path, step=5):
    rows = [r for r in load_demo().records() if r.dataset == "attributionbench"][::step]
    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join(json.dumps({**r.__dict__, "construct": "attribution"}) for r in rows))
    return rows, data


def test_window_sensitivity_on_a_tiny_model_counts_truncation_exactly(tmp_path):
    path = tiny_hf.tiny_classifier(tmp_path / "bert3", tiny_hf.NLI3_SHUFFLED, seed=1)
    rows, data = _small_demo(tmp_path)
    out = tmp_path / "out"
    rc = main(["audit", str(data), "--scorers", "lexical,nli-mnli", "--model-path", f"nli-mnli={path}",
               "--slice-by", "source", "--window-sensitivity", "48", "--cache", str(tmp_path / "c.sqlite"),
               "--out", str(out), "--n-boot", "50", "--n-perm", "50", "--quiet"])
    assert rc == 0
    w = json.loads((out / "results.json").read_text())["sensitivity"]["window"]
    assert w["window"] == 48 and [s["scorer"] for s in w["scorers"]] == ["nli-mnli"]
    assert w["scorers"][0]["window"] == 128 and "window=48" in w["scorers"][0]["signature_alt"]
    assert w["skipped"] == [{"scorer": "lexical", "reason": "no token window"}]
    tok = tiny_hf.minilm_tokenizer()
    for r in w["rows"]:
        sl = [x for x in rows if f"{x.dataset}:{x.source}" == r["slice"]]
        n_ev = np.array([len(tok(x.evidence, add_special_tokens=False)["input_ids"]) for x in sl])
        n_cl = np.array([len(tok(x.claim, add_special_tokens=False)["input_ids"]) for x in sl])
        for win, key in ((128, ""), (48, "_alt")):
            room = win - 3 - n_cl  # evidence tokens that fit beside the claim; < 1: the pair fails, nothing is cut
            cut = np.where(room >= 1, np.maximum(n_ev - room, 0), 0)
            assert r[f"pairs_truncated{key}"] == int((cut > 0).sum())
            assert r[f"tokens_truncated{key}"] == int(cut.sum())
            assert r[f"n_failed{key}"] == int((room < 1).sum())
        if r["n_failed"] == r["n_failed_alt"] == 0:
            assert r["diff"] == pytest.approx(r["auroc_alt"] - r["auroc"])
        else:  # the difference is paired: on the rows both windows scored (the narrower window fails a superset)
            assert r["n"] == len(sl) - max(r["n_failed"], r["n_failed_alt"])
    assert sum(r["pairs_truncated_alt"] for r in w["rows"]) > sum(r["pairs_truncated"] for r in w["rows"])
    assert {x["slice"] for x in w["ranking"]} == {r["slice"] for r in w["rows"]}


def test_chunked_variant_beside_its_truncated_scorer(tmp_path, minilm_path):
    demo = load_demo()
    keep = [i for i, r in enumerate(demo.records()) if r.source in ("AttributedQA", "LFQA")][::5]
    table = demo.take(keep)
    opts = {"minilm": {"window": 128}, "minilm-chunk": {"window": 128}}
    res = run_audit(table, AuditConfig(scorers=("lexical", "minilm", "minilm-chunk"), slice_by="source", n_boot=50,
                                       n_perm=50, cache_path=":memory:", scorer_options=opts, quiet=True),
                    log=lambda *_: None).results
    assert res.sensitivity is not None
    ch = to_record(res.sensitivity)["chunking"]  # as results.json holds it
    assert ch["pairs"] == [{"scorer": "minilm", "chunked": "minilm-chunk"}]
    auroc = {(r.scorer, r.slice): r.auroc for r in res.auroc}
    for r in ch["rows"]:
        assert r["auroc"] == auroc[("minilm", r["slice"])] and r["auroc_chunked"] == auroc[("minilm-chunk", r["slice"])]
        assert r["pairs_truncated_chunked"] == 0 and r["diff"] == pytest.approx(r["auroc_chunked"] - r["auroc"])
    assert sum(r["pairs_truncated"] for r in ch["rows"]) > 0
    [v] = ch["verdicts"]
    assert v["construct"] == "attribution" and v["before"]["recommended"] in ("lexical", "minilm")
    assert v["after"]["recommended"] in ("lexical", "minilm-chunk")
    text = format_sensitivity(res.sensitivity)
    assert "Chunked long evidence" in text and "minilm → minilm-chunk" in text


def test_audit_prints_and_reports_the_sensitivity_section(tmp_path, capsys):
    _, data = _small_demo(tmp_path)
    out = tmp_path / "out"
    rc = main(["audit", str(data), "--scorers", "lexical", "--slice-by", "source", "--cache",
               str(tmp_path / "c.sqlite"),
               "--out", str(out), "--n-boot", "50", "--n-perm", "50", "--quiet", "--report", "-v"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert printed.index("== transfer within") < printed.index("== sensitivity")
    assert "Matched length, construct 'attribution'" in printed and "Short vs long halves" in printed
    md = (out / "report.md").read_text()
    assert "## Sensitivity" in md and "AUROC per evidence-length bin" in md and "long − short" in md
    assert (out / "plots" / "length_halves.svg").exists()
    assert "Sensitivity" in (out / "report.html").read_text()
