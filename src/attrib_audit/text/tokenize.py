"""Lexical tokens: lowercase, Unicode `\\w+` runs. The same definition serves every room."""
from __future__ import annotations

import re

TOKEN_RE = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text.lower())


def token_set(text: str) -> frozenset[str]:
    return frozenset(TOKEN_RE.findall(text.lower()))


def jaccard(a: str | frozenset[str], b: str | frozenset[str]) -> float:
    """|A∩B| / |A∪B| of token sets; 0 when both are empty."""
    sa = a if isinstance(a, frozenset) else token_set(a)
    sb = b if isinstance(b, frozenset) else token_set(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else 0.0
