"""The pieces a report section is made of; the Markdown and HTML renderers draw the same blocks,
so both formats always show the same numbers."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from attrib_audit.files.jsonfile import LayoutError


@dataclass
class Para:
    text: str


@dataclass
class Note:
    """A caveat the reader must not miss (truncation, skipped data, a section that could not be drawn)."""

    text: str


@dataclass
class Code:
    """A command line or other text to copy verbatim."""

    text: str


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass(kw_only=True)
class Figure:
    """A plot saved as SVG (and PNG when asked) under plots/; the HTML embeds the SVG as a data URI."""

    name: str
    caption: str
    png: Path | None
    svg: Path
    alt: str = ""
    width_px: int = 0  # display width in the HTML (0: the image's own)


Block = Para | Note | Code | Table | Figure


@dataclass
class Section:
    key: str
    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> "Section":
        self.blocks.extend(blocks)
        return self


LAYOUT_ERRORS = (LayoutError,)  # a key missing from a saved file: a note; any other error propagates


def guard(what: str, make, *args) -> list[Block]:
    """The blocks `make(*args)` returns, or one note saying `what` had an unexpected layout."""
    try:
        return list(make(*args))
    except LAYOUT_ERRORS as exc:
        return [Note(f"{what} was skipped: its saved results do not have the layout this report reads "
                     f"({exc}).")]
