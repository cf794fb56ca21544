"""A rule-based sentence splitter: deterministic and offline (no punkt download)."""
from __future__ import annotations

import re

_ABBREV = {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co",
           "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "no", "fig", "al"}
_BOUNDARY = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9À-Ý])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")


def split_sentences(text: str) -> list[str]:
    """Split on sentence-final punctuation followed by a capital/digit, and on blank lines.

    Abbreviations (Dr., e.g.) and single initials do not end a sentence. Returns
    stripped, non-empty sentences whose concatenation covers the text's words.
    """
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
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
