"""`attrib-audit demo` wall time, first run and cached rerun, split into loading, scoring, statistics and report.

Each run is a fresh subprocess with its own empty $ATTRIB_AUDIT_HOME and $ATTRIB_AUDIT_CACHE (one temp folder per
source tree), so the first run scores every pair and the rerun finds all of them in the cache. The child wraps the
pipeline's steps with timers (the same names exist in older source trees given with --base):
  loading     data.sources.load_data as the audit calls it
  scoring     engine build_scorers + score_table (model loading included)
  statistics  the rest of run_spec (AUROC bootstrap, transfer, sensitivity, systems)
  report      cli.report.write_report (the plots and report.html / report.md)
  other       the remainder of the wall time: interpreter start, imports, parser, saving results, printing
  cpu         user + system CPU seconds of the child: on a machine shared with others, steadier than the wall time

    python bench/bench_demo.py [--base /path/to/other/src] [--args "--n-boot 2000"]

With --base the same runs are made with PYTHONPATH=BASE first, back to back, and each table shows both.
Last line: `ratio: X`, first run / cached rerun of this tree.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

SRC = str(Path(__file__).resolve().parents[1] / "src")

# Speed facts behind choices in the code, as measured when each choice was made (the code says only which is cheaper):
# - audit.results._arrow_column lays numbers and text into arrow buffers itself: pa.array imported pandas to inspect
#   its input, 0.3 s of a cached demo;
# - stats.rank imports scipy.special, not scipy.stats (about 0.5 s to import), and stats.threshold defers scipy so
#   `threshold --help` does not spend a second importing it (bench/bench_cli_start.py lists each command's imports);
# - ASCII fast paths of text.tokenize and the lexical scorer: about 3x faster than the regex;
# - text.sentences' one-literal-character alternatives: 2.5x faster than the lookbehind form, the same spans;
# - stats.auroc._cumsum_down's whole-row adds: 3-4x faster than numpy's strided cumsum once rows are long;
# - engine.stream's column-wise to_pylist and engine.cache's one-pass read of a rerun's rows: about 3x faster.
STEPS = ("loading", "scoring", "statistics", "report", "other")

CHILD = r"""
import json, sys, time
from attrib_audit.audit import run as run_mod
t = {"load_data": 0.0, "build_scorers": 0.0, "score_table": 0.0, "run_spec": 0.0, "write_report": 0.0}
def timed(mod, name):
    real = getattr(mod, name)
    def wrap(*a, **k):
        t0 = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            t[name] += time.perf_counter() - t0
    setattr(mod, name, wrap)
for name in ("load_data", "build_scorers", "score_table", "run_spec"):
    timed(run_mod, name)
# after the wrapping: cli.audit takes the wrapped run_spec, whether it imports it at its top or when it runs
from attrib_audit.cli import audit as cli_audit
timed(cli_audit, "write_report")
from attrib_audit.cli import main
rc = main(sys.argv[1:])
print("BENCH " + json.dumps(t))
raise SystemExit(rc)
"""


def run_once(src: str, home: Path, argv: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": src, "ATTRIB_AUDIT_HOME": str(home),
           "ATTRIB_AUDIT_CACHE": str(home / "scores.sqlite"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    t0, c0 = time.perf_counter(), os.times()
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], env=env, capture_output=True, text=True)
    wall, c1 = time.perf_counter() - t0, os.times()
    cpu = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
    if done.returncode != 0:
        sys.exit(f"demo failed under {src} (exit {done.returncode}):\n{done.stderr[-3000:]}")
    t = json.loads(next(line[6:] for line in done.stdout.splitlines() if line.startswith("BENCH ")))
    scoring = t["build_scorers"] + t["score_table"]
    summary = next((line for line in done.stdout.splitlines() if "scored anew" in line), "")
    return {"wall": wall, "cpu": cpu, "loading": t["load_data"], "scoring": scoring,
            "statistics": t["run_spec"] - t["load_data"] - scoring, "report": t["write_report"],
            "other": wall - t["run_spec"] - t["write_report"], "summary": summary.strip()}


def measure(src: str, extra: list[str]) -> tuple[dict, dict]:
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        home = Path(tmp)
        argv = ["demo", "--out", str(home / "out"), *extra]
        first = run_once(src, home, argv)
        cached = run_once(src, home, argv)
    return first, cached


def table(label: str, first: dict, cached: dict) -> str:
    lines = [f"{label}", f"  {'step':<11}{'first s':>9}{'cached s':>10}"]
    for step in ("wall", "cpu", *STEPS):
        lines.append(f"  {step:<11}{first[step]:>9.2f}{cached[step]:>10.2f}")
    lines.append(f"  first:  {first['summary']}\n  cached: {cached['summary']}")
    lines.append(f"  first / cached: {first['wall'] / cached['wall']:.1f}x wall, "
                 f"{first['cpu'] / cached['cpu']:.1f}x cpu")
    return "\n".join(lines)


def side_by_side(measure_tree: Callable[[str], tuple[dict, dict]], base: str | None, step: str) -> None:
    """Measure the base tree (if any), then this one; print both tables, the base comparison of the cached rerun
    and of the first run's `step`, and last `ratio: X` (first run / cached rerun of this tree)."""
    results = []
    if base:
        results.append((f"base: PYTHONPATH={base}", *measure_tree(base)))
    results.append((f"this tree: PYTHONPATH={SRC}", *measure_tree(SRC)))
    for label, first, cached in results:
        print(table(label, first, cached))
    if base:
        (_, bf, bc), (_, nf, nc) = results
        print(f"cached rerun: base {bc['wall']:.2f} s -> {nc['wall']:.2f} s ({bc['wall'] / nc['wall']:.1f}x); "
              f"{step}: base first {bf[step]:.2f} s -> {nf[step]:.2f} s")
    first, cached = results[-1][1], results[-1][2]
    print(f"ratio: {first['wall'] / cached['wall']:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="another source tree (its src/ folder) to measure first, back to back")
    ap.add_argument("--args", default="", help="extra demo arguments, e.g. \"--n-boot 500\"")
    a = ap.parse_args()
    extra = shlex.split(a.args)
    side_by_side(lambda src: measure(src, extra), a.base, "report")


if __name__ == "__main__":
    main()
