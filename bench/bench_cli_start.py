"""How long `attrib-audit --help`, two commands' `--help` and `models list` take, from process start to exit.

Each command runs `--repeat` times in a fresh interpreter (`python -m attrib_audit ...`); the best time is kept
(the least disturbed by other load on the machine), and the heavy libraries each command imported are listed.

    python bench/bench_cli_start.py [--base /path/to/other/src] [--repeat 3]

With --base the same commands run with PYTHONPATH=BASE too, alternating with this tree.
Last line: `ratio: X`, `--help` under base / this tree (1.0 without --base).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
COMMANDS = {"--help": ["--help"], "audit --help": ["audit", "--help"], "provenance --help": ["provenance", "--help"],
            "models list": ["models", "list"]}
HEAVY = ("torch", "transformers", "sentence_transformers", "matplotlib", "scipy", "ray", "datasets", "pandas",
         "sklearn")
PROBE = ("import runpy, sys\nsys.argv = ['attrib-audit', *sys.argv[1:]]\ntry:\n"
         "    runpy.run_module('attrib_audit', run_name='__main__')\nexcept SystemExit:\n    pass\n"
         f"print('HEAVY', ','.join(m for m in {HEAVY!r} if m in sys.modules))\n")


def timed(src: str, argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": src, "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "attrib_audit", *argv], env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def heavy(src: str, argv: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": src, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, capture_output=True, text=True).stdout
    return next((line[6:] for line in out.splitlines() if line.startswith("HEAVY ")), "?") or "none"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", help="another source tree (its src/ folder) to time beside this one")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    trees = ([("base", a.base)] if a.base else []) + [("this tree", SRC)]
    best: dict[tuple[str, str], float] = {}
    for _ in range(a.repeat):
        for label, src in trees:
            for cmd, argv in COMMANDS.items():
                t = timed(src, argv)
                best[label, cmd] = min(best.get((label, cmd), t), t)
    for label, src in trees:
        for cmd, argv in COMMANDS.items():
            print(f"{label:<10} {cmd:<18} {best[label, cmd]:6.2f} s  (best of {a.repeat}; heavy imports: "
                  f"{heavy(src, argv)})")
    ratio = best["base", "--help"] / best["this tree", "--help"] if a.base else 1.0
    print(f"ratio: {ratio:.1f}")


if __name__ == "__main__":
    main()
