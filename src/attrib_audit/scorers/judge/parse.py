"""Parse judge answers. An answer that does not parse is a failure with its reason, never a default score."""
from __future__ import annotations

import re
from dataclasses import dataclass

_NUM = r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(%|/\s*(?:\d+(?:\.\d*)?))?"
_SUPPORT = re.compile(r"\bSUPPORT\b\**\s*[:=]\s*\**\s*" + _NUM, re.IGNORECASE)
_BARE = re.compile(r"^\s*\**\s*" + _NUM + r"\s*\**\s*\.?\s*$")
_LABEL = re.compile(r"\bLABEL\b\**\s*[:=]\s*\**\s*[\"'`]?\s*(not[\s_-]*attributable|attributable)\b", re.IGNORECASE)
_CONF = re.compile(r"\bCONF(?:IDENCE)?\b\**\s*[:=]\s*\**\s*" + _NUM, re.IGNORECASE)
_REFUSAL = re.compile(r"\b(cannot|can't|can not|unable to|sorry|i won't|as an ai|not able to)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Parsed:
    value: float | None  # in [0, 1] when parsed
    failure: str | None  # why it did not parse (with the raw text)
    clamped: bool = False  # the number was outside [0, 1]
    label: str | None = None  # "attributable" / "not_attributable" (label prompt)


def _number(match: re.Match) -> tuple[float, bool]:
    x = float(match.group(1))
    unit = match.group(2)
    if unit == "%":
        x /= 100.0
    elif unit:
        den = float(unit.lstrip("/").strip())
        if den <= 0:
            return float("nan"), False
        x /= den
    clamped = not 0.0 <= x <= 1.0
    return min(1.0, max(0.0, x)), clamped


def _fail(raw: str, what: str) -> Parsed:
    text = raw.strip()
    if not text:
        return Parsed(None, "empty answer")
    kind = "refusal" if _REFUSAL.search(text) else f"no {what}"
    return Parsed(None, f"{kind}: {text[:200]!r}")


def parse_support(raw: str) -> Parsed:
    """`SUPPORT: x` (first occurrence, any case; `85%` and `7/10` read as fractions), clamped to [0, 1].

    An answer that is only a number is read as that number; anything else fails.
    """
    m = _SUPPORT.search(raw) or _BARE.match(raw)
    if m is None:
        return _fail(raw, "SUPPORT: <number>")
    x, clamped = _number(m)
    if x != x:  # NaN, e.g. "3/0"
        return Parsed(None, f"unreadable number: {raw.strip()[:200]!r}")
    return Parsed(x, None, clamped)


def parse_label(raw: str) -> Parsed:
    """`LABEL: attributable|not_attributable` and `CONF: x`; the value is P(attributable) = conf or 1 − conf.

    A label without a readable confidence keeps the label but has no score (a failure).
    """
    m = _LABEL.search(raw)
    if m is None:
        return _fail(raw, "LABEL: attributable|not_attributable")
    label = "attributable" if m.group(1).lower() == "attributable" else "not_attributable"
    c = _CONF.search(raw)
    if c is None:
        return Parsed(None, f"no CONF: {raw.strip()[:200]!r}", label=label)
    conf, clamped = _number(c)
    if conf != conf:
        return Parsed(None, f"unreadable CONF: {raw.strip()[:200]!r}", label=label)
    return Parsed(conf if label == "attributable" else 1.0 - conf, None, clamped, label)
