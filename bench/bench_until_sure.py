"""Label until sure on the shared human-labelled files: labels to a decision, uniform vs active vs the fixed plan.

For each pool (every AttributionBench source, all of AttributionBench, WiCE, BEGIN; labels hidden behind
`--oracle`) this runs the real command `label POOL --until-sure --metrics lexical,minilm,bertscore --proxy blend
--oracle POOL` once (which scores the pool through the engine and its cache and stores the session), then replays
`--seeds` more sessions per design from the stored scores with the same code (`Session`, `run_oracle`). It compares
the decisions with the full-data best (and whether the full data separate the metrics: the paired bootstrap CI of
best − runner-up excludes 0), and the labels with the fixed uniform sample the same claim needs
(`fixed_sample_size`, sized with the pool's true AUROCs: the most favourable fixed plan), both as `plan` sizes
it (no finite-population correction; none when the pool is too small) and with the correction a sample drawn
without replacement from the pool earns. Then the per-label update time on a 10k-pair pool with 4 metrics.

    python bench/bench_until_sure.py [--data ../shared/data] [--seeds 20] [--budget 400]

Ends with `ratio: X` = median over pools with a finite plan of (active median labels ÷ fixed plan size, as `plan`
sizes it); the target is ≤ 0.6.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from attrib_audit.cli import main as cli
from attrib_audit.stats.auroc import auroc
from attrib_audit.stats.bootstrap import paired_auroc_difference
from attrib_audit.stats.until_sure import Session, Settings, fixed_sample_size, run_oracle
from attrib_audit.validate.store import store_path
from attrib_audit.validate.until_sure import FlipLog

METRICS = "lexical,minilm,bertscore"
DELTA, ALPHA = 0.02, 0.05


def pools(data: Path, out: Path) -> list[Path]:
    """One JSONL per AttributionBench source, plus WiCE and BEGIN whole."""
    made = []
    rows = [json.loads(line) for line in (data / "attributionbench_id.jsonl").read_text().splitlines()]
    for src in sorted({r["source"] for r in rows}):
        p = out / f"ab-{src}.jsonl"
        p.write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] == src))
        made.append(p)
    p = out / "ab-all.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    made.append(p)
    for name in ("wice.jsonl", "begin_wow.jsonl"):
        p = out / name
        p.write_text((data / name).read_text())
        made.append(p)
    return made


def run_cli(*argv: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli(list(argv))
    if code:
        raise SystemExit(f"attrib-audit {' '.join(argv)} failed ({code})")
    return buf.getvalue()


def update_time(n: int = 10_000, k: int = 4, labels: int = 200) -> float:
    """Median ms of one update after a label (estimates, anytime intervals, next proposal) at `labels` labels."""
    rng = np.random.default_rng(0)
    y = (rng.random(n) < 0.4).astype(int)
    scores = y * np.linspace(0.6, 1.2, k)[:, None] + rng.normal(size=(k, n))
    p_hat = 1 / (1 + np.exp(-(2.0 * y - 1 + rng.normal(size=n))))
    s = Session(tuple(f"m{i}" for i in range(k)), scores, p_hat, Settings(budget=5 * labels, seed=0, alpha=1e-6))
    times = []
    while len(s.rows) < labels:
        flip = s.flip()
        if flip is None:
            break
        if flip.shown:
            t0 = time.perf_counter()
            s.record(int(y[flip.row]))
            while (nxt := s.flip()) is not None and not nxt.shown:  # the next proposal: walk to the next shown pair
                pass
            times.append(time.perf_counter() - t0)
            if nxt is not None:
                s.record(int(y[nxt.row]), refresh=False)
    return 1000 * float(np.median(times[-50:]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budget", type=int, default=400)
    args = ap.parse_args()
    ratios, ratios_fpc = [], []
    print(f"metrics {METRICS}; proxy blend; δ {DELTA}, α {ALPHA}, budget {args.budget}; {args.seeds} sessions per "
          "design\n")
    header = (f"{'pool':<26} {'n':>4} {'full-data best':<16} {'sep':>4} {'cli: decision, labels':<28} "
              f"{'uniform med':>11} {'active med':>10} {'fixed':>6} {'fpc':>4} {'active decisions':<26}")
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for pool in pools(Path(args.data), Path(tmp)):
            out = run_cli("label", str(pool), "--until-sure", "--metrics", METRICS, "--proxy", "blend",
                          "--budget", str(args.budget), "--seed", "0", "--oracle", str(pool), "--quiet")
            decision = out.split("decision: ")[1].splitlines()[0]
            used = int(out.split("labels used: ")[1].split()[0])
            log = FlipLog(store_path(pool))
            saved = log.get("scores")
            names = tuple(saved["names"])
            scores, p_hat = np.asarray(saved["scores"]), np.asarray(saved["p_hat"])
            ids = [json.loads(line)["id"] for line in pool.read_text().splitlines()]
            labels = {json.loads(line)["id"]: int(json.loads(line)["label"]) for line in pool.read_text().splitlines()}
            y = np.array([labels[i] for i in ids])
            true = np.array([auroc(s, y) for s in scores])
            best = int(np.argmax(true))
            runner = int(np.argsort(true)[-2])
            groups = [json.loads(line).get("group") or i for i, line in enumerate(pool.read_text().splitlines())]
            diff = paired_auroc_difference(scores[best], scores[runner], y, groups, n_boot=1000, seed=0)
            separated = diff.ci_low > 0
            arms = {}
            for active in (False, True):
                runs = [run_oracle(Session(names, scores, p_hat,
                                           Settings(delta=DELTA, alpha=ALPHA, budget=args.budget, active=active,
                                                    seed=seed)), y) for seed in range(args.seeds)]
                arms[active] = runs
            med = {a: float(np.median([r.n_labels for r in runs if r is not None])) for a, runs in arms.items()}
            kinds: dict[str, int] = {}
            for r in arms[True]:
                if r is None:
                    continue
                key = r.decision.kind + (f" {names[r.decision.best]}" if r.decision.kind == "best" else "")
                kinds[key] = kinds.get(key, 0) + 1
            fixed = fixed_sample_size(scores, y, DELTA, ALPHA)
            fixed_txt = str(fixed) if fixed is not None else f">{y.size}"
            fpc = fixed_sample_size(scores, y, DELTA, ALPHA, finite_pool=True)
            assert fpc is not None
            ratios_fpc.append(med[True] / fpc)
            if fixed is not None:
                ratios.append(med[True] / fixed)
            short = decision.replace(" is the best for this data within 0.02 AUROC, at confidence 95%", " best")
            short = "no decision (budget/pool spent)" if short.startswith("budget") else short.split(":")[0]
            best_txt = names[best] + f" {true[best]:.3f}"
            print(f"{pool.stem:<26} {y.size:>4} {best_txt:<16} {'yes' if separated else 'no':>4} "
                  f"{short + f', {used}':<28} {med[False]:>11.0f} {med[True]:>10.0f} {fixed_txt:>6} {fpc:>4} "
                  f"{', '.join(f'{k} {v}' for k, v in sorted(kinds.items())):<26}")
            wrong = [r for r in arms[True] if r is not None and r.decision.kind == "best"
                     and true[r.decision.best] < true.max() - DELTA]
            if wrong:
                print(f"  note: {len(wrong)} active session(s) declared a metric more than δ behind the full-data best")
    ms = update_time()
    print(f"\nper-label update (estimates, anytime intervals, next proposal), 10k pairs, 4 metrics: {ms:.1f} ms "
          "(target < 200 ms)")
    print(f"active labels ÷ fixed sample with the finite-population correction, per pool: "
          f"{', '.join(f'{r:.2f}' for r in ratios_fpc)} (median {float(np.median(ratios_fpc)):.2f})")
    if ratios:
        print(f"active labels ÷ fixed plan, per pool with a finite fixed plan: "
              f"{', '.join(f'{r:.2f}' for r in ratios)}")
        print(f"ratio: {float(np.median(ratios)):.2f}")
    else:
        print("no pool has a fixed plan the pool can fill; ratio undefined")
        print("ratio: nan")


if __name__ == "__main__":
    main()
