"""Answer sentences with their citations and a rule-based type: factual, hedge, refusal or meta.

Typing decides what the grounding reward asks of a sentence: a factual sentence must be
supported by what it cites; hedges, refusals and meta sentences ("Here is what I found")
assert nothing about the world, so they are neither rewarded nor punished for support.
The rules are fixed regular expressions, so the reward stays deterministic.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from attrib_audit.text.answers import CITATION_RE, citation_indices, strip_citations
from attrib_audit.text.sentences import split_sentences

FACTUAL, HEDGE, REFUSAL, META = "factual", "hedge", "refusal", "meta"

_REFUSAL_RE = re.compile(
    r"\b(i (do not|don't|cannot|can't|am unable to|am not able to) (know|answer|determine|say|find|tell)"
    r"|(cannot|can't|unable to) (be )?(answered|answer|determined|determine|found|find|tell)"
    r"|(no|not enough|insufficient) (relevant )?(information|evidence|data)"
    r"|(passages|documents|sources|search results|context) (do not|don't|does not|doesn't) "
    r"(say|mention|contain|specify|state|provide))\b", re.I)
_HEDGE_RE = re.compile(
    r"\b(possibly|perhaps|probably|maybe|reportedly|allegedly|presumably|arguably|it (is|seems|remains) "
    r"(unclear|uncertain|not clear|possible|likely)|it seems|it appears|appears to|seems to|i think|i believe"
    r"|i guess|i'm not sure|i am not sure|not (entirely )?(sure|certain)|hard to say|unclear)\b", re.I)
_MODAL_RE = re.compile(r"\b(may|might)\b")  # case-sensitive: "May 1990" is a date, not a hedge
_META_RE = re.compile(
    r"^(here (is|are|'s)|the following|in summary|to summari[sz]e|to answer (this|the|your) question|"
    r"the question (is|asks|could|can|may|might|refers)|this question|that is a good question|"
    r"there are (several|multiple|two|three|many|different) (possible )?(interpretations|answers|readings|ways)|"
    r"let me|i will|i'll|i hope this helps)\b", re.I)


@dataclass(frozen=True)
class AnswerSentence:
    text: str  # citation markers removed
    cites: tuple[int, ...]  # 1-based passage numbers, as written
    kind: str


def sentence_kind(text: str, has_citation: bool) -> str:
    """Refusal > hedge > meta > factual; a cited sentence is never meta (it points at evidence)."""
    if _REFUSAL_RE.search(text):
        return REFUSAL
    if _HEDGE_RE.search(text) or _MODAL_RE.search(text):
        return HEDGE
    if not has_citation and _META_RE.search(text.strip()):
        return META
    return FACTUAL


def _leading_citations(piece: str) -> tuple[str, str]:
    """Split '[2] Next sentence' into ('[2]', 'Next sentence'): markers after a full stop belong before it."""
    m = re.match(r"^((?:\s*\[\d+(?:\s*,\s*\d+)*\])+)\s*", piece)
    return (m.group(1), piece[m.end():]) if m else ("", piece)


def parse_answer(answer: str) -> list[AnswerSentence]:
    """Sentences of an answer, each with the passages it cites and its type."""
    pieces: list[str] = []
    for piece in split_sentences(answer):
        lead, rest = _leading_citations(piece)
        if lead and pieces:
            pieces[-1] = f"{pieces[-1]} {lead}"
        elif lead:
            rest = f"{rest} {lead}"
        if rest.strip():
            pieces.append(rest)
    out = []
    for piece in pieces:
        cites = tuple(dict.fromkeys(citation_indices(piece)))
        text = strip_citations(piece).strip()
        if text:
            out.append(AnswerSentence(text, cites, sentence_kind(text, bool(CITATION_RE.search(piece)))))
        elif cites and out:  # a stray marker line: attach to the sentence before
            prev = out[-1]
            out[-1] = AnswerSentence(prev.text, tuple(dict.fromkeys(prev.cites + cites)), prev.kind)
    return out
