"""Loading a 100k-row JSONL file in our pair schema (`data.sources.load_data`, as the audit calls it): the Arrow
reading against the per-line reader it falls back to, side by side.

Each load runs in a fresh subprocess (so its peak RSS is its own), timed twice over: from the first import, so
module imports (pyarrow) count, and with pyarrow and pandas imported beforehand, as an audit imports them anyway
to write scores.parquet. The rows are bench_audit_100k.py's (the shared AttributionBench sample resampled to N
distinct pairs). Both modes must give the same table (a digest over every column) or the bench fails.

    python bench/bench_load_jsonl.py [--rows 100000] [--repeat 3] [--data FILE.jsonl]

Last line: `ratio: X`, per-line seconds / Arrow seconds from a fresh interpreter (best of --repeat, alternated).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_audit_100k import DATA, synthesise  # noqa: E402  (the same rows as the 100k audit bench)

SRC = str(Path(__file__).resolve().parents[1] / "src")
MODES = ("per-line", "arrow")


def child(mode: str, data: str, libs: bool) -> None:
    import time

    if libs:
        import pandas  # noqa: F401
        import pyarrow.compute  # noqa: F401
        import pyarrow.json  # noqa: F401
    t0, c0 = time.perf_counter(), os.times()
    import hashlib
    import resource

    sys.path.insert(0, SRC)
    from attrib_audit.data import loaders
    from attrib_audit.data.sources import DataSpec, FileSource, load_data
    from attrib_audit.files.records import to_record

    if mode == "per-line":
        loaders.plain_jsonl_table = lambda data: None  # every file takes the per-line reader
    table = load_data(DataSpec(files=(FileSource(path=data),), construct="attribution"))
    seconds, c1 = time.perf_counter() - t0, os.times()
    h = hashlib.sha256()
    for name in ("ids", "datasets", "claims", "evidences", "sources", "questions", "groups", "constructs", "systems"):
        h.update(json.dumps(getattr(table, name)).encode())
    h.update(table.labels.tobytes() + json.dumps(to_record(table.origin), sort_keys=True).encode())
    print(json.dumps({"seconds": seconds, "cpu": c1.user + c1.system - c0.user - c0.system,
                      "rows": len(table), "digest": h.hexdigest(),
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def run_child(mode: str, libs: bool, data: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, "--file", str(data)] + (["--libs"] if libs else [])
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=DATA, help="labelled rows to resample (default: the shared sample)")
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--file", help=argparse.SUPPRESS)
    ap.add_argument("--libs", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.file, a.libs)
        return
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        data = Path(tmp) / f"attributionbench_{a.rows}.jsonl"
        synthesise(a.data, a.rows, data)
        print(f"{a.rows} rows, {data.stat().st_size / 2**20:.0f} MiB of JSONL")
        runs: dict[tuple[str, bool], list[dict]] = {(m, libs): [] for m in MODES for libs in (False, True)}
        for _ in range(a.repeat):
            for key in runs:
                runs[key].append(run_child(*key, data))
    if len({r["digest"] for rs in runs.values() for r in rs}) != 1:
        sys.exit("the two readings gave different tables")
    best = {key: min(r["seconds"] for r in rs) for key, rs in runs.items()}
    cpu = {key: min(r["cpu"] for r in rs) for key, rs in runs.items()}
    print(f"load_data, best of {a.repeat} (wall / CPU):  fresh interpreter   pyarrow+pandas imported   peak RSS")
    for m in MODES:
        rss = max(r["peak_rss_mib"] for r in runs[m, False])
        print(f"  {m:9s}  {best[m, False]:13.2f} / {cpu[m, False]:.2f} s  {best[m, True]:15.2f} / {cpu[m, True]:.2f} s"
              f"  {rss:7.0f} MiB")
    print("tables identical (digest over every column and the origin entry)")
    print(f"ratio: {best['per-line', False] / best['arrow', False]:.2f}")


if __name__ == "__main__":
    main()
