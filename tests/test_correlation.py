"""Metric–human correlations: every number against scipy/sklearn on the same rows, or an explicit loop."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import LinearRegression
from sklearn.preprocessing import OneHotEncoder

from attrib_audit.stats import correlation as C

SCIPY = {"pearson": lambda a, b: stats.pearsonr(a, b)[0], "spearman": lambda a, b: stats.spearmanr(a, b)[0],
         "kendall": lambda a, b: stats.kendalltau(a, b)[0]}


def _data(seed: int = 0, n_items: int = 12, n_sys: int = 5, ties: bool = True):
    g = np.random.default_rng(seed)
    items = np.repeat(np.arange(n_items), n_sys)
    systems = np.tile(np.arange(n_sys), n_items)
    base = g.normal(size=n_items)[items] + 0.7 * g.normal(size=n_sys)[systems]
    rating = base + g.normal(size=items.size)
    score = base + g.normal(scale=1.2, size=items.size)
    if ties:  # Likert-like ratings and a coarse metric: ties in both
        rating = np.round(rating * 2) / 2
        score = np.round(score, 1)
    return rating, score, items, systems


def _loop(statistic, grouping, x, y, items, systems):
    """The mt-metrics-eval / SummEval / FRANK conventions written out with scipy, one group at a time."""
    f = SCIPY[statistic]
    if grouping == "none":
        return f(x, y)
    if grouping in ("item", "system"):
        key = items if grouping == "item" else systems
        vals = []
        for g in np.unique(key):
            r = key == g
            if np.ptp(x[r]) > 0 and np.ptp(y[r]) > 0:
                vals.append(f(x[r], y[r]))
        return float(np.mean(vals))
    q = OneHotEncoder().fit_transform(systems.reshape(-1, 1))
    rx = x - LinearRegression().fit(q, x).predict(q)
    ry = y - LinearRegression().fit(q, y).predict(q)
    return f(rx, ry)


CASES = [(s, g) for s in C.STATISTICS for g in C.GROUPINGS if not (s == "kendall" and g == "partial")]


@pytest.mark.parametrize(("statistic", "grouping"), CASES)
def test_point_estimates_equal_scipy_and_sklearn(statistic, grouping):
    ties = grouping != "partial"  # residuals of tied values can differ in the last bit between least-squares codes
    y, x, items, systems = _data(1, ties=ties)
    x = x.copy()
    x[[3, 17]] = np.nan  # missing scores are left out and counted
    keep = np.isfinite(x)
    out = C.correlations(y, {"m": x}, items=items, systems=systems, statistic=statistic, grouping=grouping,
                         n_boot=50)
    want = _loop(statistic, grouping, x[keep], y[keep], items[keep], systems[keep])
    assert out[0].estimate == pytest.approx(want, abs=1e-10)
    assert (out[0].n, out[0].n_missing) == (58, 2)
    assert out[0].ci_low <= out[0].estimate <= out[0].ci_high


@pytest.mark.parametrize(("statistic", "grouping"), CASES)
def test_each_resample_equals_the_statistic_of_the_resampled_rows(statistic, grouping):
    """The multiplicity arithmetic reproduces scipy on the materialised resample, duplicated rows and all."""
    ties = grouping != "partial"
    y, x, items, systems = _data(2, n_items=8, n_sys=4, ties=ties)
    d = C._design(y, items, systems)
    g = np.random.default_rng(5)
    counts = np.stack([np.bincount(g.integers(0, 8, 8), minlength=8) for _ in range(6)]).astype(float)
    got = C._replicates(statistic, grouping, x, d, counts)
    for b in range(counts.shape[0]):
        rows = np.concatenate([np.flatnonzero(items == c) for c in range(8) for _ in range(int(counts[b, c]))])
        if grouping == "item":  # an item's correlation is fixed; items average with their multiplicity
            per = {c: _loop(statistic, "none", x[items == c], y[items == c], None, None) for c in range(8)}
            vals = [per[c] for c in range(8) for _ in range(int(counts[b, c])) if np.isfinite(per[c])]
            want = float(np.mean(vals))
        else:
            want = _loop(statistic, grouping, x[rows], y[rows], items[rows], systems[rows])
        assert got[b] == pytest.approx(want, abs=1e-10)


def test_kendall_none_with_clusters_equals_scipy_on_resampled_rows():
    y, x, items, systems = _data(3, n_items=6, n_sys=3)
    d = C._design(y, items, systems)
    counts = np.array([[2.0, 0, 1, 1, 0, 2], [1, 1, 1, 1, 1, 1], [0, 0, 0, 6, 0, 0]])
    got = C._replicates("kendall", "none", x, d, counts)
    for b in range(2):
        rows = np.concatenate([np.flatnonzero(items == c) for c in range(6) for _ in range(int(counts[b, c]))])
        assert got[b] == pytest.approx(stats.kendalltau(x[rows], y[rows])[0], abs=1e-12)


def test_williams_matches_steiger_formula_written_out():
    # Steiger (1980), eq. 7, as Graham & Baldwin (2014) apply it to MT metrics: written independently here.
    def steiger(r12, r13, r23, n):
        det_r = 1 - r12 * r12 - r13 * r13 - r23 * r23 + 2 * r12 * r13 * r23
        rbar = 0.5 * (r12 + r13)
        t = (r12 - r13) * np.sqrt(((n - 1) * (1 + r23))
                                  / (2 * ((n - 1) / (n - 3)) * det_r + rbar ** 2 * (1 - r23) ** 3))
        return t, stats.t.sf(t, n - 3)

    for args in [(0.6, 0.4, 0.5, 100), (0.31, 0.3, 0.9, 1600), (0.8, -0.1, 0.2, 20)]:
        t, p = C.williams_test(*args)
        wt, wp = steiger(*args)
        assert t == pytest.approx(wt, rel=1e-12)
        assert p == pytest.approx(wp, rel=1e-9)
    with pytest.raises(ValueError, match="more than 3"):
        C.williams_test(0.5, 0.4, 0.3, 3)


def test_compare_correlations_detects_a_real_difference_and_not_a_null_one():
    g = np.random.default_rng(0)
    n = 120
    y = g.normal(size=n)
    good = y + g.normal(scale=0.6, size=n)
    bad = y + g.normal(scale=3.0, size=n)
    items = np.arange(n)
    d = C.compare_correlations(y, good, bad, items=items, names=("good", "bad"), n_boot=300, n_perm=300)
    assert d.difference > 0 and d.ci_low > 0 and d.permutation_p < 0.01 and d.williams_p < 0.01
    twin = good + g.normal(scale=1e-3, size=n)
    d0 = C.compare_correlations(y, good, twin, items=items, n_boot=300, n_perm=300)
    assert d0.ci_low < 0 < d0.ci_high and d0.permutation_p > 0.05


def test_paired_differences_are_on_common_rows_only():
    y, x, items, systems = _data(4)
    x2 = x + 0.3
    x2[:5] = np.nan
    d = C.compare_correlations(y, x, x2, items=items, systems=systems, n_boot=50, n_perm=20)
    assert d.n == x.size - 5
    assert d.difference == pytest.approx(0.0, abs=1e-12)  # a shifted copy correlates identically on common rows


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(ValueError, match="statistic must be one of"):
        C.correlations([1, 2, 3], {"m": [1, 2, 3]}, items=[0, 1, 2], statistic="tau")
    with pytest.raises(ValueError, match="pearson and spearman only"):
        C.correlations([1, 2, 3], {"m": [1, 2, 3]}, items=[0, 1, 2], systems=[0, 0, 1], statistic="kendall",
                       grouping="partial")
    with pytest.raises(ValueError, match="needs the system"):
        C.correlations([1, 2, 3], {"m": [1, 2, 3]}, items=[0, 1, 2], grouping="system")
    with pytest.raises(ValueError, match="finite"):
        C.correlations([1, np.nan, 3], {"m": [1, 2, 3]}, items=[0, 1, 2])


def test_clustered_bootstrap_covers_the_true_correlation():
    """Items shared across systems make rows dependent; resampling items keeps 95% intervals near 95%."""
    reps, n_items, n_sys = 200, 30, 6
    a, b = 1.0, 1.0  # rating = a·u + e, score = b·u + e', u shared by an item's outputs
    true = a * b / np.sqrt((a * a + 1) * (b * b + 1))
    g = np.random.default_rng(11)
    items = np.repeat(np.arange(n_items), n_sys)
    hits = 0
    for r in range(reps):
        u = g.normal(size=n_items)[items] * np.sqrt(1.0)
        y = a * u + g.normal(size=items.size)
        x = b * u + g.normal(size=items.size)
        c = C.correlations(y, {"m": x}, items=items, n_boot=300, rng=r)[0]
        hits += c.ci_low <= true <= c.ci_high
    coverage = hits / reps
    se = np.sqrt(0.95 * 0.05 / reps)
    assert coverage >= 0.95 - 2.5 * se, coverage


def test_docstring_examples_run():
    import doctest

    assert doctest.testmod(C, raise_on_error=False).failed == 0


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("statistic", ["pearson", "spearman"])
def test_shared_fast_path_equals_the_per_metric_replicates(statistic, missing):
    """Over all rows the metrics share moment sums (Pearson) or the rating's ranks (Spearman): same numbers.

    Tied and untied scores take different branches; a metric with missing scores uses its own rows.
    """
    y, x, items, systems = _data(6)
    x2 = 1e6 + 1e-3 * (x + np.random.default_rng(1).normal(size=x.size))  # a large mean loses no digits
    if missing:
        x = x.copy()
        x[[0, 1, 2, 3, 4, 40]] = np.nan  # item 0 loses all its rows for this metric
    res = C.correlation_bootstrap(y, {"a": x, "b": x2}, items=items, statistic=statistic, n_boot=40, rng=3)
    d = C._design(y, items, None)
    blocks = list(C.cluster_count_blocks(d.n_items, 40, np.random.default_rng(3), width=y.size))
    per = []
    for v in (x, x2):
        keep = np.isfinite(v)
        per.append(np.concatenate([C._replicates(statistic, "none", v[keep], C._subset(d, keep), c) for c in blocks]))
    np.testing.assert_allclose(res.replicates, np.vstack(per), rtol=0, atol=1e-9)


def test_fast_spearman_equals_scipy_on_large_resamples():
    """Thousands of rows, heavy duplication: the integer cumulative weights stay exact."""
    g = np.random.default_rng(8)
    n_items, n_sys = 400, 8
    items = np.repeat(np.arange(n_items), n_sys)
    y = np.round(g.normal(size=items.size) * 2) / 2
    xs = {"untied": g.normal(size=items.size), "tied": np.round(g.normal(size=items.size), 1)}
    res = C.correlation_bootstrap(y, xs, items=items, statistic="spearman", n_boot=5, rng=2)
    counts = next(iter(C.cluster_count_blocks(n_items, 5, np.random.default_rng(2), width=items.size)))
    codes = C._design(y, items, None).items  # item codes as the bootstrap numbers them
    for b in range(5):
        rows = np.concatenate([np.flatnonzero(codes == c) for c in range(n_items) for _ in range(int(counts[b, c]))])
        for j, v in enumerate(xs.values()):
            assert res.replicates[j, b] == pytest.approx(stats.spearmanr(v[rows], y[rows])[0], abs=1e-12)


@pytest.mark.parametrize(("statistic", "grouping"), CASES)
def test_permutation_test_equals_a_loop_over_the_same_swaps(statistic, grouping):
    """All permutations of a block at once give the p a scipy loop over the same row swaps gives."""
    y, x, items, systems = _data(7, n_items=8, n_sys=4, ties=grouping != "partial")
    x2 = np.round(x + np.random.default_rng(2).normal(scale=1.0, size=x.size), 1)
    d = C._design(y, items, systems)
    za, zb = C._standardise(x), C._standardise(x2)
    n_perm = 60
    got = C._permutation_p(statistic, grouping, za, zb, d, n_perm, np.random.default_rng(4))
    flips = np.random.default_rng(4).random((n_perm, x.size)) < 0.5

    def stat(v):
        return _loop(statistic, grouping, v, y, items, systems)

    delta = abs(stat(za) - stat(zb))
    hits = sum(abs(stat(np.where(f, zb, za)) - stat(np.where(f, za, zb))) >= delta - 1e-12 for f in flips)
    assert got == pytest.approx((1 + hits) / (1 + n_perm), abs=1e-12)


def test_batch_statistics_equal_scipy_row_by_row():
    for statistic, grouping in CASES:
        y, x, items, systems = _data(9, ties=grouping != "partial")  # sklearn's residuals break ties in the last bit
        d = C._design(y, items, systems)
        rows = np.vstack([x, -x, np.round(x, 0 if grouping != "partial" else 6), np.arange(x.size, dtype=float)])
        got = C._batch_statistic(statistic, grouping, rows, d)
        want = [_loop(statistic, grouping, r, y, items, systems) for r in rows]
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"{statistic}/{grouping}")


def _steiger_t(r12, r13, r23, n):
    """Steiger (1980), eq. 7 (Williams' T2), written out independently of the package."""
    det_r = 1 - r12 * r12 - r13 * r13 - r23 * r23 + 2 * r12 * r13 * r23
    rbar = 0.5 * (r12 + r13)
    t = (r12 - r13) * np.sqrt(((n - 1) * (1 + r23)) / (2 * ((n - 1) / (n - 3)) * det_r + rbar ** 2 * (1 - r23) ** 3))
    return t, stats.t.sf(t, n - 3)


@pytest.mark.parametrize("grouping", ["none", "partial"])
def test_williams_on_spearman_is_steiger_on_the_spearman_correlations(grouping):
    y, x, items, systems = _data(10, n_items=30, n_sys=5, ties=grouping == "none")
    x2 = x + np.random.default_rng(3).normal(scale=1.5, size=x.size)
    d = C.compare_correlations(y, x, x2, items=items, systems=systems, statistic="spearman", grouping=grouping,
                               n_boot=20, n_perm=20)
    if grouping == "partial":
        q = OneHotEncoder().fit_transform(systems.reshape(-1, 1))
        yy, aa, bb = (v - LinearRegression().fit(q, v).predict(q) for v in (y, x, x2))
    else:
        yy, aa, bb = y, x, x2
    r12, r13, r23 = stats.spearmanr(yy, aa)[0], stats.spearmanr(yy, bb)[0], stats.spearmanr(aa, bb)[0]
    hi, lo = max(r12, r13), min(r12, r13)
    t, p = _steiger_t(hi, lo, r23, x.size)
    assert d.williams_t == pytest.approx(t, rel=1e-9)
    assert d.williams_p == pytest.approx(p, rel=1e-7)
    assert np.isnan(C.compare_correlations(y, x, x2, items=items, systems=systems, statistic="kendall",
                                           n_boot=20, n_perm=20).williams_p)


def test_compare_all_shares_draws_and_equals_each_pair_alone():
    y, x, items, systems = _data(11)
    g = np.random.default_rng(12)
    scores = {"a": x, "b": x + g.normal(size=x.size), "c": np.where(g.random(x.size) < 0.1, np.nan, -x)}
    for statistic, grouping in [("spearman", "none"), ("kendall", "system"), ("pearson", "partial")]:
        allp = C.compare_all(y, scores, items=items, systems=systems, statistic=statistic, grouping=grouping,
                             n_boot=60, n_perm=40, rng=5)
        assert [(d.metric_a, d.metric_b) for d in allp] == [("a", "b"), ("a", "c"), ("b", "c")]
        for d in allp:
            one = C.compare_correlations(y, scores[d.metric_a], scores[d.metric_b], items=items, systems=systems,
                                         names=(d.metric_a, d.metric_b), statistic=statistic, grouping=grouping,
                                         n_boot=60, n_perm=40, rng=5)
            assert repr(one) == repr(d)  # NaN fields (Williams for Kendall) compare equal as text
        assert allp[1].n == int(np.isfinite(scores["c"]).sum())


def test_permutation_test_holds_its_level_under_the_null():
    """Two exchangeable metrics: the paired permutation test rejects at 5% about 5% of the time."""
    reps = 200
    g = np.random.default_rng(13)
    rejected = 0
    for _ in range(reps):
        y = g.normal(size=40)
        a, b = y + g.normal(size=40), y + g.normal(size=40)
        p = C._permutation_p("spearman", "none", C._standardise(a), C._standardise(b),
                             C._design(y, np.arange(40), None), 199, g)
        rejected += p <= 0.05
    se = np.sqrt(0.05 * 0.95 / reps)
    assert rejected / reps <= 0.05 + 2.5 * se, rejected / reps


def test_section_lists_the_cells_kendall_cannot_compute(monkeypatch):
    from attrib_audit.audit.correlations import slice_correlations

    y, x, items, systems = _data(14)
    monkeypatch.setattr(C, "KENDALL_MAX_ROWS", 30)  # as if the slice were too large for τ-b over all rows
    sc = slice_correlations("s", y, {"a": x, "b": -x}, [str(i) for i in items], [str(s) for s in systems],
                            n_boot=20, level=0.95, seed=0, n_perm=10)
    assert len(sc.skipped) == 1 and sc.skipped[0].startswith("kendall all rows: Kendall τ-b's bootstrap is quadratic")
    cells = {(c.statistic, c.grouping) for c in sc.correlations}
    assert ("kendall", "none") not in cells and ("kendall", "system") in cells
    assert {(d.statistic, d.grouping) for d in sc.differences} == cells  # every reported cell is compared
