"""A 100k-row lexical audit, first run and cached rerun, split into loading, scoring, statistics and the rest.

The rows are the shared AttributionBench sample (data/SOURCES.md; packaged with the demo) resampled to N rows with
distinct ids. Resampled copies alone would be 200 distinct (claim, evidence) pairs, and the engine scores each
distinct pair once, so each copy also gets one short extra reference: the first or last 25 words of another row's
evidence, before or after its own. Every pair is then distinct and the first run really scores N pairs; label,
source (the slice) and group (the cluster) stay the copied row's. Each run is a fresh subprocess with its own empty
$ATTRIB_AUDIT_HOME and cache:

    attrib-audit audit rows.jsonl --scorers lexical --construct attribution --out OUT

    python bench/bench_audit_100k.py [--rows 100000] [--base /path/to/other/src] [--data attributionbench_id.jsonl]

With --base the same two runs are made with PYTHONPATH=BASE first. Last line: `ratio: X`, first run / cached rerun
of this tree.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_demo import SRC, run_once, side_by_side  # noqa: E402  (the same timed child and printout as the demo bench)

DATA = Path(SRC) / "attrib_audit" / "data" / "demo" / "attributionbench_id.jsonl"  # the shared file, packaged
SNIPPET_WORDS = 25


def synthesise(source: Path, n: int, out: Path, seed: int = 0) -> None:
    """N rows drawn from `source` with replacement, each with a distinct id and a distinct (claim, evidence)."""
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    words = [r["evidence"].split() for r in rows]
    rng = random.Random(seed)
    seen: set[tuple[int, int, int, int]] = set()
    with out.open("w", encoding="utf-8") as f:
        while len(seen) < n:
            key = (rng.randrange(len(rows)), rng.randrange(len(rows)), rng.randrange(2), rng.randrange(2))
            i, m, head, before = key
            if i == m or key in seen:
                continue
            seen.add(key)
            snippet = " ".join(words[m][:SNIPPET_WORDS] if head else words[m][-SNIPPET_WORDS:])
            own = rows[i]["evidence"]
            row = {**rows[i], "id": f"{rows[i]['id']}~{len(seen)}",
                   "evidence": f"{snippet}\n\n{own}" if before else f"{own}\n\n{snippet}"}
            f.write(json.dumps(row) + "\n")


def measure(src: str, data: Path) -> tuple[dict, dict]:
    with tempfile.TemporaryDirectory(prefix="bench-100k-") as tmp:
        home = Path(tmp)
        argv = ["audit", str(data), "--scorers", "lexical", "--construct", "attribution", "--out", str(home / "out")]
        first = run_once(src, home, argv)
        cached = run_once(src, home, argv)
    return first, cached


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--data", type=Path, default=DATA, help="labelled rows to resample (default: the shared sample)")
    ap.add_argument("--base", help="another source tree (its src/ folder) to measure first, back to back")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-100k-data-") as tmp:
        data = Path(tmp) / f"attributionbench_{a.rows}.jsonl"
        synthesise(a.data, a.rows, data)
        side_by_side(lambda src: measure(src, data), a.base, "wall")


if __name__ == "__main__":
    main()
