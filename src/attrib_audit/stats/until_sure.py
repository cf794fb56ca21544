"""Label until sure: walk the pool in random order, flip a coin per pair, update after every label, stop validly.

Pure computation, no I/O: the caller shows the pairs whose coin came up, asks a person (or an oracle file) for
the label, and logs every flip. Re-feeding a logged session's flips (`replay`) restores it exactly.

Pair i is shown with probability (Poisson sampling, the pool walked in a seeded random order)

    π_i = clip((1−τ)·η·√(p̂_i(1−p̂_i))·|ℓ_i| + τ·b, π_min, 1)

b = remaining budget ÷ remaining pool (π_i = 1 while b ≥ 1: no pair the budget covers is skipped), ℓ_i = the
largest |Δψ_a(i) − Δψ_b(i)| over the pairs of metrics not yet separated (Δψ_k(i) = ψ_k(1) − ψ_k(0), how much pair
i's label moves metric k's AUROC, so ℓ_i is large where the metrics rank i differently), and η = b ÷ the mean of
√(p̂(1−p̂))|ℓ| over the pairs left, so both terms average b.
Uniform sampling is η = 0 with τ = 1 (π_i = b).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attrib_audit.stats.calibrate import cross_fit
from attrib_audit.stats.confseq import Decision, PairInterval, best_rho2, decide, margin, wor_interval
from attrib_audit.stats.ppauroc import Draws, PPFit, RankIndex, fit, make_draws, visited_variance

PI_MIN = 1e-3


def proposal_probs(p_hat: np.ndarray, ell: np.ndarray, b: float, eta: float, tau: float,
                   pi_min: float = PI_MIN) -> np.ndarray:
    """π = clip((1−τ)·η·√(p̂(1−p̂))·|ℓ| + τ·b, π_min, 1), elementwise (module docstring)."""
    p = np.asarray(p_hat, dtype=np.float64)
    return np.clip((1.0 - tau) * eta * np.sqrt(p * (1.0 - p)) * np.abs(ell) + tau * b, pi_min, 1.0)


@dataclass(frozen=True, kw_only=True)
class Settings:
    """A session's fixed choices: δ and α of the claim, label budget, active or uniform sampling, the seed, and
    whether the proxy is calibrated on the labels (`stats.calibrate.cross_fit`)."""

    delta: float = 0.02
    alpha: float = 0.05
    budget: int = 400
    active: bool = True
    tau: float = 0.3
    seed: int = 0
    calibrate: bool = False  # the proxy is a fixed map into (0, 1), not a probability: cross-fit it on the labels


@dataclass(frozen=True)
class Flip:
    """One coin flip of the walk: the pool row, its probability, whether it came up, and when (logged first)."""

    row: int
    pi: float
    shown: bool


@dataclass(frozen=True, kw_only=True)
class Standings:
    """The state after an update: each metric's augmented AUROC and λ, the anytime-valid paired intervals, the
    decision, and the counts it rests on."""

    aurocs: np.ndarray
    lams: np.ndarray
    pairs: tuple[PairInterval, ...]
    decision: Decision
    n_labels: int
    n_positive: int
    visited: int
    non_response: int


@dataclass
class Session:
    """A label-until-sure session over a scored pool (K metrics × N pairs) with a proxy probability per pair."""

    names: tuple[str, ...]
    scores: np.ndarray
    p_hat: np.ndarray
    settings: Settings
    p_pool: np.ndarray = field(init=False)  # p̂ the estimates use on the pool: p_hat, or its cross-fitted calibration
    p_lab: np.ndarray | None = field(init=False, default=None)  # out-of-fold p̂ of the labelled pairs (calibrated)
    order: np.ndarray = field(init=False)
    indexes: tuple[RankIndex, ...] = field(init=False)
    rho2: float = field(init=False)
    margins: np.ndarray = field(init=False, repr=False)
    rows: list[int] = field(init=False, default_factory=list)
    labels: list[int] = field(init=False, default_factory=list)
    pis: list[float] = field(init=False, default_factory=list)
    visited: int = field(init=False, default=0)
    non_response: int = field(init=False, default=0)
    pending: Flip | None = field(init=False, default=None)
    gain: np.ndarray = field(init=False)
    last: Standings | None = field(init=False, default=None)
    _weight: np.ndarray = field(init=False, repr=False)
    _rest_sum: float = field(init=False, repr=False, default=0.0)

    def __post_init__(self) -> None:
        self.scores = np.atleast_2d(np.asarray(self.scores, dtype=np.float64))
        self.p_hat = np.clip(np.asarray(self.p_hat, dtype=np.float64), 1e-6, 1 - 1e-6)
        k, n = self.scores.shape
        if k < 2 or len(self.names) != k:
            raise ValueError(f"need at least two metrics, one name each; got {k} score rows, {len(self.names)} names")
        if self.p_hat.shape != (n,) or not np.isfinite(self.p_hat).all():
            raise ValueError("the proxy needs one finite probability per pool pair")
        if self.settings.budget < 1 or not 0 < self.settings.alpha < 1 or self.settings.delta < 0:
            raise ValueError("budget ≥ 1, 0 < alpha < 1 and delta ≥ 0 are required")
        self.order = np.random.default_rng([self.settings.seed, 41]).permutation(n)
        self.indexes = tuple(RankIndex.of(row) for row in self.scores)
        # tuned to the walk's end, when the budget runs out; walking the whole pool, to its middle instead (the
        # finite-population sequence narrows towards the end by itself, so tightness there is worth less)
        t_star = max(n / 2, 1.0) if self.without_replacement else n
        self.rho2 = best_rho2(t_star, self.settings.alpha / (k - 1), one_sided=True)
        # the one-sided unit margin at every t the walk can reach, solved once (it is a root per t)
        self.margins = np.asarray(margin(np.arange(n + 1), self.rho2, self.settings.alpha / (k - 1), one_sided=True))
        self.gain = np.ones(n)
        self.p_pool = self.p_hat
        self._weight = np.sqrt(self.p_hat * (1.0 - self.p_hat))
        self._rest_sum = float(self._weight.sum())

    @property
    def pool_size(self) -> int:
        return int(self.scores.shape[1])

    @property
    def spent(self) -> int:
        """Pairs shown (labelled or not answered): the budget counts what a person was asked to do."""
        return len(self.rows) + self.non_response

    @property
    def without_replacement(self) -> bool:
        """A budget of at least the pool: every visited pair is shown (π = 1), so the labels are a uniformly random
        order of the pool and the finite-population sequence applies (`wor_interval`). Skipped pairs are left out
        of that pool, as they are of the estimates."""
        return self.settings.budget >= self.pool_size

    def draws(self) -> Draws:
        """The labelled pairs so far as `Draws` (the walk's prefix: the pairs visited)."""
        # built by this class from checked flips: make_draws' checks would only repeat themselves every label
        return Draws(labelled=np.asarray(self.rows, dtype=np.int64), labels=np.asarray(self.labels, dtype=np.float64),
                     pi=np.asarray(self.pis), pool_size=self.pool_size, visited=max(self.visited, len(self.rows)),
                     proxy=self.p_lab)

    def probability(self, row: int) -> float:
        """π of `row` now, from the state before its coin (so it is predictable)."""
        left_pool = self.pool_size - self.visited
        b = max(self.settings.budget - self.spent, 0) / max(left_pool, 1)
        if b <= 0:
            return 0.0
        if b >= 1:  # the budget covers every pair left: show each (so a budget ≥ the pool walks it without replacement)
            return 1.0
        if not self.settings.active:
            return float(min(1.0, b))
        mean_g = self._rest_sum / left_pool if left_pool else 0.0
        eta = b / mean_g if mean_g > 0 else 0.0
        tau = self.settings.tau if eta > 0 else 1.0
        return float(proposal_probs(self.p_hat[row:row + 1], self.gain[row:row + 1], b, eta, tau)[0])

    def flip(self, u: float | None = None) -> Flip | None:
        """Walk to the next pair and flip its coin (u: the uniform draw; seeded when None); None at the pool's end.

        The caller logs the flip before showing the pair; a shown pair must be answered (`record`) or
        abandoned (`abandon`) before the next flip.
        """
        if self.pending is not None:
            raise RuntimeError("the shown pair has no answer yet")
        if self.visited >= self.pool_size or self.spent >= self.settings.budget:
            return None
        row = int(self.order[self.visited])
        pi = self.probability(row)
        if u is None:
            u = float(np.random.default_rng([self.settings.seed, 7, self.visited]).random())
        shown = bool(pi > 0 and u < pi)
        self.visited += 1
        self._rest_sum -= float(self._weight[row])
        out = Flip(row, pi, shown)
        self.pending = out if shown else None
        return out

    def replay(self, flip: Flip) -> None:
        """Advance the walk by a logged flip (its logged π and outcome, not recomputed): resuming a session.

        Raises:
            ValueError: the flip is not the walk's next pair (the log belongs to another seed or pool).
        """
        if self.pending is not None:
            raise RuntimeError("the shown pair has no answer yet")
        if self.visited >= self.pool_size or int(self.order[self.visited]) != flip.row:
            raise ValueError(f"logged flip {self.visited + 1} (row {flip.row}) is not the walk's next pair")
        self.visited += 1
        self.pending = flip if flip.shown else None

    def record(self, label: int, refresh: bool = True) -> Standings | None:
        """The shown pair's label (1 supported, 0 not): update the estimates, intervals, proposal and decision.

        `refresh=False` (replaying a log) only files the label; the caller calls `update` once at the end.
        """
        if self.pending is None:
            raise RuntimeError("no pair is waiting for a label")
        if label not in (0, 1):
            raise ValueError("label must be 0 or 1")
        self.rows.append(self.pending.row)
        self.labels.append(int(label))
        self.pis.append(self.pending.pi)
        self.pending = None
        return self.update() if refresh else None

    def update_after(self, label: int) -> Standings:
        """`record` then the standings it computed."""
        self.record(label)
        assert self.last is not None  # record with refresh always sets it
        return self.last

    def abandon(self) -> None:
        """The shown pair got no answer (skipped, or the session stopped): non-response, left out of the estimates."""
        if self.pending is None:
            raise RuntimeError("no pair is waiting for a label")
        self.pending = None
        self.non_response += 1

    def fit(self, lam: float | None = None) -> PPFit:
        return fit(self.indexes, self.p_pool, self.draws(), lam)

    def update(self) -> Standings:
        """Re-estimate every AUROC, the paired confidence sequences, the decision and the next proposal's ℓ."""
        self._calibrate()
        f = self.fit()
        k = len(self.names)
        t = max(self.visited, len(self.rows))
        a = f.aurocs
        pairs = []
        for i in range(k):
            for j in range(i + 1, k):
                est = float(a[i] - a[j])
                shift, half = self._interval(f.terms[i] - f.terms[j], t)
                pairs.append(PairInterval(a=i, b=j, estimate=est, low=est + shift - half, high=est + shift + half))
        n_pos = int(sum(self.labels))
        exhausted = self.spent >= self.settings.budget or self.visited >= self.pool_size
        decision = decide(self.names, a, tuple(pairs), self.settings.delta, self.settings.alpha, len(self.labels),
                          (len(self.labels) - n_pos, n_pos), exhausted)
        decision = self._chance_veto(decision, f, t, exhausted)
        self._update_gain(f, pairs)
        self.last = Standings(aurocs=a, lams=f.lams, pairs=tuple(pairs), decision=decision, n_labels=len(self.labels),
                              n_positive=n_pos, visited=self.visited,
                              non_response=self.non_response)
        return self.last

    def _interval(self, terms: np.ndarray, t: int) -> tuple[float, float]:
        """(shift, half-width) of the anytime-valid interval of the mean of `terms` after `t` visits, one-sided at
        α/(K−1): the without-replacement sequence once every walked pair is shown, else the asymptotic one."""
        if self.without_replacement:
            return wor_interval(terms, self.pool_size - self.non_response, float(self.margins[terms.size]))
        var = visited_variance(terms, t)
        return 0.0, float(np.sqrt(var) * self.margins[t]) if t >= 2 and np.isfinite(var) else float("inf")

    def _chance_veto(self, decision: Decision, f: PPFit, t: int, exhausted: bool) -> Decision:
        """A stop that would name a metric (best within δ, or a tie to pick the cheapest from) only when the leader is
        shown better than chance: its anytime-valid lower bound above 0.5, one-sided at α/(K−1) like each paired
        bound. Otherwise labelling goes on (more labels may show it), and a spent budget says no candidate was shown
        better than chance. A veto never adds a claim, so the paired guarantee is untouched; the chance claim, when
        made, rests on one more bound at α/(K−1)."""
        if decision.kind not in ("best", "tie") or decision.best is None:
            return decision
        i = decision.best
        shift, half = self._interval(f.terms[i], t)
        low = float(f.aurocs[i]) + shift - half
        if low > 0.5:
            return decision
        lead = (f"{self.names[i]} leads (AUROC {float(f.aurocs[i]):.3f}) but is not shown better than chance: its "
                f"anytime-valid lower bound is {low:.3f} ≤ 0.5")
        if exhausted:
            return Decision("budget", None, f"budget spent (or the pool walked): no candidate is shown better than "
                                            f"chance on this data; {lead}. None is recommended")
        return Decision("continue", None, f"keep labelling: {lead}")

    def _update_gain(self, f: PPFit, pairs: list[PairInterval]) -> None:
        """ℓ_i: the largest |Δψ_a(i) − Δψ_b(i)| over the metric pairs whose interval still straddles ±δ."""
        d = self.settings.delta
        open_pairs = [p for p in pairs if p.low <= -d and p.high >= d] or pairs
        moves = [inf.up - inf.down for inf in f.influences]
        self.gain = np.max(np.abs(np.vstack([moves[p.a] - moves[p.b] for p in open_pairs])), axis=0)
        self._weight = np.sqrt(self.p_pool * (1.0 - self.p_pool)) * self.gain
        self._rest_sum = float(self._weight[self.order[self.visited:]].sum())

    def _calibrate(self) -> None:
        """Refit the cross-fitted calibration from the labels so far (when asked for and both classes allow)."""
        got = cross_fit(self.p_hat, np.asarray(self.rows), np.asarray(self.labels), np.asarray(self.pis)) \
            if self.settings.calibrate and self.rows else None
        if got is None:
            self.p_pool, self.p_lab = self.p_hat, None
        else:
            self.p_pool, self.p_lab = (np.clip(v, 1e-6, 1 - 1e-6) for v in got)

    def budget_spent(self) -> bool:
        return self.spent >= self.settings.budget or self.visited >= self.pool_size


def run_oracle(session: Session, answer: np.ndarray) -> Standings | None:
    """Run a session to a decision with labels from `answer` (0/1 per pool row): the headless path of simulations.

    Returns the last standings (None when no pair was ever labelled).
    """
    while True:
        flip = session.flip()
        if flip is None:
            break
        if flip.shown:
            st = session.update_after(int(answer[flip.row]))
            if st.decision.stopped:
                return st
    return session.update() if session.rows else None


def fixed_sample_size(scores: np.ndarray, labels: np.ndarray, delta: float, alpha: float,
                      power: float = 0.8, finite_pool: bool = False) -> int | None:
    """Labels a fixed uniform sample needs to reach the same claim with power `power`, from the pool's labels.

    The claim "the best is within δ of every other metric" at level α/(K−1) per pair holds at n when each
    Wald interval d_k ± z·σ_k/√n has its lower end above −δ, d_k = AUROC_best − AUROC_k and σ_k² the variance of
    ψ_best − ψ_k over the pool (the Hájek terms, as the sequential intervals use): n₀ = ((z + z_power)σ_k/(d_k + δ))²,
    None when n₀ exceeds the pool (as `plan` sizes it: samples as if from an infinite population). With
    `finite_pool` the standard error carries the finite-population correction √((N − n)/(N − 1)) of a sample
    drawn without replacement, so n = n₀N/(N − 1 + n₀) (never more than the pool). A fixed design picks n before
    any label, so this uses the true pool values: the most favourable plan possible.
    """
    from scipy.special import ndtri  # deferred like the rest of scipy

    sm = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.asarray(labels, dtype=np.float64)
    n = y.size
    draws = make_draws(np.arange(n), y, np.ones(n), n)
    f = fit(tuple(RankIndex.of(r) for r in sm), np.full(n, 0.5), draws, 0.0)
    a = f.aurocs
    best = int(np.argmax(a))
    k = sm.shape[0]
    z = float(ndtri(1 - alpha / (k - 1) / 2)) + float(ndtri(power))
    need = 0.0
    for j in range(k):
        if j == best:
            continue
        psi = f.influences[best].at(y, np.arange(n)) - f.influences[j].at(y, np.arange(n))
        need = max(need, (z * float(psi.std()) / (a[best] - a[j] + delta)) ** 2)
    if finite_pool:
        return int(np.ceil(need * n / (n - 1 + need))) if n > 1 else n
    return int(np.ceil(need)) if need <= n else None
