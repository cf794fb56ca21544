"""Stream-score 1,000,000 lexical pairs from Parquet: peak RSS and pairs/s, beside the obvious baselines.

Each mode runs in a fresh subprocess so its peak RSS (ru_maxrss) is its own:
  stream-rows      baseline: the streaming path as it was, every row validated in Python
                   (`rows_to_records`) and the garbage collector running automatically; no cache
  stream-nocache   streaming `score` path, no cache (read + column-wise validate + score + write)
  stream-cold      same with an empty SQLite cache (adds sha256 per pair and the inserts)
  stream-warm      rerun on the filled cache (hash + lookup, nothing scored)
  inmemory         load_pairs of the whole file, then score (the non-streaming baseline; --inmemory)
and, in this process, the scorer alone on the first 200,000 pairs: LexicalScorer vs the plain
Python loop (lower + re.findall + set Jaccard) it replaced, and pair_key hashing alone.

    python bench/bench_streaming.py [--rows 1000000] [--chunk-rows 16384] [--inmemory]

Last line: `pairs_per_s: X`, the slowest of the three streaming modes (nocache, cold, warm).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SRC = str(Path(__file__).resolve().parents[1] / "src")
sys.path.insert(0, SRC)


def make_parquet(path: Path, rows: int, seed: int = 0, chunk: int = 100_000) -> None:
    """Synthetic pairs: ~18-word claims, ~70-word evidence from a 5,000-word vocabulary, some shared words."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(5000)] + ["The", "Paris", "born", "in", "1990,", "won", "award."])
    writer = None
    for start in range(0, rows, chunk):
        n = min(chunk, rows - start)
        ev = rng.integers(0, vocab.size, size=(n, 70))
        cl = np.where(rng.random((n, 18)) < 0.5, ev[:, :18], rng.integers(0, vocab.size, size=(n, 18)))
        claims = [" ".join(r) for r in vocab[cl]]
        evidence = [" ".join(r) for r in vocab[ev]]
        t = pa.table({"id": [f"p{start + i}" for i in range(n)], "dataset": ["synthetic"] * n,
                      "claim": claims, "evidence": evidence, "label": rng.integers(0, 2, n)})
        writer = writer or pq.ParquetWriter(path, t.schema)
        writer.write_table(t)
    writer.close()


def child(mode: str, data: str, out: str, cache: str | None, chunk_rows: int) -> None:
    from attrib_audit.data import load_pairs
    from attrib_audit.engine import ScoreCache, score_pairs
    from attrib_audit.engine.stream import stream_score
    from attrib_audit.scorers import get_scorer

    scorer = get_scorer("lexical")
    if mode == "stream-rows":
        import contextlib

        from attrib_audit.engine import stream

        stream.batch_to_table = lambda *a, **k: None  # every batch takes the row-by-row path
        stream._paused_gc = contextlib.nullcontext  # and the collector runs as it did
    t0 = time.perf_counter()
    if mode == "inmemory":
        table = load_pairs([data])
        batch, st = score_pairs(scorer, table.claims, table.evidences, cache=None, quiet=True)
        n, stats = len(table), [st]
    else:
        c = ScoreCache(cache) if cache else None
        res = stream_score([data], {"lexical": scorer}, out, cache=c, chunk_rows=chunk_rows)
        n, stats = res.n_rows, res.stats
        if c:
            c.close()
    dt = time.perf_counter() - t0
    print(json.dumps({"mode": mode, "n": n, "seconds": dt, "pairs_per_s": n / dt,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "scored": stats[0].n_scored, "cached": stats[0].n_cached}))


def run_child(mode: str, data: Path, work: Path, chunk_rows: int, cache: Path | None) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--data", str(data), "--out", str(work / f"{mode}.parquet"),
           "--chunk-rows", str(chunk_rows)] + (["--cache", str(cache)] if cache else [])
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def scorer_alone(data: Path, n: int) -> None:
    import pyarrow.parquet as pq

    from attrib_audit.engine.cache import pair_key
    from attrib_audit.scorers.lexical import LexicalScorer

    t = pq.ParquetFile(data).iter_batches(batch_size=n, columns=["claim", "evidence"])
    b = next(t)
    claims, evs = b.column("claim").to_pylist(), b.column("evidence").to_pylist()
    token = re.compile(r"\w+")

    def plain(cs, es):
        out = np.empty(len(cs))
        for i, (c, e) in enumerate(zip(cs, es)):
            a, bb = set(token.findall(c.lower())), set(token.findall(e.lower()))
            u = len(a | bb)
            out[i] = len(a & bb) / u if u else 0.0
        return out

    t0 = time.perf_counter()
    ref = plain(claims, evs)
    t_plain = time.perf_counter() - t0
    sc = LexicalScorer()
    t0 = time.perf_counter()
    fast = np.concatenate([sc.score(claims[i:i + 4096], evs[i:i + 4096]).scores for i in range(0, n, 4096)])
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    for c, e in zip(claims, evs):
        pair_key(c, e)
    t_hash = time.perf_counter() - t0
    assert np.array_equal(ref, fast), "LexicalScorer differs from the plain loop"
    print(f"scorer alone on {n:,} pairs (one process): plain loop {n / t_plain:,.0f} pairs/s, "
          f"LexicalScorer {n / t_fast:,.0f} pairs/s ({t_plain / t_fast:.2f}x), identical scores; "
          f"pair_key hashing alone {n / t_hash:,.0f} pairs/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--chunk-rows", type=int, default=16_384)
    ap.add_argument("--inmemory", action="store_true", help="also run the load-everything baseline")
    ap.add_argument("--child"), ap.add_argument("--data"), ap.add_argument("--out"), ap.add_argument("--cache")
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.data, a.out, a.cache, a.chunk_rows)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "pairs.parquet"
        t0 = time.perf_counter()
        make_parquet(data, a.rows)
        print(f"{a.rows:,} pairs -> {data.stat().st_size / 2**20:.0f} MiB Parquet in {time.perf_counter() - t0:.1f}s; "
              f"{os.cpu_count()} CPUs; chunk {a.chunk_rows:,} rows")
        scorer_alone(data, min(200_000, a.rows))
        cache = work / "cache.sqlite"
        modes = [("stream-rows", None), ("stream-nocache", None), ("stream-cold", cache), ("stream-warm", cache)]
        if a.inmemory:
            modes.append(("inmemory", None))
        rate = {}
        for mode, c in modes:
            r = run_child(mode, data, work, a.chunk_rows, c)
            rate[mode] = r["pairs_per_s"]
            print(f"{mode:<15} {r['n']:>9,} pairs  {r['seconds']:7.1f}s  {r['pairs_per_s']:>9,.0f} pairs/s  "
                  f"peak RSS {r['peak_rss_mib']:7.0f} MiB  scored {r['scored']:,} cached {r['cached']:,}")
        print(f"stream-nocache vs stream-rows (same run): {rate['stream-nocache'] / rate['stream-rows']:.2f}x; "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"pairs_per_s: {min(rate['stream-nocache'], rate['stream-cold'], rate['stream-warm']):.0f}")


if __name__ == "__main__":
    main()
