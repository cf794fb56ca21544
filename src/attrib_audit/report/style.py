"""Plot style: a colour-blind-safe palette (Okabe & Ito 2008), distinct markers for print in grey,
and one function that saves every figure as SVG (and as PNG only when the report is asked for PNGs)."""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from attrib_audit.report.blocks import Figure

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HEATMAP_CMAP = "cividis"  # perceptually uniform and readable with red-green colour blindness

RC = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.spines.top": False, "axes.spines.right": False,
    # text stays <text> (sans-serif fallback), not glyph outlines: smaller files drawn faster, and a reader can
    # select and search a plot's labels
    "svg.fonttype": "none", "savefig.dpi": 150, "figure.dpi": 100,
    "svg.hashsalt": "attrib-audit",  # stable SVG ids, so the same results give the same file
}


# Every figure uses constrained layout, which keeps labels and legends inside the canvas: no `savefig.bbox: tight`,
# whose extra layout pass drew each figure twice per format. `save` lays a figure out once and then switches the
# engine off, since savefig would otherwise lay it out again in a throw-away draw before each format.
DISPLAY_PX_PER_INCH = 125  # on screen a little larger than 96 px/in, so 8-pt annotations stay legible


def colour(i: int) -> str:
    return OKABE_ITO[i % len(OKABE_ITO)]


def marker(i: int) -> str:
    return MARKERS[i % len(MARKERS)]


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend, imported when a figure is drawn (not when one comes from
    the figure cache)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def rc():
    """Context for drawing: every plot function draws and saves inside it."""
    return pyplot().rc_context(RC)


def slice_panel(ax, slices: list[str], construct: str, reference: float) -> None:
    """Axes of one construct's per-slice interval panel: slices top to bottom, a dashed reference line."""
    ax.axvline(reference, color="#555555", linestyle="--", linewidth=0.8)
    ax.set_yticks(range(len(slices)), slices)
    ax.set_ylim(len(slices) - 0.5, -0.5)
    ax.set_title(f"construct: {construct}", loc="left")
    ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)


_PNG: ContextVar[bool] = ContextVar("attrib_audit_report_png", default=False)


def png_wanted() -> bool:
    return _PNG.get()


@contextmanager
def png_copies(on: bool):
    """While open, `save` also writes a PNG of each figure (the HTML embeds only the SVG, so PNGs are opt-in)."""
    token = _PNG.set(bool(on))
    try:
        yield
    finally:
        _PNG.reset(token)


def save(fig, plots: Path, name: str, caption: str, alt: str = "") -> Figure:
    """Write plots/NAME.svg (and plots/NAME.png inside `png_copies(True)`), close the figure, return its block."""
    plots.mkdir(parents=True, exist_ok=True)
    svg = plots / f"{name}.svg"
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
        fig.set_layout_engine(None)
    fig.savefig(svg, metadata={"Date": None, "Creator": None})
    png = None
    if _PNG.get():
        png = plots / f"{name}.png"
        fig.savefig(png, metadata={"Software": None})
    width = round(fig.get_figwidth() * DISPLAY_PX_PER_INCH)
    pyplot().close(fig)
    return Figure(name=name, caption=caption, png=png, svg=svg, alt=alt or caption, width_px=width)
