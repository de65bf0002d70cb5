"""The hour-of-week heatmap: median short-context TTFT per weekday and hour, per provider.

A cell's median is only coloured when it rests on ``MIN_CELL_PROBES`` answers: a cell of
one slow answer was drawn as red as a real rush hour. With TTFT spread like the probes'
(log-normal, sigma about 0.25) the median of 10 answers is within about +/-20 % of the
hour's true median 95 % of the time, the smallest step the colour scale (0.5x to 2x)
shows well. Thinner cells are hatched grey, with their count in a tooltip.
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
from pipeline.report.svg import figure_svg, new_figure, plain, style

__all__ = ["MIN_CELL_PROBES", "HourGrid", "heatmap_chart", "heatmap_figure", "hour_grid"]

MIN_CELL_PROBES = 10
_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_THIN_FILL = "#f3f4f6"
_TITLE_CHARS = 36


@dataclass(frozen=True, slots=True)
class HourGrid:
    """One provider's weekday x hour cells: TTFT over its median, and answer counts.

    ``ratio`` is NaN where a cell has no answers or fewer than ``MIN_CELL_PROBES``."""

    ratio: np.ndarray[Any, Any]
    count: np.ndarray[Any, Any]

    def thin_cells(self) -> list[tuple[int, int, int]]:
        """(weekday, hour, answers) of the cells with answers, but too few to colour."""
        days, hours = np.nonzero((self.count > 0) & (self.count < MIN_CELL_PROBES))
        return [(int(d), int(h), int(self.count[d, h])) for d, h in zip(days, hours, strict=True)]


def hour_grid(part: pl.DataFrame) -> HourGrid:
    """``part``'s cells relative to the median of its well-counted cells."""
    ratio = np.full((7, 24), np.nan)
    count = np.zeros((7, 24), dtype=int)
    for row in part.iter_rows(named=True):
        count[int(row["dow"]), int(row["hod"])] = int(row["n"])
    judged = part.filter(pl.col("n") >= MIN_CELL_PROBES)
    if judged.height == 0:
        return HourGrid(ratio, count)
    median = float(np.median(judged["ttft"].to_numpy()))
    for row in judged.iter_rows(named=True):
        ratio[int(row["dow"]), int(row["hod"])] = row["ttft"] / median
    return HourGrid(ratio, count)


def _usable(how: pl.DataFrame) -> pl.DataFrame:
    # Successful probes may carry no TTFT (nothing usable streamed), so an hour's median
    # can be null; a zero one has no ratio. Such hours stay blank.
    return how.filter(pl.col("ttft").is_finite() & (pl.col("ttft") > 0))


def _short_name(provider: str) -> str:
    """A panel title that fits its panel (a long name ran into the next one)."""
    return provider if len(provider) <= _TITLE_CHARS else provider[: _TITLE_CHARS - 1] + "…"


def heatmap_figure(how: pl.DataFrame, providers: list[str]) -> tuple[Figure, list[str]] | None:
    """The figure, and one tooltip per thin cell in the order of their gids ``thin-<i>``."""
    how = _usable(how)
    shown = [p for p in providers if how.filter(pl.col("provider") == p).height]
    if not shown:
        return None
    cols = min(3, len(shown))
    rows = -(-len(shown) // cols)
    width = 9.0 if cols > 1 else 4.5
    fig = new_figure(
        width, 0.25 + 1.5 * rows, margins=(0.5, 1.1, 0.3, 0.3), rows=rows, cols=cols,
        gap_in=(0.45, 0.55),
    )  # fmt: skip
    axes = fig.subplots(rows, cols, squeeze=False)
    norm = TwoSlopeNorm(vmin=0.5, vcenter=1.0, vmax=2.0)
    tips: list[str] = []
    mesh = None
    for ax, provider in zip(axes.flat, shown, strict=False):
        grid = hour_grid(how.filter(pl.col("provider") == provider))
        mesh = ax.pcolormesh(np.clip(grid.ratio, 0.5, 2.0), cmap="RdBu_r", norm=norm)
        for day, hour, n in grid.thin_cells():
            cell = Rectangle((hour, day), 1, 1, facecolor=_THIN_FILL, edgecolor="#c4c8cf",
                             hatch="////", lw=0)  # fmt: skip
            cell.set_gid(f"thin-{len(tips)}")
            ax.add_patch(cell)
            answers = f"{n} answer" + ("" if n == 1 else "s")
            tips.append(f"{provider}, {_DAYS[day]} {hour:02d}h UTC: {answers}, too few")
        ax.set_title(plain(_short_name(provider)), fontsize=8.5)
        ax.set_yticks(np.arange(7) + 0.5, _DAYS, fontsize=7)
        ax.set_xticks([0, 6, 12, 18, 24], ["0h", "6h", "12h", "18h", "24h"], fontsize=7)
        ax.set_xlim(0, 24)
        ax.set_ylim(7, 0)
        ax.grid(False)
    for ax in list(axes.flat)[len(shown) :]:
        ax.set_visible(False)
    if mesh is not None:
        cax = fig.add_axes((1 - 0.9 / width, 0.3, 0.1 / width, 0.5))
        fig.colorbar(mesh, cax=cax, label="× median TTFT", ticks=[0.5, 1, 2])
    return fig, tips


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
        fig, tips = drawn
        svg = _with_tooltips(figure_svg(fig, "heatmap", label="TTFT by hour of week"), tips)
    return Chart(
        "heatmap",
        "Hour of week",
        "Median short-context TTFT in each hour of the week (UTC) over the last four "
        "weeks, relative to the provider's median hour. Red hours are slower. Hours with "
        f"fewer than {MIN_CELL_PROBES} answers are hatched grey, not coloured: too few "
        "for a median (hover for the count); blank hours had none. A regular pattern is "
        "demand, not degradation.",
        svg,
    )
