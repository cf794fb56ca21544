"""`attrib-audit demo` wall time, first run and cached rerun, split into loading, scoring, statistics and report,
and the scoring split per scorer (model build, scoring, CPU seconds, texts each encoder was given).

Each run is a fresh subprocess with its own empty $ATTRIB_AUDIT_HOME and $ATTRIB_AUDIT_CACHE (one temp folder per
source tree), so the first run scores every pair and the rerun finds all of them in the cache. The child wraps the
pipeline's steps with timers (the same names exist in older source trees given with --base):
  loading     data.sources.load_data as the audit calls it
  scoring     engine build_scorers + score_table (model loading included)
  statistics  the rest of run_spec (AUROC bootstrap, transfer, sensitivity, systems)
  report      cli.report.write_report (the plots and report.html / report.md)
  other       the remainder of the wall time: interpreter start, imports, parser, saving results, printing
  cpu         user + system CPU seconds of the child: on a machine shared with others, steadier than the wall time
Per scorer (first run): `build` is engine.table._build (the model load), `score` the engine's score_pairs call
from score_table (a composite's components included), `cpu` the process CPU seconds of both, `st texts` the texts
sentence-transformers encoded (and in how many encode calls) and `bs texts` the sentences bert-score embedded,
while that scorer ran: an encoder pass over the demo is one scorer's nonzero count.

    python bench/bench_demo.py [--base /path/to/other/src] [--args "--n-boot 2000"] [--scenarios]

With --base the same runs are made with PYTHONPATH=BASE first, back to back, and each table shows both, the
results.json of the two first runs are compared (bench/compare_results.py), and the last line is `ratio: X`: the
base tree's first-run wall time / this tree's. Without --base: first run / cached rerun of this tree.
--scenarios first runs, for this tree, `--scorers minilm` then `--scorers minilm-chunk` on one cache (what the
second encodes). (`--scorers minilm,blend` costing one MiniLM pass shows in the per-scorer table of the demo.)
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
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
# per scorer: model build and scoring time, CPU, and the texts each encoder library was given meanwhile
from attrib_audit.engine import table as table_mod
per, current, patched = {}, ["(other)"], set()
def bump(key, n):
    row = per.setdefault(current[0], {"build": 0.0, "score": 0.0, "cpu": 0.0, "st_texts": 0, "st_calls": 0,
                                      "bs_texts": 0})
    row[key] += n
def patch_encoders():
    if "sentence_transformers" in sys.modules and "st" not in patched:
        import sentence_transformers
        real_encode = sentence_transformers.SentenceTransformer.encode
        def encode(self, sentences, *a, **k):
            bump("st_texts", 1 if isinstance(sentences, str) else len(sentences))
            bump("st_calls", 1)
            return real_encode(self, sentences, *a, **k)
        sentence_transformers.SentenceTransformer.encode = encode
        patched.add("st")
    if "bert_score" in sys.modules and "bs" not in patched:
        import bert_score.utils as bs_utils
        real_embed = bs_utils.get_bert_embedding
        def get_bert_embedding(all_sens, *a, **k):
            bump("bs_texts", len(all_sens))
            return real_embed(all_sens, *a, **k)
        bs_utils.get_bert_embedding = get_bert_embedding
        patched.add("bs")
def per_scorer(name, key, real):
    def wrap(*a, **k):
        prev, current[0] = current[0], name(*a)
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return real(*a, **k)
        finally:
            bump(key, time.perf_counter() - t0)
            bump("cpu", time.process_time() - c0)
            patch_encoders()
            current[0] = prev
    return wrap
table_mod._build = per_scorer(lambda n, *a: n, "build", table_mod._build)
table_mod.score_pairs = per_scorer(lambda s, *a: s.name, "score", table_mod.score_pairs)
from attrib_audit.cli import main
rc = main(sys.argv[1:])
print("BENCH " + json.dumps(t))
print("SCORERS " + json.dumps(per))
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
    per = json.loads(next(line[8:] for line in done.stdout.splitlines() if line.startswith("SCORERS ")))
    scoring = t["build_scorers"] + t["score_table"]
    summary = next((line for line in done.stdout.splitlines() if "scored anew" in line), "")
    return {"wall": wall, "cpu": cpu, "loading": t["load_data"], "scoring": scoring,
            "statistics": t["run_spec"] - t["load_data"] - scoring, "report": t["write_report"],
            "other": wall - t["run_spec"] - t["write_report"], "summary": summary.strip(), "scorers": per}


def measure(src: str, extra: list[str], keep: Path | None = None) -> tuple[dict, dict]:
    """First run and cached rerun in a fresh home; `keep`: where the first run's results.json is copied."""
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        home = Path(tmp)
        argv = ["demo", "--out", str(home / "out"), *extra]
        first = run_once(src, home, argv)
        if keep is not None:
            shutil.copy(home / "out" / "results.json", keep)
        cached = run_once(src, home, argv)
    return first, cached


