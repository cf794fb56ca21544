import json

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from attrib_audit.audit import AuditConfig
from attrib_audit.audit.run import slice_statistics
from attrib_audit.audit.select import select_from_results
from attrib_audit.audit.transfer import TransferSection, transfer_section
from attrib_audit.cli import main
from attrib_audit.data.demo import demo_paths
from attrib_audit.data.records import PairTable
from attrib_audit.errors import UsageError
from attrib_audit.files.records import from_record, to_record
from attrib_audit.report.console import format_transfer
from attrib_audit.scorers.base import ScoreBatch

DATASETS = {"d1": "A", "d2": "A", "d3": "A", "e1": "B", "e2": "B", "solo": "C", "u": None}


def synthetic(n=40, seed=0):
    """Per dataset n pairs; metric `good` tracks the label everywhere, `flip` only on d1/e1 (inverted elsewhere)."""
    rng = np.random.default_rng(seed)
    rows, ds_col, cons, ev = [], [], [], []
    for ds, c in DATASETS.items():
        for i in range(n):
            rows.append(i % 2)
            ds_col.append(ds)
            cons.append(c)
            ev.append("One two three. Four five." if ds == "d1" else "Alpha beta. Gamma delta. Epsilon zeta eta.")
    y = np.array(rows)
    sign = np.where(np.isin(ds_col, ["d1", "e1"]), 1.0, -1.0)
    scores = {"good": y + rng.normal(0, 0.8, y.size), "flip": sign * y + rng.normal(0, 0.3, y.size),
              "noise": rng.normal(0, 1, y.size)}
    ids = [f"{d}-{i}" for i, d in enumerate(ds_col)]
    table = PairTable(ids=ids, datasets=ds_col, claims=["c"] * y.size, evidences=ev, labels=y,
                      sources=[None] * y.size, questions=[None] * y.size, groups=ids, constructs=cons)
    return table, {k: ScoreBatch.plain(v) for k, v in scores.items()}


def run_transfer(table, scores, n_perm=500):
    config = AuditConfig(scorers=tuple(scores), n_boot=200, seed=3)
    keys = table.slice_keys("dataset")
    st = slice_statistics(table, keys, scores, config)
    slices, boots = st.slices, st.boots
    key_arr = np.asarray(keys, dtype=object)
    rows = {s.slice: np.flatnonzero(key_arr == s.slice) for s in slices}
    tr = transfer_section(slices, boots, list(scores), rows, table.labels.astype(np.int64), table.evidences,
                          {k: b.scores for k, b in scores.items()}, seed=3, n_perm=n_perm)
    return to_record(tr), rows


def test_constructs_are_never_pooled_and_undeclared_slices_are_excluded():
    table, scores = synthetic()
    tr, rows = run_transfer(table, scores)
    json.dumps(tr, allow_nan=False)
    assert set(tr["constructs"]) == {"A", "B", "C"}
    assert tr["constructs"]["A"]["datasets"] == ["d1", "d2", "d3"] and tr["constructs"]["B"]["datasets"] == ["e1", "e2"]
    assert tr["constructs"]["C"]["status"] == "insufficient" and "one dataset" in tr["constructs"]["C"]["reason"]
    assert [(x["slice"], x["construct"]) for x in tr["excluded_slices"]] == [("u", "unspecified")]
    assert "construct not declared" in tr["excluded_slices"][0]["reason"]
    a = tr["constructs"]["A"]
    assert a["status"] == "ok" and set(a["auroc"]["good"]) == {"d1", "d2", "d3"}
    assert {r["dataset"] for r in a["balanced_accuracy"]} == {"d1", "d2", "d3"}
    for r in a["balanced_accuracy"]:
        assert r["dataset"] not in r["threshold_from"] and set(r["threshold_from"]) < {"d1", "d2", "d3"}
    # flip is best on d1 and worst elsewhere: the d1 ranking inverts against d2
    i, j = a["kendall_tau"]["datasets"].index("d1"), a["kendall_tau"]["datasets"].index("d2")
    k = a["kendall_tau"]["datasets"].index("d3")
    assert a["kendall_tau"]["tau"][i][j] < 0 and a["kendall_tau"]["tau"][j][k] == 1
    flips = {frozenset((f["metric_a"], f["metric_b"])): f for f in a["sign_flips"]}
    assert set(flips[frozenset(("flip", "noise"))]["a_better_on"]) == {"d1"}
    text = format_transfer(from_record(TransferSection, tr), list(scores))
    assert "excluded from transfer: u" in text and "construct 'C'" in text and "not computed" in text


