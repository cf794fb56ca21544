"""Sentence splitting on adversarial text: the linear splitter (`split_sentences`) against the first version,
which re-read the whole growing sentence at every boundary it skipped after an abbreviation (quadratic).

Adversarial inputs of --kb each: a run of abbreviations ("Dr. Smith " repeated), a run of initials ("J. R. "),
and an evidence that is one long author list ("Dr. A. Smith, Prof. B. Jones, ..."); a control of ordinary
sentences shows the common case did not get slower. Both sides must give identical splits.
Run: PYTHONPATH=src python bench/bench_sentences.py [--kb 60] [--repeat 3]
Last line: `ratio: X`, the smallest speed-up (old over new) over the adversarial inputs.
"""
from __future__ import annotations

import argparse
import re
import time

from attrib_audit.text.sentences import _ABBREV, split_sentences

# the boundary as first written (a lookbehind), the baseline's; the splitter's _BOUNDARY finds the same spans
FIRST_BOUNDARY = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9À-Ý])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")


def old_split(text: str) -> list[str]:
    """Baseline: the first version, verbatim."""
    out: list[str] = []
    start = 0
    for m in FIRST_BOUNDARY.finditer(text):
        piece = text[start:m.start()].rstrip()
        last = re.search(r"(\w+(?:\.\w+)*)\W*$", piece)
        word = last.group(1).lower() if last else ""
        if piece.endswith(".") and (word in _ABBREV or (len(word) == 1 and word.isalpha())) and "\n" not in m.group(0):
            continue
        if piece.strip():
            out.append(piece.strip())
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def inputs(kb: int) -> dict[str, str]:
    n = kb * 1024
    authors = "Dr. A. Smith, Prof. B. Jones, Mr. C. D. Lee, St. E. Ward, "
    sentence = "The study by Dr. Smith et al. (see Fig. 2, e.g. the St. Louis cohort, Jan. 2020) found no effect. "
    return {
        "abbreviation run": ("Dr. Smith " * (n // 10 + 1))[:n],
        "initials run": ("J. R. " * (n // 6 + 1))[:n],
        "author list": "Authors: " + authors * (n // len(authors)) + "wrote it. The end.",
        "control": (sentence * (n // len(sentence) + 1))[:n],
    }


def best(fn, text: str, repeat: int) -> tuple[float, list[str]]:
    times, out = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn(text)
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kb", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ratios = []
    for name, text in inputs(args.kb).items():
        t_new, new = best(split_sentences, text, args.repeat)
        t_old, old = best(old_split, text, 1)  # the baseline is slow: once
        if new != old:
            raise SystemExit(f"{name}: the splits differ")
        if name != "control":
            ratios.append(t_old / t_new)
        print(f"{name:17s} {len(text) / 1024:5.0f} KB  {len(new):5d} sentences  old {t_old:8.3f}s  "
              f"new {t_new:7.4f}s  x{t_old / t_new:,.0f}")
    print(f"ratio: {min(ratios):.1f}")


if __name__ == "__main__":
    main()
