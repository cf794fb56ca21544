"""System-level statistics on SummEval (16 systems × 100 articles, 4 metrics): vectorised vs the obvious loop.

    python bench/bench_systems.py [n_boot]

1. The joint input bootstrap of every system's rates and means plus each metric's τ-b, pairwise
   accuracy, acc_eq, Pearson r and the label-noise ceiling (`system_bootstrap` + `agreement_replicates`),
   against a loop that rebuilds each resample's rows and calls scipy per metric, on the same draws
   (the replicates are checked to be identical).
2. The whole system-level section (`summarise_systems`: per-system table, agreement for mean scores
   and pass rates, metric-vs-metric differences, reversals, clusters), timed alone.
Last line: `ratio: X` (loop time over vectorised time for part 1).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as sps

from attrib_audit.stats.systems import agreement_replicates, summarise_systems, system_bootstrap

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "summeval_system_scores.jsonl"
METRICS = ("lexical", "minilm", "blend", "bertscore")


def load() -> dict[str, np.ndarray]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    return {key: np.array([r[key] for r in rows]) for key in ("system", "group", "label", *METRICS)}


def pair_accuracies(h: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    """Pairwise accuracy (human-tied pairs left out, metric ties ½) and acc_eq, over all system pairs."""
    i, j = np.triu_indices(h.size, 1)
    sh, sx = np.sign(h[i] - h[j]), np.sign(x[i] - x[j])
    ordered = sh != 0
    acc = ((sx == sh) + 0.5 * (sx == 0))[ordered].mean() if ordered.any() else np.nan
    return float(acc), float((sx == sh).mean())


def loop_baseline(d: dict[str, np.ndarray], n_boot: int, seed: int) -> dict[str, np.ndarray]:
    """One resample at a time: draw articles, gather their rows, per-system means, scipy per metric."""
    rng = np.random.default_rng(seed)
    groups, g_codes = np.unique(d["group"], return_inverse=True)
    systems, s_codes = np.unique(d["system"], return_inverse=True)
    k, s = groups.size, systems.size
    rows_of = [np.flatnonzero(g_codes == g) for g in range(k)]
    values = np.vstack([d["label"]] + [d[m] for m in METRICS]).astype(np.float64)
    observed = np.bincount(s_codes, weights=values[0], minlength=s) / np.bincount(s_codes, minlength=s)
    out = {key: np.empty((len(METRICS), n_boot)) for key in ("tau", "pairwise_accuracy", "acc_eq", "pearson")}
    out.update({f"ceiling_{key}": np.empty(n_boot) for key in ("tau", "pairwise_accuracy", "acc_eq")})
    out["rates"] = np.empty((values.shape[0], s, n_boot))
    for b in range(n_boot):
        idx = np.concatenate([rows_of[g] for g in rng.integers(0, k, size=k)])
        counts = np.bincount(s_codes[idx], minlength=s)
        rates = np.array([np.bincount(s_codes[idx], weights=v[idx], minlength=s) / counts for v in values])
        out["rates"][:, :, b] = rates
        h = rates[0]
        for q in range(len(METRICS)):
            x = rates[1 + q]
            out["tau"][q, b] = sps.kendalltau(h, x).statistic
            out["pairwise_accuracy"][q, b], out["acc_eq"][q, b] = pair_accuracies(h, x)
            out["pearson"][q, b] = sps.pearsonr(h, x).statistic
        out["ceiling_tau"][b] = sps.kendalltau(h, observed).statistic
        out["ceiling_pairwise_accuracy"][b], out["ceiling_acc_eq"][b] = pair_accuracies(h, observed)
    return out


def vectorised(d: dict[str, np.ndarray], n_boot: int, seed: int):
    res = system_bootstrap(d["label"], {m: d[m] for m in METRICS}, d["system"], d["group"], n_boot=n_boot, rng=seed)
    return res, agreement_replicates(res, "mean")


def main() -> None:
    n_boot = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    d = load()
    vectorised(d, 20, 0)  # warm-up: imports and first-call allocations are not the statistics
    t0 = time.perf_counter()
    res, agr = vectorised(d, n_boot, 1)
    t1 = time.perf_counter()
    slow = loop_baseline(d, n_boot, 1)
    t2 = time.perf_counter()
    np.testing.assert_allclose(res.replicates[:1 + len(METRICS)], slow["rates"], rtol=1e-12)
    for key, value in agr.replicates.items():
        np.testing.assert_allclose(value, slow[key], atol=1e-10, equal_nan=True)
    for key, value in agr.ceiling.items():
        np.testing.assert_allclose(value, slow[f"ceiling_{key}"], atol=1e-10, equal_nan=True)
    fast_s, loop_s = t1 - t0, t2 - t1

    # the whole section, with label-free pass thresholds (each metric's median score) so both summaries run
    thresholds = {m: float(np.median(d[m])) for m in METRICS}
    t3 = time.perf_counter()
    full = summarise_systems(system_bootstrap(d["label"], {m: d[m] for m in METRICS}, d["system"], d["group"],
                                              thresholds=thresholds, n_boot=n_boot, rng=1))
    t4 = time.perf_counter()
    print(f"SummEval {len(res.systems)} systems × {res.design.n_used} articles, {len(METRICS)} metrics, B={n_boot}")
    print(f"bootstrap + agreement (mean scores): vectorised {fast_s:.3f} s, loop {loop_s:.3f} s "
          f"(identical replicates)")
    print(f"whole system-level section (mean + pass summaries, {len(full.differences)} metric pairs, "
          f"{len(full.reversals)} reversals, clusters): {t4 - t3:.3f} s")
    print(f"ratio: {loop_s / fast_s:.1f}")


if __name__ == "__main__":
    main()
