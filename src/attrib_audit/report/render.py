"""Markdown and self-contained HTML from the same sections (no scripts, no network: SVG data URIs)."""
from __future__ import annotations

import base64
import html
import os
import re
from pathlib import Path

from attrib_audit.report.blocks import Code, Figure, Note, Para, Section, Table

CSS = """
body{font-family:"DejaVu Sans","Liberation Sans",Arial,sans-serif;color:#1a1a1a;max-width:1180px;margin:0 auto;
padding:24px 32px 64px;line-height:1.45;font-size:15px}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:36px 0 10px;padding-top:8px;border-top:2px solid #0072B2}
.meta{color:#555;font-size:13px;margin:0 0 12px}
nav{background:#f4f7fa;border:1px solid #dbe3ea;padding:8px 14px;border-radius:4px;font-size:14px;
display:flex;flex-wrap:wrap;gap:4px 16px}
nav a{color:#0057a0;text-decoration:none;white-space:nowrap}
#headline>p:not(.note){font-size:16px}
.method{color:#444;font-size:13px}
.note{background:#fff6e0;border-left:4px solid #E69F00;padding:6px 12px;margin:10px 0}
.table-wrap{overflow-x:auto;margin:10px 0}
table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef2f6}tr:nth-child(even) td{background:#fafbfc}
caption{caption-side:top;text-align:left;color:#444;font-size:13px;padding:0 0 4px}
figure{margin:18px 0}figure img{max-width:100%;height:auto;border:1px solid #eee;background:#fff}
figcaption{color:#444;font-size:13px;margin-top:4px;max-width:900px}
pre{background:#f6f8fa;border:1px solid #d0d7de;padding:8px 12px;white-space:pre-wrap;
word-break:break-all;font-size:13px}
"""


# Every block's text is plain text (dataset names, judge replies), so whatever Markdown or inline HTML would
# read as syntax is backslash-escaped (CommonMark renders an escaped ASCII punctuation character literally):
# characters that act anywhere, `<` that could open a tag or autolink, `\\` before punctuation, `_` where it can
# open or close emphasis, `]` where it would end a link text,
# and what starts a block (heading, quote, list, link definition) at the start of the line.
_MD_ANYWHERE = re.compile(r"\\(?=[!-/:-@\[-`{-~])|[`*&|~]|<(?=[A-Za-z/!?])|(?<![^\W_])_|_(?![^\W_])|\](?=[(\[])")
_MD_LINE_START = re.compile(r"^([-+=#>\[]|\d{1,9}(?=[.)](\s|$)))")


def md_text(text: str, line_start: bool = False) -> str:
    """Plain text as inert Markdown on one line: no emphasis, links, images, HTML, or (`line_start`: the text
    begins a line) headings, quotes and lists."""
    flat = " ".join(str(text).split())
    escaped = _MD_ANYWHERE.sub(lambda m: "\\" + m.group(0), flat)
    m = _MD_LINE_START.match(escaped) if line_start else None
    if m is None:
        return escaped
    if m.group(1).isdigit():  # "1. x" would start an ordered list
        return escaped[: m.end()] + "\\" + escaped[m.end():]
    return "\\" + escaped


def md_code(text: str) -> list[str]:
    """A fenced block whose fence is longer than any backtick run inside, so the text cannot close it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, text, fence]


def to_markdown(title: str, meta: str, sections: list[Section], md_path: Path) -> str:
    e = md_text
    out = [f"# {e(title)}", "", f"_{e(meta)}_", ""]
    for sec in sections:
        out += [f"## {e(sec.title)}", ""]
        for b in sec.blocks:
            if isinstance(b, Para):
                out += [e(b.text, line_start=True), ""]
            elif isinstance(b, Note):
                out += [f"> **Note:** {e(b.text)}", ""]
            elif isinstance(b, Code):
                out += [*md_code(b.text), ""]
            elif isinstance(b, Table):
                if b.caption:
                    out += [f"*{e(b.caption)}*", ""]
                out.append("| " + " | ".join(map(e, b.header)) + " |")
                out.append("|" + "|".join("---" for _ in b.header) + "|")
                out += ["| " + " | ".join(map(e, r)) + " |" for r in b.rows]
                out.append("")
            elif isinstance(b, Figure):
                svg = Path(os.path.relpath(b.svg, md_path.parent)).as_posix()
                img = Path(os.path.relpath(b.png, md_path.parent)).as_posix() if b.png else svg
                out += [f"![{e(b.alt)}](<{img}>)", "", f"*{e(b.caption)}* ([SVG](<{svg}>))", ""]
    return "\n".join(out)


def html_text(value: object) -> str:
    """Any value as inert HTML text, shown as Markdown shows it (`str`): a field edited in results.json may hold a
    number, null, a list or an object where the report expects text."""
    return html.escape(str(value))


def _html_block(b) -> str:
    e = html_text
    if isinstance(b, Para):
        return f"<p>{e(b.text)}</p>"
    if isinstance(b, Note):
        return f'<p class="note"><strong>Note:</strong> {e(b.text)}</p>'
    if isinstance(b, Code):
        return f"<pre>{e(b.text)}</pre>"
    if isinstance(b, Table):
        head = "".join(f"<th>{e(h)}</th>" for h in b.header)
        body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in b.rows)
        cap = f"<caption>{e(b.caption)}</caption>" if b.caption else ""
        return f'<div class="table-wrap"><table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    if isinstance(b, Figure):
        data = base64.b64encode(b.svg.read_bytes()).decode("ascii")
        width = f' width="{b.width_px}"' if b.width_px else ""
        return (f'<figure id="fig-{e(b.name)}"><img alt="{e(b.alt)}"{width} src="data:image/svg+xml;base64,{data}">'
                f"<figcaption>{e(b.caption)}</figcaption></figure>")
    raise TypeError(f"unknown report block {type(b).__name__}")


def to_html(title: str, meta: str, sections: list[Section], run_id: str | None = None) -> str:
    e = html_text
    run = f'<meta name="attrib-audit-run-id" content="{e(run_id)}">' if run_id else ""
    nav = "".join(f'<a href="#{e(s.key)}">{e(s.title)}</a>' for s in sections)
    body = "".join(f'<section id="{e(s.key)}"><h2>{e(s.title)}</h2>{"".join(map(_html_block, s.blocks))}</section>'
                   for s in sections)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">{run}<title>{e(title)}</title>'
            f"<style>{CSS}</style></head><body><h1>{e(title)}</h1><p class=\"meta\">{e(meta)}</p>"
            f"<nav>{nav}</nav>{body}</body></html>\n")
