"""A rule-based sentence splitter: deterministic and offline (no punkt download).

Linear in the text: a boundary after an abbreviation (Dr., e.g.) is skipped without re-reading the growing
sentence, so a run of thousands of abbreviations costs what its length does (bench/bench_sentences.py).
"""
from __future__ import annotations

import re

SPLITTER = "built-in rule splitter (text.sentences)"  # what a recipe that windows evidence with it names
_ABBREV = {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co",
           "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "no", "fig", "al"}
_CLOSERS = "\"')]"
_LONGEST = max(map(len, _ABBREV))  # str.lower never shortens a string, so a longer word is no abbreviation
# A boundary is (?<=[.!?…])["')\]]*\s+(?=["'(\[]?[A-Z0-9À-Ý]), a blank line, or a newline before a list item.
# Written with every alternative opening on one literal character (the punctuation consumed, the boundary in group
# 1-4), so re scans for those characters in C instead of trying a lookbehind at every position: faster, the same
# spans (tests/test_sentences.py checks them against the lookbehind form).
_AFTER = r"([\"')\]]*\s+)(?=[\"'(\[]?[A-Z0-9À-Ý])"
_BOUNDARY = re.compile(rf"\.{_AFTER}|!{_AFTER}|\?{_AFTER}|…{_AFTER}|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")


def _is_word(ch: str) -> bool:
    """What re's \\w matches in one character (alphanumeric or "_", its definition), without a regex call per
    character: a 100k-row audit counts every evidence's sentences."""
    return ch.isalnum() or ch == "_"


def split_sentences(text: str) -> list[str]:
    """Split on sentence-final punctuation followed by a capital/digit, and on blank lines.

    Abbreviations (Dr., e.g.) and single initials do not end a sentence; closing quotes and brackets after
    the punctuation stay with it (`He said "Stop." Then` ends at `."`). Fast and rule-based, for counts and
    windows; the trained checkers split as their authors do, with NLTK's Punkt (text.punkt).

    Args:
        text: any text.

    Returns:
        Stripped, non-empty sentences whose concatenation covers the text's words and punctuation.
    """
    out: list[str] = []
    start = 0
    scanned = 0  # text[start:scanned] has been searched for its last word character
    last_char = -1  # index of the last word character in text[start:scanned], -1: none
    word_span = (-1, -1)  # (first, last) index of the word ending at `last_char`, found once per word
    for m in _BOUNDARY.finditer(text):
        begin, after = m.span(m.lastindex or 0)  # the boundary without the consumed punctuation
        end = begin
        while end > start and text[end - 1].isspace():  # the sentence, right-stripped, is text[start:end]
            end -= 1
        if end > start and text[end - 1] == "." and "\n" not in text[begin:after]:
            # the sentence's last word is the last run of \w+(\.\w+)* (what r"(\w+(?:\.\w+)*)\W*$" finds);
            # only text not searched for an earlier boundary of this sentence is read again
            i = end - 1
            while i >= max(start, scanned) and not _is_word(text[i]):
                i -= 1
            if i >= max(start, scanned):
                last_char = i
            scanned = end
            if last_char >= start and word_span[1] != last_char:
                j = last_char
                while j > start and (_is_word(text[j - 1]) or
                                     (text[j - 1] == "." and j - 2 >= start and _is_word(text[j - 2]))):
                    j -= 1
                word_span = (j, last_char)
            if last_char >= start and word_span[1] - word_span[0] < _LONGEST:
                word = text[word_span[0]:last_char + 1].lower()
                if word in _ABBREV or (len(word) == 1 and word.isalpha()):
                    continue
        close = begin
        while close < after and text[close] in _CLOSERS:  # a closing quote or bracket stays with its sentence
            close += 1
        piece = text[start:max(end, close)].strip()
        if piece:
            out.append(piece)
        start = after
        scanned, last_char = start, -1
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out
