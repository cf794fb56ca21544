"""Token Jaccard of claim and evidence: the cheapest surface baseline."""
from __future__ import annotations

import unicodedata
from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerSpec, register
from attrib_audit.text.tokenize import ASCII_TOKENS as _ASCII
from attrib_audit.text.tokenize import TOKEN_RE

# `\w` and lower() follow Python's Unicode tables: their version is what computes non-ASCII scores
SIGNATURE = f"lexical:jaccard:lower:re=\\w+:unicode={unicodedata.unidata_version}:v1"


class LexicalScorer(Scorer):
    """|A∩B| / |A∪B| over lowercase `\\w+` token sets; no window, so nothing is ever truncated.

    On ASCII text, lowercasing and `\\w+` reduce to one bytes.translate + split (cheaper than
    the regex); for ASCII those give the same tokens, so scores are identical to `text.tokenize.jaccard`.
    Pairs with any non-ASCII character take the regex path (Unicode `\\w`, full case mapping).
    """

    name = "lexical"
    batch_size = 4096

    @property
    def signature(self) -> str:
        return SIGNATURE

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        findall = TOKEN_RE.findall
        # Token sets are built once per distinct text of the batch (evidence is often shared by many
        # claims); bytes sets for pairs that are all ASCII, str sets otherwise, never mixed in one pair.
        fast: dict[str, set] = {}
        full: dict[str, set] = {}
        out = np.empty(len(claims), dtype=np.float64)
        for i, (c, e) in enumerate(zip(claims, evidences)):
            if c.isascii() and e.isascii():
                a = fast.get(c)
                if a is None:
                    a = fast[c] = set(c.encode().translate(_ASCII).split())
                b = fast.get(e)
                if b is None:
                    b = fast[e] = set(e.encode().translate(_ASCII).split())
            else:
                a = full.get(c)
                if a is None:
                    a = full[c] = set(findall(c.lower()))
                b = full.get(e)
                if b is None:
                    b = full[e] = set(findall(e.lower()))
            inter = len(a & b)
            union = len(a) + len(b) - inter
            out[i] = inter / union if union else 0.0
        return ScoreBatch.plain(out)


def _lexical() -> Scorer:
    return LexicalScorer()


register(ScorerSpec(name="lexical", factory=_lexical, description="token Jaccard of claim and evidence",
                    family="surface", check=lambda: (True, "built in"),
                    install="-"))
