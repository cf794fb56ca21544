"""A complete attrib-audit scorer plugin: claim-token overlap, penalised for long evidence.

Without installing:  PYTHONPATH=examples attrib-audit audit pairs.jsonl --out out \
                         --scorers lexical,length_penalised:make_scorer --scorer-opt length_penalised:make_scorer.alpha=0.2
"""
import math
import re

from attrib_audit.scorers import ScoreBatch


class LengthPenalisedOverlap:
    """Share of the claim's words found in the evidence, times exp(-alpha * evidence words / 100)."""

    def __init__(self, alpha: float = 0.1):
        self.name, self.alpha = "length_penalised", float(alpha)

    @property
    def signature(self) -> str:  # the cache keys on it: change it whenever a score could change
        return f"length_penalised:v1:alpha={self.alpha}"

    def score(self, claims, evidences) -> ScoreBatch:
        scores = []
        for claim, evidence in zip(claims, evidences):
            c, e = set(re.findall(r"\w+", claim.lower())), re.findall(r"\w+", evidence.lower())
            scores.append(len(c & set(e)) / max(len(c), 1) * math.exp(-self.alpha * len(e) / 100))
        return ScoreBatch.plain(scores)


def make_scorer(alpha: float = 0.1) -> LengthPenalisedOverlap:
    return LengthPenalisedOverlap(alpha)
