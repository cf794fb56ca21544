"""Comparisons use the rows every compared scorer scored: failing on hard rows must not win a comparison.

The case from the review: two identical scorers, the second NaN (a judge refusing) on the
hard positives. On its own rows the second looks better; on common rows they are equal.
"""
import json

import numpy as np
import pytest

from attrib_audit.audit import AuditConfig
from attrib_audit.audit.results import write_bootstrap_npz
from attrib_audit.audit.run import slice_statistics
from attrib_audit.audit.select import select_from_results
from attrib_audit.audit.transfer import transfer_section
from attrib_audit.data.records import PairTable
from attrib_audit.files.records import to_record
from attrib_audit.report.console import format_recommendation
from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.stats import auroc, bootstrap_aurocs, paired_auroc_difference
from results_records import BASE


def twins(n=240, seed=0, cluster=3):
    """Scores, labels, multi-row clusters, and a copy of the scores NaN on the hardest third of the positives."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = y + rng.normal(0, 1, n)
    hard = (y == 1) & (s < np.quantile(s[y == 1], 1 / 3))
    t = np.where(hard, np.nan, s)
    return s, t, y, np.arange(n) // cluster, hard


def test_identical_scorers_failing_on_hard_positives_do_not_differ():
    s, t, y, g, hard = twins()
    assert auroc(t[~hard], y[~hard]) - auroc(s, y) > 0.05  # on its own rows the failing twin looks better
    d = paired_auroc_difference(s, t, y, g, n_boot=400, seed=0)
    assert d.ci_low <= 0 <= d.ci_high
    assert d.estimate == 0 and d.ci_low == 0 and d.ci_high == 0  # same scores on the same rows and draws
    assert d.n == int((~hard).sum()) and d.n_groups == np.unique(g[~hard]).size


def test_aligned_replays_the_draws_of_the_own_row_replicates():
    s, t, y, g, hard = twins()
    res = bootstrap_aurocs(np.vstack([s, t, s]), y, g, n_boot=300, rng=7)
    full = res.aligned([0, 2])
    assert full.n == y.size and np.array_equal(full.replicates, res.replicates[[0, 2]])
    al = res.aligned([0, 1])
    assert al.dropped.tolist() == [0, int(hard.sum())] and np.array_equal(al.rows, ~hard)
    # the twin's own rows are the common rows: its aligned replicates are its own-row replicates
    assert np.array_equal(al.replicates[1], res.replicates[1]) and np.array_equal(al.replicates[0], al.replicates[1])
    again = bootstrap_aurocs(t[None, :], y, g, n_boot=300, rng=7)  # same seed, same draws
    assert np.array_equal(again.replicates[0], al.replicates[0])


def _batch(v):
    return ScoreBatch(scores=v, truncated_tokens=np.zeros(v.size), input_tokens=np.zeros(v.size),
                      chunks=np.ones(v.size),
                      failures=["refused" if np.isnan(x) else None for x in v])


def audit_of_twins(datasets=("d1", "d2"), inclusion_probs=None):
    parts = [twins(seed=i) for i in range(len(datasets))]
    s, t, y = (np.concatenate([p[k] for p in parts]) for k in range(3))
    ds = [d for d, p in zip(datasets, parts) for _ in p[2]]
    ids = [f"{d}-{i}" for i, d in enumerate(ds)]
    groups = [f"{d}-{c}" for d, p in zip(datasets, parts) for c in p[3]]
    table = PairTable(ids=ids, datasets=ds, claims=["c"] * y.size, evidences=["e f. g h."] * y.size, labels=y,
                      sources=[None] * y.size, questions=[None] * y.size, groups=groups, constructs=["A"] * y.size,
                      inclusion_probs=None if inclusion_probs is None else inclusion_probs(y.size))
    scores = {"base": _batch(s), "twin": _batch(t)}
    keys = table.slice_keys("dataset")
    st = slice_statistics(table, keys, scores, AuditConfig(scorers=tuple(scores), n_boot=300, seed=1))
    return table, scores, keys, st.slices, to_record(st.auroc), to_record(st.paired), st.boots


def test_audit_pairs_on_common_rows_and_records_what_each_scorer_dropped():
    table, scores, keys, slices, auroc_rows, paired, boots = audit_of_twins()
    for p in paired:
        n_failed = int(np.isnan(scores["twin"].scores[np.asarray(keys) == p["slice"]]).sum())
        assert p["diff"] == 0 and p["ci_low"] <= 0 <= p["ci_high"] and not p["excludes_zero"]
        assert p["n_dropped"] == {"base": 0, "twin": n_failed} and p["n"] == 240 - n_failed
    twin = {r["slice"]: r for r in auroc_rows if r["scorer"] == "twin"}
    base = {r["slice"]: r for r in auroc_rows if r["scorer"] == "base"}
    for sl in twin:  # single-scorer AUROCs keep their own rows and say how many failed
        assert twin[sl]["n_failed"] > 0 and twin[sl]["n"] == 240 - twin[sl]["n_failed"]
        assert twin[sl]["auroc"] > base[sl]["auroc"]


@pytest.mark.parametrize("weighted", [False, True])
def test_transfer_statistics_use_rows_all_metrics_scored(tmp_path, weighted):
    probs = (lambda n: np.random.default_rng(3).uniform(0.2, 1.0, n)) if weighted else None  # a weighted sample
    table, scores, keys, slices, _, _, boots = audit_of_twins(inclusion_probs=probs)
    assert (boots["d1"].boot.weights is not None) == weighted
    key_arr = np.asarray(keys, dtype=object)
    rows = {s.slice: np.flatnonzero(key_arr == s.slice) for s in slices}
    tr = to_record(transfer_section(slices, boots, list(scores), rows, table.labels, table.evidences,
                                    {k: b.scores for k, b in scores.items()}, seed=1, n_perm=200))
    a = tr["constructs"]["A"]
    assert a["status"] == "ok" and a["auroc"]["base"] == a["auroc"]["twin"]
    for d in ("d1", "d2"):
        dropped = int(np.isnan(scores["twin"].scores[rows[d]]).sum())
        assert a["rows"][d] == {"n": 240, "n_used": 240 - dropped, "dropped_by": {"base": 0, "twin": dropped}}
    assert all(p["paired_portable"] and p["portable"] for p in a["portability"])
    assert all(p["sign"] == 0 and p["diff"] == 0 for p in a["paired_best_vs_rest"]) and a["sign_flips"] == []
    assert [f["mean"] for f in a["regret"]["fixed"]] == [0.0, 0.0]

    # select replays the audit's draws on the candidates' common rows: same numbers, no win by failing
    (tmp_path / "results.json").write_text(json.dumps({**BASE, "run_id": "", "slices": to_record(slices)}))
    write_bootstrap_npz(tmp_path / "bootstrap.npz", boots)
    (rec,) = select_from_results(tmp_path)
    assert rec.in_sample_regret == 0 and rec.held_out_regret == 0 and to_record(rec.rows) == a["rows"]
    sel = a["regret"]["selector"]
    assert rec.held_out_regret_ci == pytest.approx((sel["ci_low"], sel["ci_high"]))
    lost = sum(v["dropped_by"]["twin"] for v in a["rows"].values())
    assert f"compared on the rows every candidate scored ({480 - lost} of 480); failures removed twin {lost}" in \
        format_recommendation(rec)


def test_a_metric_whose_failures_leave_one_class_is_left_out_with_the_reason():
    table, scores, keys, *_ = audit_of_twins(("d1", "d2", "d3"))
    on_d2 = np.asarray(keys) == "d2"
    # `other` fails on exactly the d2 positives the twin scored: each alone is defined, together no positive is left
    scored_by_twin = on_d2 & (table.labels == 1) & np.isfinite(scores["twin"].scores)
    scores["other"] = _batch(np.where(scored_by_twin, np.nan, scores["base"].scores))
    st = slice_statistics(table, keys, scores, AuditConfig(scorers=tuple(scores), n_boot=100))
    slices, boots = st.slices, st.boots
    rows = {s.slice: np.flatnonzero(np.asarray(keys) == s.slice) for s in slices}
    tr = to_record(transfer_section(slices, boots, list(scores), rows, table.labels, table.evidences,
                                    {k: b.scores for k, b in scores.items()}, seed=1, n_perm=100))
    a = tr["constructs"]["A"]
    assert a["status"] == "ok" and a["metrics"] == ["base", "twin"]
    assert a["excluded_metrics"] == [{"scorer": "other", "reason": "its failures leave one class on the rows every "
                                                                  "metric scored on d2"}]


def test_select_on_the_target_dataset_compares_candidates_on_the_rows_all_scored():
    from attrib_audit.audit.recommend import on_target

    s, t, y, g, hard = twins()
    rec = on_target("A", "mine", ["base", "twin"], bootstrap_aurocs(np.vstack([s, t]), y, g, n_boot=300, rng=2))
    assert rec.metric == "base" and rec.verdict == "tied-on-target"  # on its own rows the twin would win
    assert to_record(rec.rows) == {"mine": {"n": 240, "n_used": 240 - int(hard.sum()), "dropped_by": {"base": 0,
                                                                                          "twin": int(hard.sum())}}}


def test_select_replays_a_weighted_audit_exactly(tmp_path):
    def run(probs, folder):
        table, scores, keys, *_ = audit_of_twins(inclusion_probs=probs)
        rng = np.random.default_rng(4)
        scores["rough"] = _batch(scores["base"].scores + rng.normal(0, 0.1, len(table)))  # close to base
        st = slice_statistics(table, keys, scores, AuditConfig(scorers=tuple(scores), n_boot=300, seed=1))
        slices, boots = st.slices, st.boots
        rows = {s.slice: np.flatnonzero(np.asarray(keys) == s.slice) for s in slices}
        tr = to_record(transfer_section(slices, boots, list(scores), rows, table.labels, table.evidences,
                                        {k: b.scores for k, b in scores.items()}, seed=1, n_perm=100))
        folder.mkdir()
        (folder / "results.json").write_text(json.dumps({**BASE, "run_id": "", "slices": to_record(slices)}))
        write_bootstrap_npz(folder / "bootstrap.npz", boots)
        (rec,) = select_from_results(folder)
        assert rec.in_sample_regret_ci[1] > 0  # the replicates, hence the weights, matter
        return tr["constructs"]["A"]["regret"], rec

    weighted, rec = run(lambda n: np.random.default_rng(3).uniform(0.1, 1.0, n), tmp_path / "w")
    assert rec.held_out_regret_ci == pytest.approx((weighted["selector"]["ci_low"], weighted["selector"]["ci_high"]))
    fixed = {f["metric"]: f for f in weighted["fixed"]}[rec.metric]
    assert rec.in_sample_regret_ci == pytest.approx((fixed["ci_low"], fixed["ci_high"]))
    plain, _ = run(None, tmp_path / "p")
    assert {f["metric"]: f["ci_high"] for f in plain["fixed"]} != {f["metric"]: f["ci_high"] for f in weighted["fixed"]}
