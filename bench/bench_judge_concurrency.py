"""Judge throughput at concurrency 1 vs 4, measured side by side in one run.

(a) a real `python -m llama_cpp.server` with SmolLM2-135M on 127.0.0.1 (compute-bound: that
    server runs one completion at a time, so overlap can only hide HTTP and queueing time);
(b) a local OpenAI-compatible server with a fixed 0.2 s latency per reply, standing in for a
    remote API whose time is spent waiting (there, overlap is the whole gain);
(c) the cached rerun: the same pairs answered from the SQLite request cache.

Run: python bench/bench_judge_concurrency.py [N_PAIRS]
Last line: `ratio: X`, pairs/s at concurrency 4 over concurrency 1 against the latency server (b).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from attrib_audit.scorers.judge.models import smollm2_gguf_path  # noqa: E402
from attrib_audit.scorers.judge.scorer import build_judge  # noqa: E402
from judge_servers import RuleServer, llama_server  # noqa: E402


def demo_pairs(n: int) -> tuple[list[str], list[str], list[str | None]]:
    from attrib_audit.data import load_demo

    t = load_demo()
    return t.claims[:n], t.evidences[:n], t.questions[:n]


def pairs_per_s(url: str, claims, evidences, questions, concurrency: int, cache: str | None = None) -> float:
    judge = build_judge("graded", "judge", url=url, model="bench", concurrency=concurrency, request_cache=cache,
                        timeout=300)
    t0 = time.perf_counter()
    batch = judge.score(claims, evidences, questions=questions)
    dt = time.perf_counter() - t0
    assert len(batch) == len(claims)
    return len(claims) / dt


def compare(label: str, url: str, claims, evidences, questions) -> float:
    one = pairs_per_s(url, claims, evidences, questions, 1)
    four = pairs_per_s(url, claims, evidences, questions, 4)
    print(f"{label}  ({len(claims)} pairs)")
    print(f"    concurrency 1: {one:8.2f} pairs/s")
    print(f"    concurrency 4: {four:8.2f} pairs/s")
    print(f"    ratio 4 vs 1 : {four / one:8.2f}x")
    return four / one


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    claims, evidences, questions = demo_pairs(n)
    with llama_server(smollm2_gguf_path()) as url:
        pairs_per_s(url, claims[:1], evidences[:1], questions[:1], 1)  # warm-up: first request maps the weights
        compare("(a) llama_cpp.server, SmolLM2-135M Q4_1, 1 thread", url, claims, evidences, questions)
    with RuleServer(delay_s=0.2) as server:
        slow = [c + " [slow]" for c in claims]
        ratio = compare("(b) local server with 0.2 s latency per reply", server.url, slow, evidences, questions)
        with tempfile.TemporaryDirectory() as tmp:
            cache = os.path.join(tmp, "req.sqlite")
            cold = pairs_per_s(server.url, slow, evidences, questions, 4, cache)
            hot = pairs_per_s(server.url, slow, evidences, questions, 4, cache)
        print("(c) request cache, concurrency 4, latency server")
        print(f"    first run    : {cold:8.2f} pairs/s")
        print(f"    cached rerun : {hot:8.2f} pairs/s   ({hot / cold:.0f}x)")
    print(f"ratio: {ratio:.2f}")


if __name__ == "__main__":
    main()
