"""Number formatting shared by every section and the terminal, so Markdown, HTML, plots and the console print
numbers alike; a missing value is always `—`."""
from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from attrib_audit.audit.results import TruncationRow

DASH = "—"


def finite(x: Any) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def num(x: Any, digits: int = 3, signed: bool = False) -> str:
    if not finite(x):
        return DASH
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def threshold(t: Any, digits: int = 4) -> str:
    """A gate threshold (pass when score ≥ t) to `digits` significant digits, never fixed decimals: 9.67e-07 stays
    9.67e-07 (not 0.0000) and 1e308 stays 1e+308 (not 309 digits). Rounded up when not exact, so the printed gate is
    never looser than the one certified."""
    if not finite(t):
        return DASH
    d = Decimal(repr(float(t)))
    shown = d if d == 0 else d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=ROUND_CEILING)
    return f"{float(shown):.{digits}g}" if math.isfinite(float(shown)) else f"{shown.normalize():e}"


def ci(est: Any, lo: Any, hi: Any, digits: int = 3, signed: bool = False) -> str:
    """`0.798 [0.633, 0.920]`; a missing interval prints the point alone."""
    if not finite(est):
        return DASH
    head = num(est, digits, signed)
    return f"{head} [{num(lo, digits, signed)}, {num(hi, digits, signed)}]" if finite(lo) and finite(hi) else head


def pct(share: Any) -> str:
    if not finite(share):
        return DASH
    if 0 < share < 0.005:
        return "<1%"
    return f"{100 * share:.0f}%"


def evidence_caveat(trunc: TruncationRow | None, n_failed: int | None, n: int | None,
                    n_clamped: int | None = None) -> str:
    """What the reader must know next to a number: how much of its evidence was cut, how many rows failed,
    how many judge answers fell outside [0, 1] and were clamped."""
    parts = []
    if trunc and trunc.pairs_truncated:
        share = trunc.pairs_truncated / trunc.n if trunc.n else float("nan")
        tok = f", {pct(trunc.share_tokens_cut)} of tokens" if finite(trunc.share_tokens_cut) else ""
        parts.append(f"{pct(share)} of pairs truncated{tok}")
    if n_failed:
        total = (n or 0) + n_failed
        parts.append(f"{n_failed} failed rows excluded ({pct(n_failed / total)})" if total else
                     f"{n_failed} failed rows excluded")
    if n_clamped:
        parts.append(f"{n_clamped} answers outside [0, 1] clamped")
    return "; ".join(parts)


def pvalue(x: Any) -> str:
    """A p-value: four decimals, or scientific notation below 1e-4."""
    if not finite(x):
        return DASH
    return f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}"
