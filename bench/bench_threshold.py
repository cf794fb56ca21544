"""Threshold and calibration statistics vectorised vs the obvious loops, side by side in one run.

    python bench/bench_threshold.py [n_pairs] [n_boot]

Three workloads on one clustered, weighted slice (pairs in groups of 4):
- the LTT scan: risk and p-value of every candidate threshold (tail sums) vs one threshold at a time (pairs);
- gate rates of 5 thresholds with a clustered bootstrap (per-cluster sums, one product) vs one resample at a time;
- ECE with a clustered bootstrap vs one resample at a time.
Each pair must agree exactly (the loops replay the same cluster draws). Last line: `ratio: X` (loops over vectorised).
"""
from __future__ import annotations

import sys
import time

import numpy as np
from scipy import stats as sps

from attrib_audit.stats.bootstrap import cluster_count_blocks
from attrib_audit.stats.calibration import bin_edges, reliability
from attrib_audit.stats.threshold import Target, certify, gate_rates
from attrib_audit.stats.types import LabelledScores


def loop_scan(s, y, alpha):
    """Per candidate threshold: the false-pass share and its binomial p-value."""
    neg = y == 0
    out = []
    for t in np.unique(s)[::-1]:
        k = int((neg & (s >= t)).sum())
        out.append((k / neg.sum(), sps.binom.cdf(k, neg.sum(), alpha)))
    return out


def loop_rates(s, y, w, codes, ts, counts):
    """Per resample: row multiplicities from the cluster counts, then each threshold's false-pass and precision."""
    out = np.empty((counts.shape[0], len(ts), 2))
    for b in range(counts.shape[0]):
        m = w * counts[b, codes]
        for j, t in enumerate(ts):
            passed = s >= t
            out[b, j] = m[passed & (y == 0)].sum() / m[y == 0].sum(), m[passed & (y == 1)].sum() / m[passed].sum()
    return out


def loop_ece(s, y, w, codes, counts):
    edges = bin_edges(s)
    idx = np.searchsorted(edges[1:-1], s)
    out = np.empty(counts.shape[0])
    for b in range(counts.shape[0]):
        m = w * counts[b, codes]
        out[b] = sum(abs((m[idx == k] * (y[idx == k] - s[idx == k])).sum()) for k in range(10)) / m.sum()
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    n_boot = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    rng = np.random.default_rng(0)
    y = (rng.random(n) < 0.5).astype(np.int64)
    s = 1.0 / (1.0 + np.exp(-(2.0 * y - 1.0 + rng.standard_normal(n))))
    groups = np.arange(n) // 4
    data = LabelledScores(s, y, groups, rng.uniform(1.0, 3.0, n))
    codes, w = data.codes, data.w
    ts = list(np.quantile(s, [0.3, 0.4, 0.5, 0.6, 0.7]))
    k = int(codes.max()) + 1
    counts = np.vstack(list(cluster_count_blocks(k, n_boot, np.random.default_rng(1))))

    t0 = time.perf_counter()
    cert = certify(LabelledScores(s, y), Target("false_pass", 0.1))
    t1 = time.perf_counter()
    scan = np.array(loop_scan(s, y, 0.1))
    t2 = time.perf_counter()
    assert np.allclose(cert.scan.risk, scan[:, 0]) and np.allclose(cert.scan.p_values, scan[:, 1])

    rates = gate_rates(data, ts, n_boot=n_boot, rng=np.random.default_rng(1))
    t3 = time.perf_counter()
    slow = loop_rates(s, y, w, codes, ts, counts)
    t4 = time.perf_counter()
    for j, r in enumerate(rates):
        assert np.isclose(r.false_pass.ci_low, np.quantile(slow[:, j, 0], 0.025))
        assert np.isclose(r.precision.ci_high, np.quantile(slow[:, j, 1], 0.975))

    rel = reliability(data, n_boot=n_boot, rng=np.random.default_rng(1))
    t5 = time.perf_counter()
    eces = loop_ece(s, y, w, codes, counts)
    t6 = time.perf_counter()
    assert np.isclose(rel.ece.ci_low, np.quantile(eces, 0.025)) and np.isclose(rel.ece.ci_high,
                                                                               np.quantile(eces, 0.975))

    fast, loops = (t1 - t0) + (t3 - t2) + (t5 - t4), (t2 - t1) + (t4 - t3) + (t6 - t5)
    print(f"n={n} pairs in {k} groups, weighted, B={n_boot}")
    print(f"  LTT scan over {cert.candidates} thresholds: vectorised {t1 - t0:.3f} s, loop {t2 - t1:.3f} s")
    print(f"  5 gates' rates, clustered bootstrap: vectorised {t3 - t2:.3f} s, loop {t4 - t3:.3f} s")
    print(f"  ECE, clustered bootstrap: vectorised {t5 - t4:.3f} s, loop {t6 - t5:.3f} s (identical answers)")
    print(f"ratio: {loops / fast:.1f}")


if __name__ == "__main__":
    main()
