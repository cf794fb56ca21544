"""Wide records are built by keyword: every dataclass in the package with more than four fields is `kw_only`.

A positional call of a wide record cannot be read without the class open, and a reordered field would silently
swap two values; `kw_only=True` makes Python refuse such a call, so the rule holds at runtime, not only here.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "attrib_audit"
WIDE = 4  # more fields than this: keyword only


def _is_dataclass_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (isinstance(target, ast.Name) and target.id == "dataclass") or (
        isinstance(target, ast.Attribute) and target.attr == "dataclass")


def _init_fields(cls: ast.ClassDef) -> list[str]:
    out = []
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if "ClassVar" in ast.unparse(stmt.annotation):
            continue
        value = stmt.value
        if isinstance(value, ast.Call) and any(k.arg == "init" and isinstance(k.value, ast.Constant)
                                               and k.value.value is False for k in value.keywords):
            continue
        out.append(stmt.target.id)
    return out


def _scan(tree: ast.AST) -> list[tuple[str, int, bool]]:
    """(class, number of init fields, declared kw_only) for every wide dataclass in `tree`."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        decorators = [d for d in node.decorator_list if _is_dataclass_decorator(d)]
        n = len(_init_fields(node))
        if decorators and n > WIDE:
            kw_only = any(isinstance(d, ast.Call) and any(k.arg == "kw_only" and isinstance(k.value, ast.Constant)
                                                          and k.value.value is True for k in d.keywords)
                          for d in decorators)
            found.append((node.name, n, kw_only))
    return found


def _wide_dataclasses() -> list[tuple[str, str, int, bool]]:
    """(file, class, number of init fields, declared kw_only) for every wide dataclass in the package."""
    return [(str(path.relative_to(PACKAGE)), *row) for path in sorted(PACKAGE.rglob("*.py"))
            for row in _scan(ast.parse(path.read_text(encoding="utf-8")))]


def test_every_wide_dataclass_is_keyword_only() -> None:
    wide = _wide_dataclasses()
    assert len(wide) > 100  # the scan sees the package's records, not an empty folder
    positional = [f"{f}: {c} ({n} fields)" for f, c, n, kw in wide if not kw]
    assert positional == [], "declare these @dataclass(..., kw_only=True):\n" + "\n".join(positional)


def test_the_scan_finds_a_positional_wide_record(tmp_path: Path) -> None:
    """The checker itself: a wide dataclass without kw_only is reported, a narrow one is not."""
    source = ("from dataclasses import dataclass\n\n@dataclass(frozen=True)\nclass Wide:\n"
              + "".join(f"    f{i}: int\n" for i in range(5))
              + "\n@dataclass\nclass Narrow:\n" + "".join(f"    f{i}: int\n" for i in range(4)))
    assert _scan(ast.parse(source)) == [("Wide", 5, False)]
    assert _scan(ast.parse(source.replace("(frozen=True)", "(frozen=True, kw_only=True)"))) == [("Wide", 5, True)]


@pytest.mark.parametrize("module, name", [("attrib_audit.audit.results", "AurocRow"),
                                          ("attrib_audit.scorers.base", "ScorerSpec"),
                                          ("attrib_audit.stats.threshold", "Certificate")])
def test_python_refuses_a_positional_wide_record(module: str, name: str) -> None:
    cls = getattr(importlib.import_module(module), name)
    n = len([f for f in dataclasses.fields(cls) if f.init])
    assert n > WIDE
    with pytest.raises(TypeError, match="positional"):
        cls(*range(n))
