"""The CLI reference of the docs, generated from the parser itself so that it cannot drift from it.

docs' build hook (tools/mkdocs_hooks.py) puts `markdown()` where docs/reference/cli.md says
`<!-- generated: cli -->`: per command its one-line summary, usage, every option with its default and help,
and the examples its --help ends with.
"""
from __future__ import annotations

import argparse

from attrib_audit.cli.parser import EXAMPLES, build_parser, commands


def markdown() -> str:
    """Every command and subcommand of `attrib-audit`, in --help order, as Markdown."""
    parser = build_parser()
    parts = []
    for name, p, _ in commands(parser):
        title = f"attrib-audit {name}".strip()
        parts.append(f"## `{title}` {{#{anchor(name)}}}\n\n{_escape(p.description or '')}\n")
        parts.append("```text\n" + p.format_usage().strip() + "\n```\n")
        parts.extend(_options(p))
        parts.append("**Examples**\n\n```bash\n" + "\n".join(EXAMPLES[name]) + "\n```\n")
    return "\n".join(parts)


def anchor(name: str) -> str:
    """The heading id of a command in the reference (`models check` -> `models-check`)."""
    return name.replace(" ", "-") or "attrib-audit"


def _options(p: argparse.ArgumentParser) -> list[str]:
    out = []
    formatter = p._get_formatter()  # expands %(default)s and %% in help as --help does
    for group in p._action_groups:
        rows, title = [], None
        for a in group._group_actions:
            if isinstance(a, argparse._SubParsersAction):
                for sub in a._choices_actions:
                    full = f"{p.prog.removeprefix('attrib-audit').strip()} {sub.dest}".strip()
                    rows.append(f"- [`{sub.dest}`](#{anchor(full)}): {_escape(sub.help or '')}")
                title = "commands"
                continue
            if a.help == argparse.SUPPRESS:
                continue
            rows.append(f"- {_flag(a)}: {_escape(formatter._expand_help(a) if a.help else '')}{_default(a)}")
        if rows:
            if title is None:
                title = {"positional arguments": "arguments"}.get(group.title or "", group.title or "")
            out.append(f"**{_escape(title[:1].upper() + title[1:])}**\n\n" + "\n".join(rows) + "\n")
    return out


def _flag(a: argparse.Action) -> str:
    if not a.option_strings:
        return f"`{a.metavar or a.dest}`"
    named = " ".join(a.metavar) if isinstance(a.metavar, tuple) else a.metavar
    metavar = "" if a.nargs == 0 else " " + (named or (("{" + ",".join(map(str, a.choices)) + "}")
                                                     if a.choices else a.dest.upper()))
    return ", ".join(f"`{s}{metavar}`" for s in a.option_strings)


def _default(a: argparse.Action) -> str:
    if (not a.option_strings or a.default is None or a.default is False or a.default == []
            or a.default == argparse.SUPPRESS or "default" in (a.help or "")):
        return ""
    return f" (default `{a.default}`)"


def _escape(text: str) -> str:
    """Help text as Markdown: outside `code`, `<` and `*` would otherwise be read as HTML or emphasis."""
    parts = text.split("`")
    return "`".join(s if i % 2 else s.replace("<", "&lt;").replace("*", "\\*") for i, s in enumerate(parts))
