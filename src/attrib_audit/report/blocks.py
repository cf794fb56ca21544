"""The pieces a report section is made of; the Markdown and HTML renderers draw the same blocks,
so both formats always show the same numbers."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Para:
    text: str


@dataclass
class Note:
    """A caveat the reader must not miss (truncation, skipped data, a section that could not be drawn)."""

    text: str


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class Figure:
    """A plot saved as PNG and SVG under plots/; the HTML embeds the SVG as a data URI."""

    name: str
    caption: str
    png: Path
    svg: Path
    alt: str = ""


Block = Para | Note | Table | Figure


@dataclass
class Section:
    key: str
    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> "Section":
        self.blocks.extend(blocks)
        return self
