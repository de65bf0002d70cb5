"""Turn a matplotlib figure into lean SVG that can sit inline in an HTML page.

No pyplot: figures are built with ``matplotlib.figure.Figure`` so rendering needs no GUI
backend and keeps no global state. Element ids are prefixed per chart, because several
SVGs inline in one document share one id namespace.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib as mpl
from markupsafe import Markup
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

__all__ = ["INK", "MUTED", "PALETTE", "figure_svg", "new_figure", "plain", "style"]

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common form
# of colour blindness. Yellow (#F0E442) is left out: too faint for a line on white.
PALETTE = [
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#000000",  # black
]
INK = "#1f2937"
MUTED = "#6b7280"

_RC: Any = {  # rc keys are typed as literals; a plain dict is clearer
    # Text as <text>, not glyph paths: matplotlib's one font (DejaVu Sans) has no CJK
    # glyphs and drew boxes for a provider named 通义千问; the reader's browser picks a
    # font that has them (``_FONTS``), as it does for the page around the chart.
    "svg.fonttype": "none",
    "svg.image_inline": True,
    "font.size": 8.5,
    "font.family": "DejaVu Sans",
    "axes.edgecolor": "#d1d5db",
    "axes.labelcolor": INK,
    "axes.titlesize": 9.5,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#eef0f3",
    "grid.linewidth": 0.7,
    "xtick.color": MUTED,
    "ytick.color": MUTED,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "lines.linewidth": 1.3,
    "path.simplify": True,
    "path.simplify_threshold": 0.5,
}

_ID = re.compile(r'\bid="([^"]+)"')
_FONT = "font-family: 'DejaVu Sans'"
_FONTS = "font-family: 'DejaVu Sans', Verdana, sans-serif"  # the layout's metrics first
# Layout measures text in DejaVu Sans, which warns for each glyph it lacks; the browser
# draws those glyphs from its own fonts, so the warning says nothing about the page.
_MISSING_GLYPH = r"Glyph \d+ .* missing from font"
_REF = re.compile(r'(href="#|url\(#)([^")]+)')


def plain(text: str) -> str:
    """Text for a matplotlib label: ``$`` would otherwise start mathtext."""
    return text.replace("$", r"\$")


@contextmanager
def style() -> Iterator[None]:
    """House style for every chart."""
    with mpl.rc_context(_RC):
        yield


def new_figure(
    width_in: float,
    height_in: float,
    *,
    margins: tuple[float, float, float, float] = (0.9, 0.2, 0.35, 0.35),
    rows: int = 1,
    cols: int = 1,
    gap_in: tuple[float, float] = (0.25, 0.7),
) -> Figure:
    """A figure with fixed margins in inches (left, right, top, bottom).

    Fixed margins instead of matplotlib's constrained layout: the layout engine draws
    every figure twice and was most of the report's rendering time.
    """
    if rows < 1 or cols < 1:
        raise ValueError(f"a figure needs at least one row and column, not {rows}x{cols}")
    left, right, top, bottom = margins
    fig = Figure(figsize=(width_in, height_in))
    axes_h = max(0.1, (height_in - top - bottom - (rows - 1) * gap_in[0]) / rows)
    axes_w = max(0.1, (width_in - left - right - (cols - 1) * gap_in[1]) / cols)
    fig.subplots_adjust(
        left=left / width_in,
        right=1 - right / width_in,
        top=1 - top / height_in,
        bottom=bottom / height_in,
        hspace=gap_in[0] / axes_h,
        wspace=gap_in[1] / axes_w,
    )
    return fig


def figure_svg(fig: Figure, key: str, *, label: str) -> Markup:
    """Render ``fig`` as inline SVG markup; ``label`` becomes its accessible name.

    ``key`` must be unique within the page: it prefixes element ids and seeds the
    id hash, which also makes output reproducible.
    """
    buffer = io.StringIO()
    with mpl.rc_context({"svg.hashsalt": key}), warnings.catch_warnings():
        warnings.filterwarnings("ignore", _MISSING_GLYPH, UserWarning)
        FigureCanvasSVG(fig)
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue().replace(_FONT, _FONTS)
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>\s*|<!--.*?-->\s*", "", text, flags=re.S)
    text = _ID.sub(lambda m: f'id="{key}-{m[1]}"', text)
    text = _REF.sub(lambda m: f"{m[1]}{key}-{m[2]}", text)
    text = re.sub(r'<svg([^>]*?) width="[^"]+" height="[^"]+"', r"<svg\1", text, count=1)
    safe_label = str(Markup.escape(label))
    text = text.replace(
        "<svg", f'<svg class="chart" data-chart="{key}" role="img" aria-label="{safe_label}"', 1
    )
    # The SVG is generated by matplotlib from numbers and our own labels, never model text.
    return Markup(text)  # noqa: S704
