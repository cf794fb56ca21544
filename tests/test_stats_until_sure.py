"""Confidence sequences, stop rules and the label-until-sure walk: formulas against closed forms, and small
simulations of the wrong-decision rate under optional stopping (the 1,000-session versions are in bench/)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import lambertw, ndtr, ndtri

from attrib_audit.stats.confseq import PairInterval, best_rho2, decide, margin, wor_interval
from attrib_audit.stats.until_sure import Session, Settings, fixed_sample_size, proposal_probs, run_oracle
from attrib_audit.stats.until_sure_sim import SCENARIOS, binormal_pool, simulate_session


def test_margin_is_the_normal_mixture_formula_and_rho_its_minimiser() -> None:
    t, rho2, alpha = 250, 0.01, 0.05
    assert margin(t, rho2, alpha) == pytest.approx(np.sqrt(2 * (t * rho2 + 1) / (t**2 * rho2)
                                                           * np.log(np.sqrt(t * rho2 + 1) / alpha)))
    for a in (0.05, 0.01):
        exact = (-lambertw(-a**2 / np.e, k=-1).real - 1) / 400  # d/dx of the margin at t* = 400 is zero here
        assert best_rho2(400, a) == pytest.approx(exact, rel=2e-3)


def test_proposal_probabilities_follow_the_formula() -> None:
    p = np.array([0.5, 0.1, 0.9, 0.5])
    ell = np.array([1.0, 2.0, -2.0, 0.0])
    got = proposal_probs(p, ell, b=0.2, eta=0.5, tau=0.25, pi_min=0.01)
    want = np.clip(0.75 * 0.5 * np.sqrt(p * (1 - p)) * np.abs(ell) + 0.25 * 0.2, 0.01, 1)
    assert np.allclose(got, want)
    assert np.allclose(proposal_probs(p, ell, b=0.2, eta=0.0, tau=1.0), 0.2)  # uniform


def _pairs(*rows: tuple[int, int, float, float]) -> tuple[PairInterval, ...]:
    return tuple(PairInterval(a=a, b=b, estimate=(lo + hi) / 2, low=lo, high=hi) for a, b, lo, hi in rows)


def test_stop_rules_in_order() -> None:
    names = ("x", "y", "z")
    a = np.array([0.8, 0.7, 0.75])
    sep = _pairs((0, 1, 0.05, 0.15), (0, 2, -0.01, 0.1), (1, 2, -0.1, 0.0))
    assert decide(names, a, sep, 0.02, 0.05, 40, (20, 20), False).kind == "burn-in"
    assert decide(names, a, sep, 0.02, 0.05, 80, (75, 5), False).kind == "burn-in"
    best = decide(names, a, sep, 0.02, 0.05, 80, (40, 40), False)
    assert (best.kind, best.best) == ("best", 0) and "x is the best" in best.message
    tied = _pairs((0, 1, -0.01, 0.015), (0, 2, -0.015, 0.01), (1, 2, -0.019, 0.019))
    assert decide(names, a, tied, 0.02, 0.05, 80, (40, 40), False).kind == "tie"
    open_ = _pairs((0, 1, -0.05, 0.15), (0, 2, -0.01, 0.1), (1, 2, -0.1, 0.0))
    assert decide(names, a, open_, 0.02, 0.05, 80, (40, 40), False).kind == "continue"
    assert decide(names, a, open_, 0.02, 0.05, 80, (40, 40), True).kind == "budget"


@pytest.mark.parametrize("name,active", [
    ("tie", True),
    ("near-tie", True),  # 0.03 apart, δ = 0.02
    ("inverted proxy", True),
    ("noise proxy", True),
    ("near-tie", False),
    ("near-tie whole-pool", True),  # budget = pool: the without-replacement sequence
])
def test_wrong_decisions_under_optional_stopping_stay_rare(name: str, active: bool) -> None:
    """Sessions stopped by the rules; a decision is wrong if its claim is false on the pool. Few sessions here, so
    the bound is α plus 2 binomial s.e. (bench/bench_until_sure_sim.py runs 1,000 per scenario, same function)."""
    sessions = 8
    errors = sum(simulate_session(SCENARIOS[name], 100 + r, active).wrong for r in range(sessions))
    assert errors / sessions <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / sessions)


def test_whole_pool_sequence_is_exact_at_the_end_and_covers_on_the_way() -> None:
    """The without-replacement sequence of a pool mean: at t = N its centre is within its width of the exact mean,
    and over random walks it holds the mean at every t (simultaneously) at least as often as 1 − α − 2 s.e."""
    rng = np.random.default_rng(21)
    n, walks, alpha = 120, 200, 0.1
    pool = rng.exponential(size=n)
    rho2 = best_rho2(n, alpha, one_sided=True)
    misses = 0
    for _ in range(walks):
        x = rng.permutation(pool)
        for t in range(10, n + 1, 5):
            shift, half = wor_interval(x[:t], n, float(margin(t, rho2, alpha, one_sided=True)))
            if x[:t].mean() + shift + half < pool.mean():  # the one side this sequence guards
                misses += 1
                break
    assert misses / walks <= alpha + 2 * np.sqrt(alpha * (1 - alpha) / walks)
    shift, half = wor_interval(pool, n, float(margin(n, rho2, alpha)))
    assert abs(pool.mean() + shift - pool.mean()) <= half
    _, half_wr = wor_interval(pool[:60], 10**9, float(margin(60, rho2, alpha)))
    assert wor_interval(pool[:60], n, float(margin(60, rho2, alpha)))[1] < half_wr  # narrower than with replacement


def test_one_sided_margin_solves_the_half_normal_mixture_and_lies_between() -> None:
    t, rho2, alpha = 200.0, 0.02, 0.025
    m1 = margin(t, rho2, alpha, one_sided=True)
    v = t * rho2 + 1
    s = m1 * t  # the unit-variance sum at the boundary
    mix = 2 / np.sqrt(v) * np.exp(rho2 * s**2 / (2 * v)) * ndtr(np.sqrt(rho2) * s / np.sqrt(v))
    assert mix == pytest.approx(1 / alpha, rel=1e-9)
    assert margin(t, rho2, 2 * alpha) < m1 < margin(t, rho2, alpha)


def test_clear_winner_is_found_with_fewer_labels_than_the_pool() -> None:
    rng = np.random.default_rng(11)
    scores, y, p_hat = binormal_pool(1500, (0.9, 0.7, 0.65), rng, "good")
    st = run_oracle(Session(("a", "b", "c"), scores, p_hat, Settings(budget=800, seed=1)), y)
    assert st is not None and st.decision.kind == "best" and st.decision.best == 0
    assert st.n_labels < 300


def test_near_identical_metrics_end_in_a_tie() -> None:
    rng = np.random.default_rng(12)
    scores, y, p_hat = binormal_pool(1000, (0.8, 0.8), rng, "good")
    scores[1] = scores[0] + 1e-3 * rng.normal(size=scores.shape[1])
    st = run_oracle(Session(("a", "b"), scores, p_hat, Settings(delta=0.05, budget=1000, seed=2)), y)
    assert st is not None and st.decision.kind == "tie"


def test_same_seed_and_answers_replay_the_same_session() -> None:
    rng = np.random.default_rng(13)
    scores, y, p_hat = binormal_pool(400, (0.85, 0.7), rng, "good")
    runs = [run_oracle(Session(("a", "b"), scores, p_hat, Settings(budget=200, seed=5)), y) for _ in range(2)]
    assert runs[0] is not None and runs[1] is not None
    assert np.array_equal(runs[0].aurocs, runs[1].aurocs) and runs[0].n_labels == runs[1].n_labels


def test_session_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="two metrics"):
        Session(("a",), np.zeros((1, 5)), np.full(5, 0.5), Settings())
    with pytest.raises(ValueError, match="proxy"):
        Session(("a", "b"), np.zeros((2, 5)), np.full(4, 0.5), Settings())


def test_fixed_sample_size_is_the_wald_formula_with_and_without_the_finite_pool() -> None:
    """n₀ = ((z_{1−α/(2(K−1))} + z_0.8)·sd(ψ_best − ψ_k)/(d_k + δ))², max over k; with the pool's correction
    n = n₀N/(N − 1 + n₀), which never exceeds the pool."""
    from attrib_audit.stats.ppauroc import RankIndex, fit, make_draws

    rng = np.random.default_rng(31)
    scores, y, _ = binormal_pool(3000, (0.8, 0.76, 0.7), rng, "good")
    n = y.size
    f = fit(tuple(RankIndex.of(s) for s in scores), np.full(n, 0.5), make_draws(np.arange(n), y, np.ones(n), n), 0.0)
    best = int(np.argmax(f.aurocs))
    z = ndtri(1 - 0.05 / 2 / 2) + ndtri(0.8)
    n0 = max((z * float((f.influences[best].at(y, np.arange(n)) - f.influences[j].at(y, np.arange(n))).std())
              / (f.aurocs[best] - f.aurocs[j] + 0.02)) ** 2 for j in range(3) if j != best)
    assert fixed_sample_size(scores, y, 0.02, 0.05) == int(np.ceil(n0))
    assert fixed_sample_size(scores, y, 0.02, 0.05, finite_pool=True) == int(np.ceil(n0 * n / (n - 1 + n0)))
    small = fixed_sample_size(scores[:, :150], y[:150], 0.0, 0.05, finite_pool=True)
    assert small is not None and small <= 150


def test_a_session_calibrates_a_proxy_that_is_not_a_probability() -> None:
    """With `calibrate`, the proxy (a percentile rank here) is cross-fitted once the labels allow: the pool's p̂
    moves off the rank and every labelled pair gets an out-of-fold p̂; the session still decides."""
    rng = np.random.default_rng(41)
    scores, y, _ = binormal_pool(600, (0.9, 0.7, 0.65), rng, "good")
    raw = 2.0 * y + rng.normal(size=y.size)
    u = (np.argsort(np.argsort(raw)) + 1) / (y.size + 1)
    s = Session(("a", "b", "c"), scores, u, Settings(budget=300, seed=3, calibrate=True))
    st = run_oracle(s, y)
    assert st is not None and st.decision.kind == "best" and st.decision.best == 0
    assert s.p_lab is not None and s.p_lab.size == len(s.rows)
    assert not np.allclose(s.p_pool, u)
    # the calibrated p̂ tracks the labels better than the rank does
    assert np.mean((s.p_pool - y) ** 2) < np.mean((u - y) ** 2)


def test_metrics_at_chance_are_never_named_even_when_they_tie() -> None:
    """Two near-identical metrics with AUROC 0.5: the tie rule holds early, but neither is shown better than chance,
    so the session labels on and ends at its budget recommending nothing (a coin flip is never named)."""
    rng = np.random.default_rng(13)
    scores, y, p_hat = binormal_pool(1000, (0.5, 0.5), rng, "noise")
    scores[1] = scores[0] + 1e-3 * rng.normal(size=scores.shape[1])
    st = run_oracle(Session(("a", "b"), scores, p_hat, Settings(delta=0.05, budget=300, seed=2)), y)
    assert st is not None and st.decision.kind == "budget" and st.decision.best is None
    assert "no candidate is shown better than chance" in st.decision.message and st.n_labels == 300


def test_a_clear_winner_is_still_named_when_it_beats_chance() -> None:
    rng = np.random.default_rng(14)
    scores, y, p_hat = binormal_pool(1000, (0.8, 0.8), rng, "good")
    scores[1] = scores[0] + 1e-3 * rng.normal(size=scores.shape[1])
    st = run_oracle(Session(("a", "b"), scores, p_hat, Settings(delta=0.05, budget=1000, seed=2)), y)
    assert st is not None and st.decision.kind == "tie" and st.decision.best is not None
