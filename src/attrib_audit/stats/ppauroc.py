"""Prediction-powered AUROC: every pool pair's proxy probability plus a few labelled pairs, weighted by 1/π.

For a metric with scores s on a pool of N pairs, AUROC = Nk / D with
Nk = Σ_{i≠j} Y_i(1−Y_j) K_ij,  K_ij = 1[s_i > s_j] + ½·1[s_i = s_j],  and D the same sum with K ≡ 1.
With labels Y on the pairs whose coin came up (ξ_i = 1, probability π_i, Poisson sampling) and a proxy
probability p̂ of "supported" on every pair, the augmented (AIPW / PPI++) U-statistic

    N̂ = λ Σ_{i≠j} p̂_i(1−p̂_j) K_ij + c Σ_{i≠j} (ξ_iξ_j / (π_iπ_j)) [Y_i(1−Y_j) − λ p̂_i(1−p̂_j)] K_ij

is unbiased for Nk for any λ and any p̂ fixed before the labels (Wang, Huo, Peng, Zou, "Learning U-statistics
with active inference", arXiv 2605.11638; Zou, Witten, Williamson, arXiv 2602.10332). c = N(N−1)/(t(t−1))
when only the first t pairs of a uniformly random walk of the pool have had their coin flipped (the walk's
prefix is a simple random sample), 1 once the whole pool has. λ = 0 is the Horvitz–Thompson estimate.
A proxy calibrated on the labels enters with cross-fitting: `Draws.proxy` holds each labelled pair's p̂ from a
fit without its label, the pool sums use the folds' average (`stats.calibrate`).

Every sum is one sort per metric (shared by all λ, labels and resamples) and cumulative sums: O(N log N).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attrib_audit.stats.bootstrap import cluster_count_blocks, percentile_ci


@dataclass(frozen=True, eq=False)
class RankIndex:
    """One metric's pool scores sorted once: the tie-bin of each pair and the bins' count."""

    bins: np.ndarray  # (N,) tie-bin of each pair, bins ordered by score
    n_bins: int
    order: np.ndarray  # (N,) the pairs sorted by score
    starts: np.ndarray  # (n_bins,) where each tie-bin starts in `order`

    @classmethod
    def of(cls, scores: np.ndarray) -> RankIndex:
        """Sort `scores` (1-D, finite) into tie-bins.

        Raises:
            ValueError: scores are not 1-D or not finite.
        """
        s = np.asarray(scores, dtype=np.float64)
        if s.ndim != 1 or not np.isfinite(s).all():
            raise ValueError("pool scores must be 1-D and finite")
        return cls.from_bins(np.unique(s, return_inverse=True)[1].reshape(-1))

    @classmethod
    def from_bins(cls, bins: np.ndarray) -> RankIndex:
        """From ordered tie-bin codes (gaps allowed, e.g. a subset of another index's bins)."""
        inv = np.unique(np.asarray(bins, dtype=np.int64), return_inverse=True)[1].reshape(-1)
        order = np.argsort(inv, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(inv[order]) > 0]) if inv.size else np.zeros(0, dtype=np.int64)
        return cls(inv, int(inv.max()) + 1 if inv.size else 0, order, starts)

    def subset(self, rows: np.ndarray) -> RankIndex:
        """The index of the pairs `rows` only (same order of scores)."""
        return RankIndex.from_bins(self.bins[rows])


def kernel_sum(index: RankIndex, a: np.ndarray, b: np.ndarray) -> float:
    """Σ_{i≠j} a_i b_j K_ij, K_ij = 1[s_i > s_j] + ½·1[s_i = s_j], in O(N) given the sort.

    Σ over all (i, j) is Σ_g A_g (B_<g + ½ B_g) per tie-bin g; the diagonal (K_ii = ½) is taken back off.
    """
    av = np.bincount(index.bins, weights=a, minlength=index.n_bins)
    bv = np.bincount(index.bins, weights=b, minlength=index.n_bins)
    below = np.cumsum(bv) - 0.5 * bv
    return float(av @ below - 0.5 * float(np.dot(a, b)))


