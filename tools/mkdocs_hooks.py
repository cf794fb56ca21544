"""MkDocs hook: the docs' generated parts, made from the code at build time so that they cannot drift from it.

`<!-- generated: cli -->` becomes the CLI reference (attrib_audit.cli.reference, from the parser itself) and
`<!-- generated: results-json -->` the fields of results.json (from the records of attrib_audit.audit.results,
with the comment each field carries there). Every code block gets its width in characters (`--cols`), so the
stylesheet can shrink the font of a wide terminal table until it fits the text column instead of clipping it.
"""
from __future__ import annotations

import dataclasses
import html
import inspect
import re
import typing

# terminal outputs are printed for a 100-column terminal (tests/test_docs.py sets COLUMNS=100): a longer line is
# prose, which wraps, and must not shrink the whole block
MAX_COLS = 100
_BLOCK = re.compile(r'<div class="([^"]*\bhighlight\b[^"]*)"><pre>(.*?)</pre>', re.S)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "<!-- generated: cli -->" in markdown:
        from attrib_audit.cli.reference import markdown as cli_markdown
        markdown = markdown.replace("<!-- generated: cli -->", cli_markdown())
    if "<!-- generated: results-json -->" in markdown:
        markdown = markdown.replace("<!-- generated: results-json -->", results_markdown())
    return markdown


def on_page_content(content: str, page, config, files) -> str:
    return code_widths(content)


def code_widths(content: str) -> str:
    """Mark each highlighted block with `--cols`: its longest line of at most MAX_COLS characters."""
    def mark(m: re.Match) -> str:
        text = html.unescape(re.sub(r"<[^>]+>", "", m.group(2)))
        cols = max([len(line.rstrip()) for line in text.split("\n") if len(line.rstrip()) <= MAX_COLS] + [1])
        return f'<div class="{m.group(1)}" style="--cols: {cols}"><pre>{m.group(2)}</pre>'
    return _BLOCK.sub(mark, content)


def results_markdown() -> str:
    """One table per record reachable from AuditResults, top level first."""
    from attrib_audit.audit import results, saved
    saved.bind_records()  # their names resolve AuditResults' hints
    seen, order, todo = set(), [], [results.AuditResults]
    while todo:
        cls = todo.pop(0)
        if cls.__name__ in seen:
            continue
        seen.add(cls.__name__)
        order.append(cls)
        todo.extend(t for t in _nested(cls) if t.__name__ not in seen)
    return "\n".join(_table(cls) for cls in order)


def _is_record(t) -> bool:
    return isinstance(t, type) and dataclasses.is_dataclass(t)


def _nested(cls) -> list:
    found = []
    for hint in typing.get_type_hints(cls).values():
        stack = [hint]
        while stack:
            t = stack.pop()
            if _is_record(t):
                found.append(t)
            stack.extend(typing.get_args(t))
    return found


def _comments(cls) -> dict[str, str]:
    """The `# ...` comment after each field in the class source (or the record it extends): what the field holds, in
    the code's words."""
    out: dict[str, str] = {}
    for base in reversed([c for c in cls.__mro__ if _is_record(c)]):
        for line in inspect.getsource(base).splitlines():
            m = re.match(r"\s+(\w+): .*?#\s*(.+)$", line)
            if m:
                out[m.group(1)] = m.group(2).strip()
    return out


def _type_name(t) -> str:
    if _is_record(t):
        return f"[{t.__name__}](#{t.__name__.lower()})"
    args = typing.get_args(t)
    origin = typing.get_origin(t)
    if origin is typing.Union or type(t).__name__ == "UnionType":
        return " \\| ".join(_type_name(a) for a in args)
    if origin is tuple and args and args[-1] is Ellipsis:  # written as a list
        return f"list[{_type_name(args[0])}]"
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in args)}]"
    return "None" if t is type(None) else getattr(t, "__name__", str(t).replace("typing.", ""))


def _rows(cls, optional: bool = False) -> list[str]:
    """A record's keys as table rows, in the order they are written; an inline part's keys in its place."""
    hints = typing.get_type_hints(cls)
    notes = {k: v.replace("|", "\\|") for k, v in _comments(cls).items()}
    rows = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("omit"):
            continue
        sometimes = optional or bool(f.metadata.get("skip_default"))
        if f.metadata.get("inline"):
            part = next(a for a in (hints[f.name], *typing.get_args(hints[f.name])) if _is_record(a))
            rows += _rows(part, sometimes)
            continue
        rows.append(f"| `{f.metadata.get('json', f.name)}` | {_type_name(hints[f.name])} | "
                    f"{'when present' if sometimes else 'yes'} | {notes.get(f.name, '')} |")
    return rows


def _table(cls) -> str:
    doc = inspect.cleandoc(cls.__doc__ or "")
    return (f"### {cls.__name__}\n\n{doc}\n\n| field | type | always | what it holds |\n|---|---|---|---|\n"
            + "\n".join(_rows(cls)) + "\n")
