"""Confidence sequences, stop rules and the label-until-sure walk: formulas against closed forms, and small
simulations of the wrong-decision rate under optional stopping (the 1,000-session versions are in bench/)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import lambertw, ndtri

from attrib_audit.stats.auroc import auroc
from attrib_audit.stats.confseq import PairInterval, best_rho2, decide, margin
from attrib_audit.stats.until_sure import Session, Settings, proposal_probs, run_oracle


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
    return tuple(PairInterval(a, b, (lo + hi) / 2, lo, hi) for a, b, lo, hi in rows)


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


def binormal_pool(n: int, aucs: tuple[float, ...], rng: np.random.Generator,
                  proxy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = (rng.random(n) < 0.4).astype(int)
    d = np.sqrt(2) * ndtri(np.asarray(aucs))
    common = rng.normal(size=n)
    scores = d[:, None] * y + np.sqrt(0.5) * common + np.sqrt(0.5) * rng.normal(size=(len(aucs), n))
    z = 2.0 * y - 1 + rng.normal(size=n)
    z = {"good": z, "inverted": -z, "noise": rng.normal(size=n)}[proxy]
    return scores, y, 1 / (1 + np.exp(-z))


def wrong(kind: str, best: int | None, true: np.ndarray, delta: float) -> bool:
    if kind == "best":
        return bool(true[best] < true.max() - delta)
    if kind == "tie":
        return bool(true.max() - true.min() > delta)
    return False


@pytest.mark.parametrize("aucs,proxy,active", [
    ((0.80, 0.80, 0.80), "good", True),  # a tie
    ((0.80, 0.77, 0.70), "good", True),  # a near-tie: 0.03 apart, δ = 0.02
    ((0.80, 0.77, 0.70), "inverted", True),
    ((0.80, 0.77, 0.70), "noise", True),
    ((0.80, 0.77, 0.70), "good", False),
])
def test_wrong_decisions_under_optional_stopping_stay_rare(aucs: tuple[float, ...], proxy: str, active: bool) -> None:
    """Sessions stopped by the rules; a decision is wrong if its claim is false on the pool. Few sessions here, so
    the bound is α plus 2 binomial s.e. (bench/bench_until_sure.py runs 1,000 per scenario)."""
    rng = np.random.default_rng(hash((aucs, proxy, active)) % 2**32)
    sessions, errors = 8, 0
    for r in range(sessions):
        scores, y, p_hat = binormal_pool(400, aucs, rng, proxy)
        true = np.array([auroc(s, y) for s in scores])
        st = run_oracle(Session(("a", "b", "c"), scores, p_hat, Settings(budget=250, active=active, seed=r)), y)
        assert st is not None
        errors += wrong(st.decision.kind, st.decision.best, true, 0.02)
    assert errors / sessions <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / sessions)


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
