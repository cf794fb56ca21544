"""The better-than-chance test: known answers for Holm and the Wald p-value, and its error rate by simulation."""
from __future__ import annotations

import numpy as np
from scipy import stats

from attrib_audit.stats.bootstrap import bootstrap_aurocs
from attrib_audit.stats.chance import chance_pvalues, holm


def test_holm_matches_a_loop() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        p = rng.uniform(0, 0.2, size=int(rng.integers(1, 8)))
        order = np.argsort(p)
        m = p.size
        want = np.empty(m)
        running = 0.0
        for k, i in enumerate(order):
            running = max(running, min(1.0, (m - k) * p[i]))
            want[i] = running
        np.testing.assert_allclose(holm(p), want)
    out = holm(np.array([0.01, np.nan, 0.04]))
    assert np.isnan(out[1]) and np.allclose(out[[0, 2]], [0.02, 0.04])


def test_wald_p_is_the_normal_tail_of_the_bootstrap_z() -> None:
    rng = np.random.default_rng(0)
    reps = rng.normal(0.6, 0.05, size=(2, 400))
    reps[1, :10] = np.nan
    p = chance_pvalues(np.array([0.6, 0.45]), reps)
    se = [np.std(reps[0], ddof=1), np.nanstd(reps[1], ddof=1)]
    np.testing.assert_allclose(p, [stats.norm.sf(0.1 / se[0]), stats.norm.sf(-0.05 / se[1])])
    assert np.isnan(chance_pvalues(np.array([np.nan]), reps[:1])).all()


def test_null_metrics_beat_chance_at_the_nominal_rate_and_real_ones_do() -> None:
    """200 metrics of pure noise on 120 clustered pairs: the one-sided test at α = 0.025 rejects ~2.5% of them;
    a metric with a real signal (AUROC ≈ 0.75) is flagged nearly always."""
    rng = np.random.default_rng(11)
    n, k = 120, 200
    groups = np.repeat(np.arange(60), 2)
    y = rng.integers(0, 2, size=n)
    noise = rng.normal(size=(k, n)) + rng.normal(size=(k, 60))[:, groups]  # cluster effect shared by a group
    boot = bootstrap_aurocs(noise, y, groups, n_boot=400, rng=1)
    rate = float((chance_pvalues(boot.point, boot.replicates) < 0.025).mean())
    assert rate <= 0.06, rate
    signal = rng.normal(size=(50, n)) + 1.0 * y
    boot = bootstrap_aurocs(signal, y, groups, n_boot=400, rng=2)
    assert (chance_pvalues(boot.point, boot.replicates) < 0.025).mean() >= 0.95