def test_companions_match_sklearn_and_count_lengths():
    table, scores = synthetic()
    tr, rows = run_transfer(table, scores)
    comp = {c["slice"]: c for c in tr["slices"]}
    y = table.labels[rows["d2"]]
    assert comp["d2"]["auprc"]["good"]["auprc"] == pytest.approx(
        average_precision_score(y, scores["good"].scores[rows["d2"]]))
    assert comp["d1"]["evidence_length"] == {"words_mean": 5.0, "words_median": 5.0, "sentences_mean": 2.0,
                                             "sentences_median": 2.0}
    assert comp["d2"]["evidence_length"]["sentences_mean"] == 3.0 and comp["u"]["prevalence"] == 0.5


def test_a_metric_undefined_on_one_dataset_is_left_out_with_the_reason():
    table, scores = synthetic()
    s = scores["noise"].scores.copy()
    d2 = np.asarray(table.datasets) == "d2"
    s[d2] = np.nan
    scores["noise"] = ScoreBatch(scores=s, truncated_tokens=np.zeros(s.size), input_tokens=np.zeros(s.size),
                                 chunks=np.ones(s.size),
                                 failures=["timeout" if f else None for f in d2])
    tr, _ = run_transfer(table, scores)
    a = tr["constructs"]["A"]
    assert a["metrics"] == ["good", "flip"]
    assert a["excluded_metrics"] == [{"scorer": "noise", "reason": "AUROC undefined on d2"}]
    assert tr["constructs"]["B"]["metrics"] == ["good", "flip", "noise"]


def test_transfer_section_is_seeded():
    table, scores = synthetic()
    assert run_transfer(table, scores)[0] == run_transfer(table, scores)[0]


def test_audit_and_select_on_the_attributionbench_sample(tmp_path, capsys):
    sample = next(p for p in demo_paths() if p.name == "attributionbench_id.jsonl")
    out = tmp_path / "out"
    rc = main(["audit", str(sample), "--construct", "attribution", "--slice-by", "source", "--out", str(out),
               "--scorers", "lexical,minilm", "--n-boot", "200", "--n-perm", "2000", "--quiet", "-v",
               "--cache", str(tmp_path / "c.sqlite")])
    assert rc == 0
    printed = capsys.readouterr().out
    for text in ("Portability", "Kendall τ-b", "Kendall's W", "naive best-on-average selector",
                 "Two-way decomposition", "OTHER datasets", "AUPRC per slice"):
        assert text in printed
    res = json.loads((out / "results.json").read_text())
    c = res["transfer"]["constructs"]["attribution"]
    assert c["status"] == "ok" and len(c["datasets"]) == 4 and c["kendall_w"]["n_perm"] == 2000
    assert (out / "bootstrap.npz").exists()
    recs = select_from_results(out)
    assert len(recs) == 1 and recs[0].metric == c["regret"]["lowest_regret_metric"]
    assert recs[0].held_out_regret == pytest.approx(c["regret"]["selector"]["mean"])
    sel = c["regret"]["selector"]
    assert recs[0].held_out_regret_ci == pytest.approx((sel["ci_low"], sel["ci_high"]))
    assert main(["select", "--results", str(out)]) == 0
    text = capsys.readouterr().out
    assert "recommended for a new dataset" in text and "caveat" in text and "leave-one-dataset-out" in text
    assert main(["select", "--results", str(out), "--scorers", "lexical", "--json"]) == 0
    only = json.loads(capsys.readouterr().out)
    assert only[0]["metric"] is None and "fewer than two candidate" in only[0]["caveat"]
    assert main(["select", "--results", str(out), "--construct", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attrib-audit select: construct 'nope'") and err.count("\n") == 1
    assert main(["select", "--results", str(tmp_path / "missing")]) == 2
    assert "missing is not a folder (no such folder)" in capsys.readouterr().err
    with pytest.raises(UsageError, match="scorer.s. bogus not in this audit"):  # a library call raises, never exits
        select_from_results(out, scorers=["bogus"])


def test_evidence_counts_per_row_equal_counting_each_row():
    """Counted once per distinct evidence, then spread back: every row gets its own evidence's counts."""
    from attrib_audit.audit.transfer import evidence_counts, evidence_words
    from attrib_audit.text.sentences import split_sentences
    from attrib_audit.text.tokenize import tokens

    evidences = ["Dr. Smith came. He left.", "one two", "Dr. Smith came. He left.", "A. B. See\n\nnew", "one two"]
    words, sents = evidence_counts(evidences)
    assert words.tolist() == [len(tokens(e)) for e in evidences] == [5, 2, 5, 4, 2]
    assert sents.tolist() == [len(split_sentences(e)) for e in evidences] == [2, 1, 2, 2, 1]
    assert evidence_words(evidences).tolist() == words.tolist()
    assert [a.size for a in evidence_counts([])] == [0, 0]
