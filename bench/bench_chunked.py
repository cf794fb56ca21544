"""Chunked scoring: every window of every pair in one encoder call vs one call per pair.

minilm-chunk on the demo's AttributionBench pairs (long evidence: LFQA, Stanford-GenSearch),
(a) as shipped: claims + all windows deduplicated, one `encode` that length-sorts its batches;
(b) the naive loop: `score` called pair by pair (one small encode per pair).
Both give the same scores (checked); the ratio is the point.

Run: python bench/bench_chunked.py [n_pairs]
"""
from __future__ import annotations

import sys
import time

import numpy as np


def main() -> None:
    from attrib_audit.data import load_demo
    from attrib_audit.scorers import get_scorer

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    demo = load_demo()
    table = demo.take([i for i, r in enumerate(demo.records()) if r.dataset == "attributionbench"][:n])
    scorer = get_scorer("minilm-chunk")
    scorer.score(table.claims[:2], table.evidences[:2])  # warm up
    t0 = time.perf_counter()
    batched = scorer.score(table.claims, table.evidences)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    looped = np.concatenate([scorer.score([c], [e]).scores for c, e in zip(table.claims, table.evidences)])
    t_loop = time.perf_counter() - t0
    np.testing.assert_allclose(batched.scores, looped, atol=1e-5)
    print(f"minilm-chunk, {len(table)} pairs, {int(batched.chunks.sum())} windows: one call {t_batched:.2f} s, "
          f"per pair {t_loop:.2f} s ({t_loop / t_batched:.1f}x)")


if __name__ == "__main__":
    main()
