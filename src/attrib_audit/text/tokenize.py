"""Lexical tokens: lowercase, Unicode `\\w+` runs. The same definition serves every room."""
from __future__ import annotations

import re

TOKEN_RE = re.compile(r"\w+")


def _ascii_table() -> bytes:
    """bytes.translate table that lowercases ASCII letters and blanks every non-`\\w` byte."""
    table = bytearray(b" " * 256)
    for ch in b"abcdefghijklmnopqrstuvwxyz0123456789_":
        table[ch] = ch
    for ch in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        table[ch] = ch + 32
    return bytes(table)


# On ASCII text `\w` is [A-Za-z0-9_] and lower() maps A-Z only, so `text.encode().translate(ASCII_TOKENS).split()`
# gives `tokens(text)` as bytes, without the regex (cheaper); any other text takes the regex.
ASCII_TOKENS = _ascii_table()


def tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text.lower())


def count_tokens(text: str) -> int:
    """len(tokens(text)); an audit counts every evidence's words."""
    if text.isascii():
        return len(text.encode().translate(ASCII_TOKENS).split())
    return len(tokens(text))


def token_set(text: str) -> frozenset[str]:
    return frozenset(TOKEN_RE.findall(text.lower()))


def jaccard(a: str | frozenset[str], b: str | frozenset[str]) -> float:
    """|A∩B| / |A∪B| of token sets; 0 when both are empty."""
    sa = a if isinstance(a, frozenset) else token_set(a)
    sb = b if isinstance(b, frozenset) else token_set(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else 0.0
