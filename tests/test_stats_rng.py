"""One seed coercion and one memory budget for `stats`: `as_generator` continues a generator's stream and
seeds an integer as numpy does; the blockwise loops give the same numbers whatever the budget (blocks only
bound memory: the same draws, sums equal to rounding), checked by shrinking `MAX_CELLS` until every loop runs in
many blocks."""
from __future__ import annotations

import numpy as np
import pytest

import attrib_audit.stats.rng as stats_rng
from attrib_audit.stats.bootstrap import bootstrap_aurocs
from attrib_audit.stats.rng import as_generator, block_rows
from attrib_audit.stats.sensitivity import exchangeability_test
from attrib_audit.stats.systems import agreement_replicates, summarise_systems, system_bootstrap
from attrib_audit.stats.threshold import Target, certify
from attrib_audit.stats.types import LabelledScores


def test_as_generator_seeds_an_int_as_numpy_does_and_continues_a_generator():
    assert as_generator(5).random(4).tolist() == np.random.default_rng(5).random(4).tolist()
    g = np.random.default_rng(1)
    first = as_generator(g).random(3)
    second = as_generator(g).random(3)
    ref = np.random.default_rng(1).random(6)
    assert first.tolist() == ref[:3].tolist() and second.tolist() == ref[3:].tolist()


def test_block_rows_divides_the_budget_and_never_returns_zero(monkeypatch):
    assert block_rows(1) == stats_rng.MAX_CELLS and block_rows(stats_rng.MAX_CELLS * 3) == 1
    monkeypatch.setattr(stats_rng, "MAX_CELLS", 100)
    assert [block_rows(c) for c in (0, 1, 7, 100, 101)] == [100, 100, 14, 1, 1]


def _every_blockwise_statistic() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    n, k = 240, 60
    g = np.arange(n) // (n // k)
    y = (rng.random(n) < 0.5).astype(np.int64)
    s = np.vstack([y + rng.normal(0, 1, n), 0.5 * y + rng.normal(0, 1, n)])
    out = [bootstrap_aurocs(s, y, g, n_boot=40, rng=3).replicates]
    ds = np.arange(k) % 3
    ex = exchangeability_test(s, y, g, ds, 30, np.random.default_rng(4))
    out.append(np.array([ex.p_interaction, ex.p_dataset, ex.null_mean_interaction, ex.n_perm_dropped]))
    systems = np.array([f"s{i % 4}" for i in range(n)])
    inputs = np.arange(n) // 4
    res = system_bootstrap(y, {"a": s[0], "b": s[1]}, systems, inputs, n_boot=30, rng=5, min_shared=10)
    out.append(res.replicates)
    agr = agreement_replicates(res)
    out.extend(np.asarray(v) for v in agr.replicates.values())
    agreement = summarise_systems(res).agreement
    out.append(np.array([[e.estimate, e.ci_low, e.ci_high] for r in agreement for e in (r.tau, r.pearson)]))
    cert = certify(LabelledScores(s[0], y, g), Target("false_pass", 0.2))
    out.extend([cert.scan.risk, cert.scan.n_effective, cert.scan.p_values])
    return out


def test_results_do_not_depend_on_the_memory_budget(monkeypatch):
    default = _every_blockwise_statistic()
    monkeypatch.setattr(stats_rng, "MAX_CELLS", 64)  # every loop in many blocks of one or a few rows
    small = _every_blockwise_statistic()
    assert len(default) == len(small)
    for a, b in zip(default, small, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)  # same draws; products of other shapes round apart


@pytest.mark.parametrize("cells", [1, 2])
def test_a_single_row_wider_than_the_budget_still_runs(monkeypatch, cells):
    monkeypatch.setattr(stats_rng, "MAX_CELLS", cells)
    assert block_rows(10) == 1
