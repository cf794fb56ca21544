import numpy as np
import pytest

from attrib_audit.stats.transfer import (
    AurocMatrix,
    decompose,
    eps_regret_sweep,
    lodo_regret,
    paired_best_vs_rest,
    portability,
    sign_flips,
)

METRICS = ("a", "b", "c", "d")
DATASETS = ("W", "X", "Y")


def matrix(point, noise=0.01, b=400, seed=0):
    """Replicates: the point plus noise shared by all metrics of a dataset (paired) plus a little of its own."""
    rng = np.random.default_rng(seed)
    point = np.asarray(point, dtype=float)
    m, d = point.shape
    shared = rng.normal(0, noise, (1, d, b))
    own = rng.normal(0, noise / 4, (m, d, b))
    return AurocMatrix(METRICS[:m], DATASETS[:d], point, point[:, :, None] + shared + own)


def main_effects(metric=(0.0, -0.05, -0.1, -0.2), dataset=(0.85, 0.7, 0.6)):
    return np.add.outer(np.asarray(metric), np.asarray(dataset))


def test_pure_main_effects_have_no_interaction_and_no_sign_flip():
    mat = matrix(main_effects())
    dc = decompose(mat, 2000, rng=0)
    assert dc.share_interaction == pytest.approx(0.0, abs=1e-12)
    assert dc.share_dataset + dc.share_metric == pytest.approx(1.0)
    assert dc.p_interaction == 1.0  # every relabelling has interaction SS ≥ 0
    assert sign_flips(mat) == []
    reg = lodo_regret(mat)
    assert reg.lowest_regret_metric == "a" and reg.fixed[0].mean == 0.0
    assert set(reg.selector.picks.values()) == {"a"} and reg.selector.mean == 0.0
    assert eps_regret_sweep(mat, [0.0, 0.05])[0]["metrics"] == ["a"]
    assert eps_regret_sweep(mat, [0.0, 0.05])[1]["metrics"] == ["a", "b"]


def test_pure_dataset_effect_gives_zero_interaction_share():
    mat = matrix(main_effects(metric=(0, 0, 0, 0)))
    dc = decompose(mat, 500, rng=0)
    assert dc.share_dataset == pytest.approx(1.0) and dc.share_interaction == pytest.approx(0.0, abs=1e-12)
    assert sign_flips(mat) == []


def test_decomposition_reconstructs_the_matrix_and_is_seeded():
    rng = np.random.default_rng(1)
    mat = matrix(rng.uniform(0.5, 0.9, (4, 3)))
    dc = decompose(mat, 3000, rng=5)
    rebuilt = (dc.grand_mean + np.array(list(dc.metric_effect.values()))[:, None]
               + np.array(list(dc.dataset_effect.values()))[None, :] + np.array(dc.residual))
    np.testing.assert_allclose(rebuilt, mat.point)
    assert dc.share_dataset + dc.share_metric + dc.share_interaction == pytest.approx(1.0)
    assert decompose(mat, 3000, rng=5) == dc


def test_crossover_is_flagged_as_interaction_and_sign_flip():
    point = np.array([[0.9, 0.55, 0.9], [0.55, 0.9, 0.55], [0.7, 0.7, 0.7], [0.6, 0.6, 0.6]])
    mat = matrix(point, noise=0.01)
    flips = sign_flips(mat)
    ab = [f for f in flips if (f.metric_a, f.metric_b) == ("a", "b")]
    assert ab and set(ab[0].a_better_on) == {"W", "Y"} and set(ab[0].b_better_on) == {"X"}
    assert decompose(mat, 2000, rng=0).share_interaction > 0.5
    port = {p.metric: p for p in portability(mat)}
    assert not port["a"].portable and port["a"].breaks_on == ("X",)
    assert not port["a"].paired_portable and port["a"].paired_breaks_on == ("X",)
    # the naive selector learns "a" from W+Y... then loses 0.35 on X
    reg = lodo_regret(mat)
    assert reg.selector.picks["X"] == "a" and reg.selector.per_dataset["X"] == pytest.approx(0.35)


def test_best_everywhere_is_portable_and_noisy_near_tie_is_too():
    point = np.array([[0.9, 0.8, 0.7], [0.895, 0.79, 0.69], [0.6, 0.5, 0.5], [0.5, 0.5, 0.5]])
    port = {p.metric: p for p in portability(matrix(point, noise=0.03))}
    assert port["a"].portable and port["a"].paired_portable and port["a"].breaks_on == ()
    assert port["b"].portable  # within the CI of the best on every dataset
    assert not port["d"].portable and set(port["d"].breaks_on) == set(DATASETS)


def test_lodo_regret_matches_a_plain_loop_over_replicates():
    rng = np.random.default_rng(2)
    mat = matrix(rng.uniform(0.5, 0.9, (4, 3)), noise=0.05, b=300, seed=3)
    reg = lodo_regret(mat)
    m, d, B = mat.replicates.shape
    fixed_b = np.empty((m, B))
    sel_b = np.empty(B)
    for b in range(B):
        a = mat.replicates[:, :, b]
        r = a.max(axis=0) - a
        fixed_b[:, b] = r.mean(axis=1)
        realised = []
        for j in range(d):
            others = [k for k in range(d) if k != j]
            pick = int(np.argmax(a[:, others].mean(axis=1)))
            realised.append(a[:, j].max() - a[pick, j])
        sel_b[b] = np.mean(realised)
    for i, f in enumerate(reg.fixed):
        assert (f.ci_low, f.ci_high) == pytest.approx(tuple(np.quantile(fixed_b[i], [0.025, 0.975])))
    assert (reg.selector.ci_low, reg.selector.ci_high) == pytest.approx(tuple(np.quantile(sel_b, [0.025, 0.975])))
    best = ["a", "b", "c", "d"].index(reg.lowest_regret_metric)
    assert reg.selector.minus_best_fixed_ci == pytest.approx(tuple(np.quantile(sel_b - fixed_b[best], [0.025, 0.975])))


def test_replicates_that_lost_a_class_are_dropped_and_counted():
    mat = matrix(main_effects(), b=100)
    reps = mat.replicates.copy()
    reps[1, 2, :7] = np.nan
    reg = lodo_regret(AurocMatrix(mat.metrics, mat.datasets, mat.point, reps))
    assert reg.n_boot_dropped == 7 and np.isfinite(reg.selector.ci_high)


def test_paired_best_vs_rest_signs():
    point = np.array([[0.9, 0.7, 0.8], [0.6, 0.699, 0.7], [0.8, 0.5, 0.5], [0.89, 0.5, 0.5]])
    rows = paired_best_vs_rest(matrix(point, noise=0.01))
    by = {(r.dataset, r.metric_b): r for r in rows}
    assert by[("W", "b")].sign == 1 and by[("W", "b")].diff == pytest.approx(0.3)
    assert by[("X", "b")].metric_a == "a" and by[("X", "b")].sign == 0  # 0.001 apart: CI holds 0
    assert len(rows) == 3 * 3


def test_matrix_validation():
    with pytest.raises(ValueError, match="finite"):
        AurocMatrix(("a",), ("W",), np.array([[np.nan]]), np.zeros((1, 1, 5)))
    with pytest.raises(ValueError, match="different bootstrap sizes"):
        AurocMatrix.from_columns(["a"], ["W", "X"], [np.array([0.5]), np.array([0.6])],
                                 [np.zeros((1, 5)), np.zeros((1, 6))])
    with pytest.raises(ValueError, match="two datasets"):
        lodo_regret(matrix(np.array([[0.5], [0.6]])))
