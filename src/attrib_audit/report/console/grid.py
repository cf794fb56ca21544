"""The one grid and number format every console renderer shares, and names shortened for printing."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from attrib_audit.report import fmt

MISSING = fmt.DASH


def grid(head: Sequence[str] | None, rows: Sequence[Sequence[str]], *, indent: str = "", rule: bool = False,
         align: str = "") -> list[str]:
    """Columns padded to their widest cell (`align`: one '<' or '>' per column, default '<'), two spaces apart;
    `head` None: no header line; `rule`: a dashed line under the header."""
    lines = ([list(head)] if head is not None else []) + [list(r) for r in rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(lines[0]))] if lines else []
    sides = align.ljust(len(widths), "<")

    def line(cols: Sequence[str]) -> str:
        cells = (c.rjust(w) if a == ">" else c.ljust(w) for c, w, a in zip(cols, widths, sides))
        return (indent + "  ".join(cells)).rstrip()

    rule_line = [line(["-" * w for w in widths])] if rule and head is not None else []
    return [line(lines[0]), *rule_line, *map(line, lines[1:])] if head is not None else list(map(line, lines))


def _num(x: Any, digits: int = 3) -> str:
    return fmt.num(x, digits)


def _ci(r: Mapping[str, Any], key: str = "estimate") -> str:
    return fmt.ci(r[key], r["ci_low"], r["ci_high"])


def _threshold(t: Any) -> str:
    """A gate threshold: four significant digits, rounded up (never looser than the one certified)."""
    return fmt.threshold(t)


def _signed(r: Mapping[str, Any]) -> str:
    """A difference with its CI, `+0.012 [-0.010, 0.034]`; `—` when there is none."""
    if r.get("diff") is None:
        return MISSING
    return f"{fmt.num(r['diff'], signed=True)} [{_num(r['ci_low'])}, {_num(r['ci_high'])}]"


def short_names(datasets: Sequence[str]) -> dict[str, str]:
    """Drop a `dataset:` prefix every slice shares, for printing (results.json keeps full names)."""
    prefixes = {d.split(":", 1)[0] for d in datasets}
    if len(prefixes) == 1 and all(":" in d for d in datasets):
        return {d: d.split(":", 1)[1] for d in datasets}
    return {d: d for d in datasets}


def _rename(obj: Any, names: Mapping[str, str]) -> Any:
    """A copy of a construct entry with every dataset name (as key or string value) shortened."""
    if isinstance(obj, Mapping):
        return {names.get(k, k): _rename(v, names) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rename(v, names) for v in obj]
    return names.get(obj, obj) if isinstance(obj, str) else obj


def _est(e: Mapping[str, Any] | None, digits: int = 3, signed: bool = False) -> str:
    """An Estimate (stats.types) as `0.532 [0.301, 0.640]`."""
    return MISSING if not e else fmt.ci(e["estimate"], e["ci_low"], e["ci_high"], digits, signed)
