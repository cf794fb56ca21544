"""SQuAD-style answer normalisation, the answer hint h(u) and inline `[n]` citation markers."""
from __future__ import annotations

import re
import string
from typing import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
CITATION_RE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and articles, collapse whitespace (the SQuAD evaluation rule)."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def answer_hint(unit: str, answers: Sequence[str]) -> float:
    """Fraction of gold short answers found in the unit, matched on normalised word boundaries; 0 without answers."""
    norm = [a for a in (normalize_answer(x) for x in answers) if a]
    if not norm:
        return 0.0
    padded = f" {normalize_answer(unit)} "
    return sum(f" {a} " in padded for a in norm) / len(norm)


def split_citations(sentence: str) -> tuple[str, list[int]]:
    """The sentence without its `[n]` / `[n, m]` markers, and the cited numbers in order."""
    cited = [int(n) for m in CITATION_RE.finditer(sentence) for n in m.group(1).split(",")]
    text = " ".join(CITATION_RE.sub(" ", sentence).split())
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return text, cited
