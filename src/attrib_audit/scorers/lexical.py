"""Token Jaccard of claim and evidence: the cheapest surface baseline."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from attrib_audit.scorers.base import ScoreBatch
from attrib_audit.text.tokenize import TOKEN_RE


class LexicalScorer:
    """|A∩B| / |A∪B| over lowercase `\\w+` token sets; no window, so nothing is ever truncated."""

    name = "lexical"
    batch_size = 4096

    @property
    def signature(self) -> str:
        return "lexical:jaccard:lower:re=\\w+:v1"

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        findall = TOKEN_RE.findall
        out = np.empty(len(claims), dtype=np.float64)
        for i, (c, e) in enumerate(zip(claims, evidences)):
            a, b = set(findall(c.lower())), set(findall(e.lower()))
            union = len(a | b)
            out[i] = len(a & b) / union if union else 0.0
        return ScoreBatch.plain(out)