def kernel_sums(index: RankIndex, m: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`kernel_sum` for each row of the (B, N) multiplicities `m` (resample b holds m_bi copies of pair i).

    The pairs of two copies of one pair count, a copy with itself does not.
    """
    order, starts = index.order, index.starts
    ma, mb = m * a, m * b
    av = np.add.reduceat(ma[:, order], starts, axis=1)
    bv = np.add.reduceat(mb[:, order], starts, axis=1)
    below = np.cumsum(bv, axis=1) - 0.5 * bv
    return np.einsum("bg,bg->b", av, below) - 0.5 * (m @ (a * b))


def kernel_gradient(index: RankIndex, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """∂F/∂m_i at m = 1 of F(m) = the `kernel_sums` sum: a_i Σ_j b_j K_ij + b_i Σ_j a_j K_ji − ½ a_i b_i."""
    av = np.bincount(index.bins, weights=a, minlength=index.n_bins)
    bv = np.bincount(index.bins, weights=b, minlength=index.n_bins)
    below = (np.cumsum(bv) - 0.5 * bv)[index.bins]  # Σ_j b_j K_ij, self included at ½
    above = (av.sum() - np.cumsum(av) + 0.5 * av)[index.bins]  # Σ_j a_j K_ji
    return a * below + b * above - 0.5 * a * b


def kernel_sums_linear(index: RankIndex, m: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`kernel_sums` to first order in the multiplicities: F(1) + Σ_i (m_i − 1) ∂F/∂m_i (`kernel_gradient`).

    The remainder Σ_ij (m_i−1)(m_j−1) a_i b_j K_ij is O(N) against the O(N²) sum, so on a pool it is what the
    resampled proxy sum needs, for one (B, N) @ (N,) product.
    """
    grad = kernel_gradient(index, a, b)
    return kernel_sum(index, a, b) + m @ grad - grad.sum()


def pair_sum_product(a: np.ndarray, b: np.ndarray, m: np.ndarray | None = None) -> np.ndarray | float:
    """Σ_{i≠j} a_i b_j (the K ≡ 1 sum); with (B, N) multiplicities `m`, one per resample (copies as in
    `kernel_sums`)."""
    if m is None:
        return float(a.sum() * b.sum() - a @ b)
    return (m @ a) * (m @ b) - m @ (a * b)


@dataclass(frozen=True, eq=False, kw_only=True)
class Draws:
    """What the sampling knows: which pool pairs were labelled, their label and coin probability, and the walk so far.

    `visited` is the number of pool pairs whose coin has been flipped (a uniformly random prefix of the walk);
    the whole pool by default.
    """

    labelled: np.ndarray  # (n,) pool index of each labelled pair
    labels: np.ndarray  # (n,) 0/1
    pi: np.ndarray  # (n,) probability its coin had of coming up
    pool_size: int
    visited: int
    # p̂ of each labelled pair when it differs from the pool's (cross-fitted: scored without its own label)
    proxy: np.ndarray | None = None

    @property
    def scale(self) -> float:
        """c = N(N−1) / (t(t−1)): the inverse probability that both pairs of a pair lie in the walk's prefix."""
        n, t = self.pool_size, self.visited
        return (n * (n - 1)) / (t * (t - 1)) if t > 1 else float("nan")


def labelled_proxy(p_hat: np.ndarray, draws: Draws) -> np.ndarray:
    """p̂ of the labelled pairs: `draws.proxy` where given (cross-fitted), else the pool's p̂ at those rows."""
    if draws.proxy is not None:
        return draws.proxy
    return np.asarray(p_hat, dtype=np.float64)[draws.labelled]


def make_draws(labelled: np.ndarray, labels: np.ndarray, pi: np.ndarray, pool_size: int,
               visited: int | None = None) -> Draws:
    """Validated `Draws`.

    Raises:
        ValueError: arrays of different lengths, labels not 0/1, π outside (0, 1], indices out of the pool or repeated.
    """
    idx = np.asarray(labelled, dtype=np.int64)
    y = np.asarray(labels)
    p = np.asarray(pi, dtype=np.float64)
    if not (idx.shape == y.shape == p.shape and idx.ndim == 1):
        raise ValueError("labelled, labels and pi must be 1-D and the same length")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("labels must be 0/1")
    if not ((p > 0) & (p <= 1)).all():
        raise ValueError("inclusion probabilities must be in (0, 1]")
    if idx.size and (idx.min() < 0 or idx.max() >= pool_size or np.unique(idx).size != idx.size):
        raise ValueError("labelled indices must be distinct pool rows")
    t = pool_size if visited is None else int(visited)
    if not idx.size <= t <= pool_size:
        raise ValueError(f"visited ({t}) must lie between the labels ({idx.size}) and the pool size ({pool_size})")
    return Draws(labelled=idx, labels=y.astype(np.float64), pi=p, pool_size=int(pool_size), visited=t)


@dataclass(frozen=True)
class PPEstimate:
    """Augmented estimates of one metric's AUROC numerator and denominator at a given λ."""

    auroc: float
    numerator: float
    denominator: float
    lam: float


def _parts(p_hat: np.ndarray, draws: Draws) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pool-length arrays w·Y, w·(1−Y), w·p̂, w·(1−p̂) on the labelled pairs (w = 1/π), zero elsewhere."""
    n = draws.pool_size
    wy, wn, wp, wq = (np.zeros(n) for _ in range(4))
    w = 1.0 / draws.pi
    wy[draws.labelled] = w * draws.labels
    wn[draws.labelled] = w * (1.0 - draws.labels)
    p_lab = labelled_proxy(p_hat, draws)
    wp[draws.labelled] = w * p_lab
    wq[draws.labelled] = w * (1.0 - p_lab)
    return wy, wn, wp, wq


def pp_auroc(index: RankIndex, p_hat: np.ndarray, draws: Draws, lam: float) -> PPEstimate:
    """The augmented estimate N̂ / D̂ of one metric's pool AUROC (module docstring); λ = 0 is Horvitz–Thompson.

    Args:
        index: the metric's sorted pool scores.
        p_hat: proxy probability of "supported" for every pool pair, fixed before the labels.
        draws: the labelled pairs and their coin probabilities.
        lam: weight of the proxy (0: ignore it; 1: trust it fully as a control variate).

    Returns:
        The estimate with its numerator and denominator; NaN when D̂ is not positive (a class unseen).
    """
    p = np.asarray(p_hat, dtype=np.float64)
    wy, wn, wp, wq = _parts(p, draws)
    c = draws.scale
    num_l = kernel_sum(index, wy, wn)
    den_l = float(pair_sum_product(wy, wn))
    num, den = c * num_l, c * den_l
    if lam:
        num += lam * (kernel_sum(index, p, 1.0 - p) - c * kernel_sum(index, wp, wq))
        den += lam * (float(pair_sum_product(p, 1.0 - p)) - c * float(pair_sum_product(wp, wq)))
    a = num / den if den > 0 else float("nan")
    return PPEstimate(float(a), float(num), float(den), float(lam))


def pp_mean(p_hat: np.ndarray, draws: Draws, lam: float) -> float:
    """The augmented estimate of the pool's share of supported pairs: (1/N)[λΣp̂ + (N/t) Σ_labelled (Y − λp̂)/π].

    With π = n/N over the whole pool this is the PPI++ mean estimate (ppi-python's `ppi_mean_pointestimate` with
    the whole pool as its unlabelled set).
    """
    p = np.asarray(p_hat, dtype=np.float64)
    n = draws.pool_size
    corr = ((draws.labels - lam * labelled_proxy(p, draws)) / draws.pi).sum() * n / draws.visited
    return float((lam * p.sum() + corr) / n)


@dataclass(frozen=True, eq=False)
class Influence:
    """Per-pair first-order terms of one metric's AUROC: ψ(y) = y·up + (1−y)·down, mean zero over the pool.

    ψ_i(y) = [y (F⁻(s_i) − A q) + (1−y)(G⁺(s_i) − A p)] / (p q): F⁻(s) the share of pool pairs that are negative
    and score below s (ties half), G⁺(s) the share positive and above; the Hájek projection of N/D.
    """

    up: np.ndarray  # (N,) ψ_i(1)
    down: np.ndarray  # (N,) ψ_i(0)

    def at(self, y: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """ψ_i(y_i) for the pool pairs `rows`, y (probabilities allowed) given per row."""
        return y * self.up[rows] + (1.0 - y) * self.down[rows]


def influence(index: RankIndex, p_hat: np.ndarray, draws: Draws, lam: float, auroc_value: float) -> Influence:
    """ψ for every pool pair, with F⁻, G⁺ and p estimated by the same augmented weighting as the AUROC.

    The per-pair "positive" weight is λp̂_i + ξ_i (N/t)(Y_i − λp̂_i)/π_i (negative likewise), so the nuisances stay
    consistent whatever the proxy is worth: an inverted or noise proxy widens intervals, never biases them.
    """
    p = np.asarray(p_hat, dtype=np.float64)
    n = draws.pool_size
    scale1 = n / draws.visited
    pos = lam * p
    neg = lam * (1.0 - p)
    w = scale1 / draws.pi
    p_lab = labelled_proxy(p, draws)
    pos[draws.labelled] += w * (draws.labels - lam * p_lab)
    neg[draws.labelled] += w * ((1.0 - draws.labels) - lam * (1.0 - p_lab))
    pos_b = np.bincount(index.bins, weights=pos, minlength=index.n_bins)
    neg_b = np.bincount(index.bins, weights=neg, minlength=index.n_bins)
    f_neg = ((np.cumsum(neg_b) - 0.5 * neg_b) / n)[index.bins]
    g_pos = ((pos_b.sum() - np.cumsum(pos_b) + 0.5 * pos_b) / n)[index.bins]
    prev = float(np.clip(pp_mean(p, draws, lam), 1e-9, 1 - 1e-9))
    pq = prev * (1.0 - prev)
    a = auroc_value if np.isfinite(auroc_value) else 0.5
    return Influence((f_neg - a * (1.0 - prev)) / pq, (g_pos - a * prev) / pq)


def tuned_lambda(psi: Influence, p_hat: np.ndarray, draws: Draws) -> float:
    """PPI++ power tuning: the λ in [0, 1] minimising the variance of the per-draw term (ξ/π)(ψ(Y) − λψ(p̂)).

    λ* = E[ψ(Y)ψ(p̂)/π] / E[ψ(p̂)²/π], each expectation estimated on the labelled pairs weighted by 1/π
    (Angelopoulos, Duchi, Zrnic, "PPI++", arXiv 2311.01453, for the same control-variate argument on means).
    """
    if draws.labelled.size < 2:
        return 0.0
    idx = draws.labelled
    w = 1.0 / draws.pi**2
    true_psi = psi.at(draws.labels, idx)
    proxy_psi = psi.at(labelled_proxy(p_hat, draws), idx)
    den = float((w * proxy_psi**2).sum())
    return float(np.clip((w * true_psi * proxy_psi).sum() / den, 0.0, 1.0)) if den > 0 else 0.0


def draw_terms(psi: Influence, p_hat: np.ndarray, draws: Draws, lam: float) -> np.ndarray:
    """(n,) per-labelled-draw terms (1/π)(ψ(Y) − λψ(p̂)); every visited but unlabelled pair contributes 0.

    The estimate moves, to first order, by the mean of these over the t visited pairs, so their spread
    (zeros included) over t is the variance the confidence sequence needs.
    """
    idx = draws.labelled
    true_psi = psi.at(draws.labels, idx)
    proxy_psi = psi.at(labelled_proxy(p_hat, draws), idx)
    return (true_psi - lam * proxy_psi) / draws.pi


def visited_variance(terms: np.ndarray, visited: int) -> float:
    """Variance over the t visited pairs of terms that are `terms` on the labelled ones and 0 on the rest."""
    if visited < 2:
        return float("nan")
    s1, s2 = float(terms.sum()), float((terms**2).sum())
    mean = s1 / visited
    return max(s2 / visited - mean**2, 0.0)


@dataclass(frozen=True, eq=False)
class PPFit:
    """Every metric's augmented AUROC with its tuned λ, first-order terms, and the per-draw terms."""

    estimates: tuple[PPEstimate, ...]
    influences: tuple[Influence, ...]
    terms: np.ndarray  # (K, n) per-labelled-draw terms

    @property
    def aurocs(self) -> np.ndarray:
        return np.array([e.auroc for e in self.estimates])

    @property
    def lams(self) -> np.ndarray:
        return np.array([e.lam for e in self.estimates])


def fit(indexes: tuple[RankIndex, ...], p_hat: np.ndarray, draws: Draws, lam: float | None = None) -> PPFit:
    """Augmented AUROC of each metric; λ power-tuned per metric (`tuned_lambda`) unless given.

    Tuning uses ψ at λ = 0 (the Horvitz–Thompson nuisances), then the estimate and ψ are recomputed at the tuned λ.
    """
    p = np.asarray(p_hat, dtype=np.float64)
    ests, infs, terms = [], [], []
    for index in indexes:
        if lam is None:
            e0 = pp_auroc(index, p, draws, 0.0)
            lam_k = tuned_lambda(influence(index, p, draws, 0.0, e0.auroc), p, draws)
        else:
            lam_k = lam
        e = pp_auroc(index, p, draws, lam_k)
        psi = influence(index, p, draws, lam_k, e.auroc)
        ests.append(e)
        infs.append(psi)
        terms.append(draw_terms(psi, p, draws, lam_k))
    return PPFit(tuple(ests), tuple(infs), np.vstack(terms) if terms else np.zeros((0, draws.labelled.size)))


@dataclass(frozen=True, kw_only=True)
class FixedInterval:
    """A fixed-sample percentile bootstrap interval: valid at one pre-set sample size, not for stopping."""

    estimate: float
    low: float
    high: float
    n_boot: int
    dropped: int


def bootstrap_fit(indexes: tuple[RankIndex, ...], p_hat: np.ndarray, draws: Draws, lams: np.ndarray,
                  pool_codes: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(K, B) bootstrap replicates of every metric's augmented AUROC, on shared draws (so differences are paired).

    The two parts are resampled separately, each by clusters (`pool_codes`: cluster of each pool pair):
    the proxy sum over the pool's clusters (its numerator to first order, `kernel_sums_linear`), and the labelled
    correction over the clusters of the visited pairs (the walk's coin flips, labelled or not, so the random
    number of labels is part of the spread).
    """
    p = np.asarray(p_hat, dtype=np.float64)
    codes = np.unique(np.asarray(pool_codes), return_inverse=True)[1].reshape(-1)
    n = draws.pool_size
    rows = draws.labelled
    w = 1.0 / draws.pi
    wy, wn = w * draws.labels, w * (1.0 - draws.labels)
    p_lab = labelled_proxy(p, draws)
    wp, wq = w * p_lab, w * (1.0 - p_lab)
    k_pool = int(codes.max()) + 1
    # the visited clusters: the labelled ones plus one empty cluster per pair the walk skipped
    lab_inv = np.unique(codes[rows], return_inverse=True)[1].reshape(-1)
    k_vis = (int(lab_inv.max()) + 1 if rows.size else 0) + max(draws.visited - rows.size, 0)
    c = draws.scale
    subs = [index.subset(rows) for index in indexes]
    out = np.full((len(indexes), n_boot), np.nan)
    pool_blocks = cluster_count_blocks(k_pool, n_boot, rng, width=n)
    vis_blocks = cluster_count_blocks(max(k_vis, 1), n_boot, rng, width=n)
    # the proxy sums over the pool, per cluster: a resample's sum is its cluster counts times these (first order)
    def per_cluster(v: np.ndarray) -> np.ndarray:
        return np.bincount(codes, weights=v, minlength=k_pool)

    pool_p, pool_q, pool_pq = per_cluster(p), per_cluster(1.0 - p), per_cluster(p * (1.0 - p))
    pool_num = [(kernel_sum(index, p, 1.0 - p), per_cluster(g), float(g.sum()))
                for index, g in ((ix, kernel_gradient(ix, p, 1.0 - p)) for ix in indexes)]
    start = 0
    for mu, mv in zip(pool_blocks, vis_blocks):
        b = mu.shape[0]
        m_lab = mv[:, lab_inv]
        den_pool = (mu @ pool_p) * (mu @ pool_q) - mu @ pool_pq
        for k in range(len(indexes)):
            lam = float(lams[k])
            num = c * kernel_sums(subs[k], m_lab, wy, wn)
            den = c * pair_sum_product(wy, wn, m_lab)
            if lam:
                f1, g_cl, g_sum = pool_num[k]
                num = num + lam * (f1 + mu @ g_cl - g_sum - c * kernel_sums(subs[k], m_lab, wp, wq))
                den = den + lam * (den_pool - c * pair_sum_product(wp, wq, m_lab))
            with np.errstate(invalid="ignore", divide="ignore"):
                out[k, start:start + b] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        start += b
    return out


def fixed_intervals(point: np.ndarray, replicates: np.ndarray, level: float) -> tuple[FixedInterval, ...]:
    """A percentile interval per row of `replicates` around the matching `point`."""
    out = []
    for est, reps in zip(point, replicates):
        lo, hi, dropped = percentile_ci(reps, level)
        out.append(FixedInterval(estimate=float(est), low=lo, high=hi, n_boot=int(reps.size), dropped=dropped))
    return tuple(out)
