"""Answers as text: SQuAD/ASQA normalisation and inline `[n]` citation markers (the probe and provenance share them)."""
from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
CITATION_RE = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_STRIP_CITATION_RE = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and articles, collapse whitespace (the SQuAD evaluation rule)."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def citation_indices(text: str) -> list[int]:
    """Every cited passage number in order of appearance; `[1][2]` and `[1, 2]` both give [1, 2]."""
    return [int(n) for m in CITATION_RE.finditer(text) for n in m.group(1).split(",")]


def strip_citations(text: str) -> str:
    """The text without its markers and the spaces before them (as ALCE removes them before scoring)."""
    return _STRIP_CITATION_RE.sub("", text)


def split_citations(sentence: str) -> tuple[str, list[int]]:
    """The sentence without its `[n]` / `[n, m]` markers (spaces tidied), and the cited numbers in order."""
    text = " ".join(CITATION_RE.sub(" ", sentence).split())
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return text, citation_indices(sentence)
