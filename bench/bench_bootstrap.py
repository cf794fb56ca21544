"""Benchmarks for the foundation, measured side by side in one run.

(a) clustered bootstrap of AUROC: the vectorised weight-matrix implementation vs a loop
    calling sklearn.metrics.roc_auc_score once per resample (n=2000, B=1000);
(b) the demo audit: first run (empty cache) vs a cached rerun.

Run: python bench/bench_bootstrap.py [--n 2000] [--n-boot 1000] [--no-audit]
Last line: `ratio: X`, the speed-up of (a) (vectorised over the sklearn loop).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np


def loop_bootstrap(scores, labels, groups, n_boot, seed):
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    uniq, codes = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(codes == g) for g in range(len(uniq))]
    out = []
    for _ in range(n_boot):
        rows = np.concatenate([members[g] for g in rng.integers(0, len(uniq), len(uniq))])
        if labels[rows].min() != labels[rows].max():
            out.append(roc_auc_score(labels[rows], scores[rows]))
    return np.quantile(out, [0.025, 0.975])


def bench_bootstrap(n=2000, n_boot=1000):
    from attrib_audit.stats import clustered_auroc_ci

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    s = np.round(rng.normal(size=n) + y, 2)
    g = np.arange(n) // 4
    clustered_auroc_ci(s[:50], y[:50], g[:50], n_boot=5, seed=0)  # warm-up: imports (scipy.sparse, sklearn) not timed
    loop_bootstrap(s[:50], y[:50], g[:50], 5, seed=0)
    t0 = time.perf_counter()
    est = clustered_auroc_ci(s, y, g, n_boot=n_boot, seed=1)
    t_vec = time.perf_counter() - t0
    t0 = time.perf_counter()
    lo, hi = loop_bootstrap(s, y, g, n_boot, seed=1)
    t_loop = time.perf_counter() - t0
    print(f"(a) clustered bootstrap AUROC, n={n}, B={n_boot}, {n // 4} clusters")
    print(f"    vectorised : {t_vec * 1000:8.1f} ms   CI [{est.ci_low:.4f}, {est.ci_high:.4f}]")
    print(f"    sklearn loop: {t_loop * 1000:8.1f} ms   CI [{lo:.4f}, {hi:.4f}]")
    print(f"    speed-up    : {t_loop / t_vec:8.1f}x  (target >= 30x)")
    return t_loop / t_vec


def bench_cached_rerun():
    from attrib_audit.audit import AuditConfig, run_audit
    from attrib_audit.data import load_demo

    table = load_demo()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = AuditConfig(cache_path=os.path.join(tmp, "c.sqlite"), quiet=True)
        t0 = time.perf_counter()
        first = run_audit(table, cfg, log=lambda *_: None)
        t_first = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = run_audit(table, cfg, log=lambda *_: None)
        t_again = time.perf_counter() - t0
    scored = sum(s["n_scored"] for s in again.results["scorers"])
    same = first.results["auroc"] == again.results["auroc"]
    print(f"(b) demo audit ({len(table)} pairs, scorers {', '.join(cfg.scorers)}, B={cfg.n_boot})")
    print(f"    first run   : {t_first:8.2f} s")
    print(f"    cached rerun: {t_again:8.2f} s   ({scored} pairs scored anew, identical AUROCs: {same})")
    print(f"    speed-up    : {t_first / t_again:8.1f}x")


if __name__ == "__main__":
    import argparse

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--no-audit", action="store_true", help="skip (b), the demo audit run twice")
    a = ap.parse_args()
    ratio = bench_bootstrap(a.n, a.n_boot)
    if not a.no_audit:
        bench_cached_rerun()
    print(f"ratio: {ratio:.1f}")
