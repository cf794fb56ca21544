"""Label until sure, simulated: coverage of the fixed-n interval and the wrong-decision rate under optional stopping.

Pools with known AUROCs (binormal metrics sharing a common factor, prevalence 0.4); a session walks each pool and
stops by the rules; a decision is wrong when its claim is false on the pool ("X best within δ" with X more than δ
behind the best; "all within δ" when some metric is more than δ behind). Scenarios: separated, tie, near-tie, and
the proxy deliberately inverted or pure noise (validity must hold, only efficiency may suffer).

    python bench/bench_until_sure_sim.py [--sessions 1000] [--pool 400] [--budget 250] [--workers 2]

Ends with `ratio: X` = the largest wrong-decision rate over the scenarios ÷ α (≤ 1 is the target).
"""
from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.special import ndtri

from attrib_audit.stats.auroc import auroc
from attrib_audit.stats.ppauroc import RankIndex, bootstrap_fit, fit, fixed_intervals, make_draws
from attrib_audit.stats.until_sure import Session, Settings, run_oracle

DELTA, ALPHA = 0.02, 0.05
SCENARIOS = {
    "separated": ((0.85, 0.78, 0.70), "good"),
    "tie": ((0.80, 0.80, 0.80), "good"),
    "near-tie": ((0.80, 0.77, 0.70), "good"),
    "inverted proxy": ((0.80, 0.77, 0.70), "inverted"),
    "noise proxy": ((0.80, 0.77, 0.70), "noise"),
}


def pool(n: int, aucs: tuple[float, ...], rng: np.random.Generator,
         proxy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = (rng.random(n) < 0.4).astype(int)
    d = np.sqrt(2) * ndtri(np.asarray(aucs))
    common = rng.normal(size=n)
    scores = d[:, None] * y + np.sqrt(0.5) * common + np.sqrt(0.5) * rng.normal(size=(len(aucs), n))
    z = 2.0 * y - 1 + rng.normal(size=n)
    z = {"good": z, "inverted": -z, "noise": rng.normal(size=n)}[proxy]
    return scores, y, 1 / (1 + np.exp(-z))


def one_session(job: tuple[str, int, int, int, bool]) -> tuple[str, bool, str, int, bool]:
    name, seed, n, budget, active = job
    aucs, proxy = SCENARIOS[name]
    rng = np.random.default_rng([seed, len(name)])
    scores, y, p_hat = pool(n, aucs, rng, proxy)
    true = np.array([auroc(s, y) for s in scores])
    st = run_oracle(Session(tuple("abc"), scores, p_hat, Settings(DELTA, ALPHA, budget, active, seed=seed)), y)
    assert st is not None
    kind = st.decision.kind
    wrong = (kind == "best" and true[st.decision.best] < true.max() - DELTA) or \
        (kind == "tie" and true.max() - true.min() > DELTA)
    return name, active, kind, st.n_labels, bool(wrong)


def coverage(reps: int, seed: int) -> dict[int, float]:
    rng = np.random.default_rng(seed)
    n_pool = 2000
    y = (rng.random(n_pool) < 0.4).astype(int)
    s = y * 1.0 + rng.normal(size=n_pool)
    p_hat = 1 / (1 + np.exp(-(2.0 * y - 1 + rng.normal(size=n_pool))))
    index = (RankIndex.of(s),)
    truth = auroc(s, y)
    out = {}
    for n_lab in (50, 100, 250, 500):
        hits = 0
        for _ in range(reps):
            take = np.flatnonzero(rng.random(n_pool) < n_lab / n_pool)
            d = make_draws(take, y[take], np.full(take.size, n_lab / n_pool), n_pool)
            f = fit(index, p_hat, d)
            iv = fixed_intervals(f.aurocs, bootstrap_fit(index, p_hat, d, f.lams, np.arange(n_pool), 300, rng),
                                 0.95)[0]
            hits += iv.low <= truth <= iv.high
        out[n_lab] = hits / reps
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--pool", type=int, default=400)
    ap.add_argument("--budget", type=int, default=250)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--coverage-reps", type=int, default=300)
    args = ap.parse_args()
    t0 = time.time()
    if args.coverage_reps:
        cov = coverage(args.coverage_reps, 0)
        se = np.sqrt(0.95 * 0.05 / args.coverage_reps)
        print(f"fixed-n 95% interval coverage ({args.coverage_reps} samples each, pool 2000, nominal − 2 s.e. = "
              f"{0.95 - 2 * se:.3f}):")
        for n_lab, c in cov.items():
            print(f"  {n_lab:>4} labels: {c:.3f}")
    jobs = [(name, i, args.pool, args.budget, active) for name in SCENARIOS for active in (True, False)
            for i in range(args.sessions if active or name == "separated" else 0)]
    with ProcessPoolExecutor(args.workers) as ex:
        res = list(ex.map(one_session, jobs, chunksize=8))
    print(f"\noptional stopping: {args.sessions} sessions per scenario, pool {args.pool}, budget {args.budget}, "
          f"δ {DELTA}, α {ALPHA}")
    print(f"  {'scenario':<16} {'sampling':<8} {'wrong':>7} {'best':>6} {'tie':>6} {'budget':>7} {'median labels':>14}")
    worst = 0.0
    for name in SCENARIOS:
        for active in (True, False):
            rows = [r for r in res if r[0] == name and r[1] == active]
            if not rows:
                continue
            wrong = sum(r[4] for r in rows) / len(rows)
            worst = max(worst, wrong)
            kinds = {k: sum(r[2] == k for r in rows) / len(rows) for k in ("best", "tie", "budget")}
            print(f"  {name:<16} {'active' if active else 'uniform':<8} {wrong:>7.3f} {kinds['best']:>6.2f} "
                  f"{kinds['tie']:>6.2f} {kinds['budget']:>7.2f} {np.median([r[3] for r in rows]):>14.0f}")
    print(f"\n{len(res)} sessions in {time.time() - t0:.0f} s")
    print(f"ratio: {worst / ALPHA:.2f}")


if __name__ == "__main__":
    main()
