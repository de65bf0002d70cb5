"""The hour-of-week heatmap: median short-context TTFT per weekday and hour, per provider.

Hourly probing over four weeks puts 4 answers in an hour of the week: every cell was
hatched and the chart said nothing. Cells are widened (``LEVELS``: blocks of hours, then
weekdays pooled) until nearly all of them hold enough answers, and the caption says what
a cell is.

A cell's median is only coloured when it rests on ``MIN_CELL_PROBES`` answers: a cell of
one slow answer was drawn as red as a real rush hour. With TTFT spread like the probes'
(log-normal, sigma about 0.25) the median of 10 answers is within about +/-20 % of the
hour's true median 95 % of the time, the smallest step the colour scale (0.5x to 2x)
shows well. Thinner cells are hatched grey, with their count in a tooltip.

The cells are counted and their medians taken inside DuckDB at every level at once
(``cells_sql``): returning every answer made the report's cost grow with the probe
cadence; now it reads at most 9 x 168 rows per provider, whatever the cadence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from markupsafe import Markup
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from pipeline.report.context import Chart
from pipeline.report.heatmap_cells import DAYS, LEVELS, Cells
from pipeline.report.svg import figure_svg, new_figure, plain, style
from pipeline.report.text_width import fit

__all__ = [
    "LEVELS",
    "MIN_CELL_PROBES",
    "Cells",
    "HourGrid",
    "cells_for",
    "heatmap_chart",
    "heatmap_figure",
    "hour_grid",
]

MIN_CELL_PROBES = 10

_THIN_FILL = "#f3f4f6"
_TITLE_CHARS = 36  # Latin letters' width of a panel's title
_FILLED = 0.9  # a level is used when this share of its cells with answers has enough


@dataclass(frozen=True, slots=True)
class HourGrid:
    """One provider's cells: TTFT over its median, and answer counts.

    ``ratio`` is NaN where a cell has no answers or fewer than ``MIN_CELL_PROBES``."""

    ratio: np.ndarray[Any, Any]
    count: np.ndarray[Any, Any]

    def thin_cells(self) -> list[tuple[int, int, int]]:
        """(row, column, answers) of the cells with answers, but too few to colour."""
        rows, cols = np.nonzero((self.count > 0) & (self.count < MIN_CELL_PROBES))
        return [(int(r), int(c), int(self.count[r, c])) for r, c in zip(rows, cols, strict=True)]


def _binned(how: pl.DataFrame, cells: Cells) -> pl.DataFrame:
    """Per provider and cell of one level: answers ``n`` and their median ``ttft``."""
    return how.filter(pl.col("level") == LEVELS.index(cells))


def cells_for(how: pl.DataFrame) -> Cells:
    """The finest level at which most cells with answers (each provider's) have enough
    for a median."""
    for cells in LEVELS:
        counts = _binned(how, cells)["n"] if how.height else pl.Series([0])
        if (counts >= MIN_CELL_PROBES).mean() >= _FILLED:  # type: ignore[operator]
            return cells
    return LEVELS[-1]


def hour_grid(how: pl.DataFrame, cells: Cells) -> HourGrid:
    """One provider's cells (``cells_sql``) at ``cells``' level, relative to the median
    of its full cells."""
    ratio = np.full((cells.rows, cells.cols), np.nan)
    count = np.zeros((cells.rows, cells.cols), dtype=int)
    binned = _binned(how, cells)
    for row in binned.iter_rows(named=True):
        count[int(row["row"]), int(row["col"])] = int(row["n"])
    judged = binned.filter(pl.col("n") >= MIN_CELL_PROBES)
    if judged.height == 0:
        return HourGrid(ratio, count)
    median = float(np.median(judged["ttft"].to_numpy()))
    for row in judged.iter_rows(named=True):
        ratio[int(row["row"]), int(row["col"])] = row["ttft"] / median
    return HourGrid(ratio, count)


def _short_name(provider: str) -> str:
    """A panel title that fits its panel (a long name ran into the next one; a CJK
    name's characters are each nearly two letters wide, ``text_width``)."""
    return fit(provider, _TITLE_CHARS)


def heatmap_figure(
    how: pl.DataFrame, providers: list[str]
) -> tuple[Figure, list[str], Cells] | None:
    """The figure from ``how`` (``cells_sql``'s rows), one tooltip per thin cell in the
    order of their gids ``thin-<i>``, and what a cell is (``cells_for``: one level for
    every panel, so they read alike)."""
    shown = [p for p in providers if how.filter(pl.col("provider") == p).height]
    if not shown:
        return None
    cells = cells_for(how)
    cols = min(3, len(shown))
    rows = -(-len(shown) // cols)
    width = 9.0 if cols > 1 else 4.5
    panel = 1.5 if cells.rows > 1 else 0.75
    fig = new_figure(
        width, 0.25 + panel * rows, margins=(0.5 if cells.rows > 1 else 0.75, 1.1, 0.3, 0.3),
        rows=rows, cols=cols, gap_in=(0.45, 0.55),
    )  # fmt: skip
    axes = fig.subplots(rows, cols, squeeze=False)
    norm = TwoSlopeNorm(vmin=0.5, vcenter=1.0, vmax=2.0)
    tips: list[str] = []
    mesh = None
    x_edges = np.arange(0, 25, cells.hours)
    for ax, provider in zip(axes.flat, shown, strict=False):
        grid = hour_grid(how.filter(pl.col("provider") == provider), cells)
        clipped = np.clip(grid.ratio, 0.5, 2.0)
        mesh = ax.pcolormesh(x_edges, np.arange(cells.rows + 1), clipped, cmap="RdBu_r", norm=norm)
        for row, col, n in grid.thin_cells():
            cell = Rectangle((col * cells.hours, row), cells.hours, 1, facecolor=_THIN_FILL,
                             edgecolor="#c4c8cf", hatch="////", lw=0)  # fmt: skip
            cell.set_gid(f"thin-{len(tips)}")
            ax.add_patch(cell)
            answers = f"{n} answer" + ("" if n == 1 else "s")
            tips.append(f"{provider}, {cells.name(row, col)} UTC: {answers}, too few")
        ax.set_title(plain(_short_name(provider)), fontsize=8.5)
        days = ["all days"] if cells.pool_days else DAYS
        ax.set_yticks(np.arange(cells.rows) + 0.5, days, fontsize=7)
        ax.set_xticks([0, 6, 12, 18, 24], ["0h", "6h", "12h", "18h", "24h"], fontsize=7)
        ax.set_xlim(0, 24)
        ax.set_ylim(cells.rows, 0)
        ax.grid(False)
    for ax in list(axes.flat)[len(shown) :]:
        ax.set_visible(False)
    if mesh is not None:
        cax = fig.add_axes((1 - 0.9 / width, 0.3, 0.1 / width, 0.5))
        fig.colorbar(mesh, cax=cax, label="× median TTFT", ticks=[0.5, 1, 2])
    return fig, tips, cells


def _with_tooltips(svg: Markup, tips: list[str]) -> Markup:
    """A ``<title>`` (the browser's tooltip) inside each thin cell's group."""
    text = str(svg)
    for i, tip in enumerate(tips):
        opening = f'<g id="heatmap-thin-{i}">'
        text = text.replace(opening, f"{opening}<title>{Markup.escape(tip)}</title>", 1)
    return Markup(text)  # noqa: S704  # our numbers, and provider names escaped above


def heatmap_chart(how: pl.DataFrame, providers: list[str]) -> Chart | None:
    """Median short-context TTFT by weekday and hour, relative to the provider's median."""
    with style():
        drawn = heatmap_figure(how, providers)
        if drawn is None:
            return None
        fig, tips, cells = drawn
        svg = _with_tooltips(figure_svg(fig, "heatmap", label="TTFT by hour of week"), tips)
    pooled = (
        ""
        if cells == LEVELS[0]
        else " (hours are pooled: an hour of the week held too few answers for a median)"
    )
    return Chart(
        "heatmap",
        "Hour of week",
        f"{cells.words()}, in UTC{pooled}. Its colour is the median short-context TTFT "
        "of its answers, relative to the provider's median cell. Red is slower. Cells with "
        f"fewer than {MIN_CELL_PROBES} answers are hatched grey, not coloured: too few "
        "for a median (hover for the count); blank cells had none. A regular pattern is "
        "demand, not degradation.",
        svg,
    )
