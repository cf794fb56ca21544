"""Confusable-distractor search: sparse token-matrix product vs the naive all-pairs loop, side by side.

Units are sentences of the shared WiCE provenance sample (each stays in its own example, so its
example's passages are excluded as distractors); candidates are a seeded sample of all passage
texts, as the confusable test draws them. Both searches must return the same distractors.

    python bench/bench_distractors.py --units 2000 --candidates 5000 --k 5

Last line: `ratio: X` (naive loop time over sparse product time).
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from attrib_audit.provenance.corpus import Corpus
from attrib_audit.provenance.distractors import distractors_naive, find_distractors, sample_candidates
from attrib_audit.provenance.loaders import load_provenance
from attrib_audit.text.tokenize import token_set

WICE = Path("/work/shared/data/wice_provenance.jsonl")


def build(path: Path, n_units: int, seed: int) -> Corpus:
    """Examples whose units are n_units of their own passage sentences (spread over the examples)."""
    examples = load_provenance(path).examples
    rng = np.random.default_rng(seed)
    per = -(-n_units // len(examples))
    out, left = [], n_units
    for ex in examples:
        take = min(per, left, len(ex.passages))
        picks = rng.choice(len(ex.passages), size=take, replace=False) if take else []
        units = tuple(ex.passages[i].text for i in picks)
        out.append(replace(ex, units=units, citations=()))
        left -= take
    if left:
        raise SystemExit(f"only {n_units - left} units available in {path}")
    return Corpus.build([e for e in out if e.units])


def best_of(repeat: int, fn):
    """(best wall time, result) over `repeat` runs."""
    best, out = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=WICE)
    ap.add_argument("--units", type=int, default=2000)
    ap.add_argument("--candidates", type=int, default=5000, help="candidate passages (the CLI's default cap)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each search; the best time counts (shared CPUs)")
    args = ap.parse_args()

    corpus = build(args.data, args.units, args.seed)
    cand = sample_candidates(len(corpus.texts), args.candidates, np.random.default_rng(args.seed))
    print(f"{corpus.n_units} units x {cand.size} candidates ({len(corpus.texts)} distinct texts), k={args.k}")

    t_fast, (fast_idx, fast_jac) = best_of(args.repeat, lambda: find_distractors(
        corpus.unit_tokens, corpus.unit_example, corpus.text_tokens, corpus.text_owner, args.k, cand))

    # the naive loop gets its token sets and owner sets prepared outside the timed region
    unit_sets = [token_set(u) for u in corpus.unit_texts]
    text_sets = [token_set(t) for t in corpus.texts]
    owners = [set(corpus.text_owner[t].indices.tolist()) for t in range(len(corpus.texts))]
    t_slow, (slow_idx, slow_jac) = best_of(args.repeat, lambda: distractors_naive(
        unit_sets, corpus.unit_example, text_sets, owners, args.k, cand))

    same = np.array_equal(fast_idx, slow_idx) and np.allclose(fast_jac, slow_jac, atol=1e-12)
    pairs = corpus.n_units * cand.size
    print(f"sparse product : {t_fast:8.3f} s  ({pairs / t_fast / 1e6:8.1f} M pairs/s)")
    print(f"naive loop     : {t_slow:8.3f} s  ({pairs / t_slow / 1e6:8.1f} M pairs/s)")
    print(f"speed-up       : {t_slow / t_fast:8.1f}x (best of {args.repeat} each)   identical distractors: {same}")
    print(f"ratio: {t_slow / t_fast:.1f}")
    if not same:
        raise SystemExit("the two searches disagree")


if __name__ == "__main__":
    main()