def scorer_table(runs: list[tuple[str, dict]]) -> str:
    """The first run's per-scorer split, one column group per tree."""
    names = list(dict.fromkeys(n for _, r in runs for n in r["scorers"]))
    head = "  " + f"{'scorer':<14}" + "".join(f"| {label[:44]:<44}" for label, _ in runs)
    sub = "  " + " " * 14 + "".join(f"| {'build s':>7}{'score s':>8}{'cpu s':>7}{'st texts':>13}{'bs texts':>9} "
                                      for _ in runs)
    lines = [head, sub]
    for n in names:
        cells = []
        for _, r in runs:
            x = r["scorers"].get(n)
            cells.append(f"| {x['build']:>7.2f}{x['score']:>8.2f}{x['cpu']:>7.2f}"
                         f"{x['st_texts']:>8} ({x['st_calls']:>2}){x['bs_texts']:>9} " if x else f"| {'-':>44} ")
        lines.append(f"  {n:<14}" + "".join(cells))
    return "\n".join(lines)


def scenarios(src: str, extra: list[str]) -> dict[str, dict]:
    """`--scorers minilm` then `--scorers minilm-chunk` on one cache (statistics cut to 200 resamples: the point
    is what each run encodes)."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        home = Path(tmp)
        for name in ("minilm", "minilm-chunk"):
            out[f"--scorers {name}"] = run_once(src, home, ["demo", "--out", str(home / name), "--scorers", name,
                                                            *extra, "--n-boot", "200"])
    return out


def table(label: str, first: dict, cached: dict) -> str:
    lines = [f"{label}", f"  {'step':<11}{'first s':>9}{'cached s':>10}"]
    for step in ("wall", "cpu", *STEPS):
        lines.append(f"  {step:<11}{first[step]:>9.2f}{cached[step]:>10.2f}")
    lines.append(f"  first:  {first['summary']}\n  cached: {cached['summary']}")
    lines.append(f"  first / cached: {first['wall'] / cached['wall']:.1f}x wall, "
                 f"{first['cpu'] / cached['cpu']:.1f}x cpu")
    return "\n".join(lines)


def side_by_side(measure_tree: Callable[[str], tuple[dict, dict]], base: str | None, step: str,
                 ratio: bool = True) -> list[tuple[str, dict, dict]]:
    """Measure the base tree (if any), then this one; print both tables, the base comparison of the cached rerun
    and of the first run's `step`, and last (unless `ratio` is False: the caller prints its own) `ratio: X`, first
    run / cached rerun of this tree. Returns (label, first, cached) per tree."""
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
    if ratio:
        first, cached = results[-1][1], results[-1][2]
        print(f"ratio: {first['wall'] / cached['wall']:.1f}")
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="another source tree (its src/ folder) to measure first, back to back")
    ap.add_argument("--args", default="", help="extra demo arguments, e.g. \"--n-boot 500\"")
    ap.add_argument("--scenarios", action="store_true",
                    help="also run minilm, then minilm-chunk on the same cache, with this tree")
    a = ap.parse_args()
    extra = shlex.split(a.args)
    with tempfile.TemporaryDirectory(prefix="bench-demo-results-") as keep:
        kept = {src: Path(keep) / f"{i}-results.json" for i, src in enumerate(filter(None, (a.base, SRC)))}
        if a.scenarios:
            print(f"scenarios: PYTHONPATH={SRC}, one cache")
            for what, run in scenarios(SRC, extra).items():
                print(f"  {what}: wall {run['wall']:.2f} s, cpu {run['cpu']:.2f} s")
                print("\n".join("    " + line for line in scorer_table([("", run)]).splitlines()[2:]))
        results = side_by_side(lambda src: measure(src, extra, kept[src]), a.base, "report", ratio=not a.base)
        print("first run, per scorer (st texts: sentence-transformers texts (encode calls); bs texts: bert-score "
              "sentences)")
        print(scorer_table([(label, first) for label, first, _ in results]))
        if a.base:
            done = subprocess.run([sys.executable, str(Path(__file__).with_name("compare_results.py")),
                                   *map(str, kept.values())], capture_output=True, text=True, check=False)
            print("compare_results (first runs):", done.stdout.strip() or done.stderr.strip())
            (_, base_first, _), (_, first, _) = results
            print(f"first run: base {base_first['wall']:.2f} s wall / {base_first['cpu']:.2f} s cpu -> this tree "
                  f"{first['wall']:.2f} s wall / {first['cpu']:.2f} s cpu")
            print(f"ratio: {base_first['wall'] / first['wall']:.2f}")


if __name__ == "__main__":
    main()
