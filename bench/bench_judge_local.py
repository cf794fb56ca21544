"""The local judge before and after, measured side by side in one run (the same prompt on every side):
  old, no prefix cache   llama.cpp's default threads, the context reset before every prompt
  old path               as the code ran before: one pair at a time in the engine's order, default
                         threads; llama-cpp-python already reused whatever prefix a prompt shared with
                         the previous one (the system line; question and evidence when consecutive
                         pairs happened to share them)
  new                    a fixed shared prefix (template opening and system line) evaluated once and
                         kept, never more (so no answer depends on the pair before), load-aware threads

Both sides judge the same seeded subset of the demo's AttributionBench half, in the engine's order
(longest pair first), interleaved in chunks so a change in machine load hits both alike. Reports seconds
per pair, prefill and decode tokens/s (llama.cpp's own counters), tokens prefilled per pair, and the
AUROC of each side on the subset (pairs whose answer did not parse are left out, as in the audit).

Run: PYTHONPATH=src python bench/bench_judge_local.py [--pairs 20] [--kinds graded,label] [--seed 0]
Needs `attrib-audit models install judge` (or --gguf PATH).
Last line: `ratio: X`, s/pair of "old, no prefix cache" ÷ s/pair of "new" (the smaller over the kinds).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from attrib_audit.data import load_demo
from attrib_audit.scorers.judge.backends import Decoding, LlamaCppBackend
from attrib_audit.scorers.judge.models import resolve_judge
from attrib_audit.scorers.judge.prompts import PROMPTS
from attrib_audit.scorers.judge.scorer import JudgeScorer, build_judge
from attrib_audit.stats.auroc import auroc


class OldPath:
    """The judge as it ran before: v1 prompt, one prompt at a time, llama.cpp's default thread counts."""

    def __init__(self, kind: str, path: str, prefix_cache: bool) -> None:
        import llama_cpp

        backend = LlamaCppBackend(path, Decoding(), prefix_cache=prefix_cache)  # llama.cpp's default threads:
        backend._llm = llama_cpp.Llama(model_path=path, n_ctx=2048, seed=0, verbose=False)
        self.judge = JudgeScorer(f"old-{kind}", PROMPTS[kind], backend)
        self.judge.batch_size = 8

    def score(self, claims, evidences, questions) -> np.ndarray:
        # the old scorer kept the engine's order within a batch: one pair at a time does the same
        return np.concatenate([self.judge.score([c], [e], questions=[q]).scores
                               for c, e, q in zip(claims, evidences, questions)])


class Side:
    """One judge under test; llama.cpp's counters are read after every completion (it resets them per call)."""

    def __init__(self, name: str, judge) -> None:
        self.name, self.judge, self.seconds, self.scores, self.raw = name, judge, 0.0, [], []
        self.backend = judge.judge.backend if isinstance(judge, OldPath) else judge.backend
        self.perf = np.zeros(4)  # prefill s, prefill tokens, decode s, decode tokens
        complete = self.backend.complete

        def counters() -> np.ndarray:  # cumulative since the context was made (verbose=False never resets them)
            import llama_cpp

            d = llama_cpp.llama_perf_context(self.backend._model()._ctx.ctx)
            return np.array([d.t_p_eval_ms / 1e3, d.n_p_eval, d.t_eval_ms / 1e3, d.n_eval])

        def counted(messages):
            before = counters()
            reply = complete(messages)
            self.perf += counters() - before
            self.raw.append(reply.text)
            return reply

        self.backend.complete = counted

    def run(self, claims, evidences, questions) -> None:
        t0 = time.perf_counter()
        self.scores.append(np.asarray(self.judge.score(claims, evidences, questions) if isinstance(self.judge, OldPath)
                                      else self.judge.score(claims, evidences, questions=questions).scores))
        self.seconds += time.perf_counter() - t0

    def reset(self) -> None:
        self.seconds, self.scores, self.raw, self.perf = 0.0, [], [], np.zeros(4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--kinds", default="graded,label")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=5, help="pairs per interleaved chunk")
    ap.add_argument("--gguf", default=None)
    ap.add_argument("--no-old-path", action="store_true", help="time only the no-cache baseline and the new path")
    a = ap.parse_args()
    path = resolve_judge(a.gguf).location
    table = load_demo()
    ab = np.flatnonzero(np.array(table.datasets) == "attributionbench")
    pick = np.random.default_rng(a.seed).choice(ab, size=min(a.pairs, ab.size), replace=False)
    pick = sorted(pick, key=lambda i: -(len(table.claims[i]) + len(table.evidences[i])))  # the engine's order
    claims, evs = [table.claims[i] for i in pick], [table.evidences[i] for i in pick]
    qs, labels = [table.questions[i] for i in pick], table.labels[pick]
    print(f"{len(pick)} seeded pairs (seed {a.seed}) of the demo AttributionBench half; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at start (machine shared, not idle)")
    ratios = []
    for kind in a.kinds.split(","):
        base = Side("old, no prefix cache", OldPath(kind, path, prefix_cache=False))
        old = Side("old path", OldPath(kind, path, prefix_cache=True))
        new = Side("new", build_judge(kind, f"new-{kind}", path=path, request_cache=None))
        sides = (base, new) if a.no_old_path else (base, old, new)
        for side in sides:  # warm-up: map the weights, fill the shared prefix once
            side.run(claims[:1], evs[:1], qs[:1])
            side.reset()
        for s in range(0, len(pick), a.chunk):
            for side in sides:
                side.run(claims[s:s + a.chunk], evs[s:s + a.chunk], qs[s:s + a.chunk])
        print(f"[{kind}]")
        for side in sides:
            tp, npf, te, nd = side.perf
            scores = np.concatenate(side.scores)
            ok = ~np.isnan(scores)
            auc = auroc(scores[ok], labels[ok]) if 0 < labels[ok].sum() < ok.sum() else float("nan")
            print(f"  {side.name:<21} {side.seconds / len(pick):6.2f} s/pair; prefill {npf / len(pick):5.0f} tok/pair "
                  f"at {npf / max(tp, 1e-9):6.1f} tok/s; decode {nd / len(pick):4.1f} tok/pair at "
                  f"{nd / max(te, 1e-9):5.1f} tok/s; AUROC {auc:.3f} ({ok.sum()} parsed)")
            print(f"    threads decode/prefill {side.backend._model().context_params.n_threads}/"
                  f"{side.backend._model().context_params.n_threads_batch}; first answers {side.raw[:3]}")
        ratios.append(base.seconds / new.seconds)
        vs_old = "" if a.no_old_path else f", vs old path {old.seconds / new.seconds:.2f}x"
        print(f"  s/pair ratio vs no prefix cache {ratios[-1]:.2f}x{vs_old}; load average now {os.getloadavg()[0]:.1f}")
        del base, old, new, sides
    print(f"ratio: {min(ratios):.2f}")


if __name__ == "__main__":
    main()
