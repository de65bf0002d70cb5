"""Time-series charts of the weekly report: TTFT, long-context penalty, release cycle.

Each function takes frames from ``ReportData`` and returns a ``Chart`` or ``None`` when
there is nothing to draw. Data arrive already aggregated by day, which keeps the SVG
small however long the history is.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import matplotlib.dates as mdates
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from pipeline.report.context import Chart
from pipeline.report.svg import INK, MUTED, PALETTE, figure_svg, new_figure, plain, style

__all__ = [
    "cycle_chart",
    "dates",
    "mark_timeline",
    "ms_label",
    "penalty_chart",
    "time_axis",
    "ttft_chart",
]

_CLASS_COLOURS = {"short": PALETTE[0], "long": PALETTE[1]}
_PHASE_COLOURS = {"degraded": "#fca5a5", "recovering": "#fde68a"}
STAGE_COLOURS = {
    "stable": "#d1d5db",
    "subtle_degradation": "#fde68a",
    "long_context_issues": "#fb923c",
    "major_degradation": "#dc2626",
    "recovery": "#93c5fd",
}
STAGE_LABELS = {
    "stable": "stable",
    "subtle_degradation": "subtle degradation",
    "long_context_issues": "long-context issues",
    "major_degradation": "major degradation",
    "recovery": "recovery",
}


def dates(frame: pl.DataFrame, column: str) -> np.ndarray[Any, Any]:
    """A timestamp column as naive-UTC datetime64 for matplotlib."""
    series = frame[column]
    if isinstance(series.dtype, pl.Datetime) and series.dtype.time_zone is not None:
        series = series.dt.replace_time_zone(None)
    elif series.dtype == pl.Date:
        series = series.cast(pl.Datetime("us"))
    return series.to_numpy()


def ms_label(value: float, _pos: object = None) -> str:
    """Milliseconds as a short axis label."""
    if value >= 1000:
        return f"{value / 1000:.3g} s"
    return f"{value:.3g} ms"


def _x(moment: datetime) -> float:
    """A UTC moment as a matplotlib date number."""
    return float(mdates.date2num(moment.replace(tzinfo=None)))


def time_axis(ax: Axes) -> None:
    """Concise date ticks (month names, years only when they change)."""
    locator = mdates.AutoDateLocator(minticks=4, maxticks=9)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, show_offset=False))


def mark_timeline(
    ax: Axes,
    *,
    phases: pl.DataFrame,
    releases: pl.DataFrame,
    week: tuple[datetime, datetime],
    now: datetime,
) -> None:
    """Shade degraded phases, draw release lines and highlight the report's week."""
    ax.axvspan(_x(week[0]), _x(week[1]), color="#e5e7eb", alpha=0.6, lw=0, zorder=0)
    for row in phases.iter_rows(named=True):
        colour = _PHASE_COLOURS.get(str(row["label"]))
        if colour is None:
            continue
        end = row["end_at"] or now
        ax.axvspan(_x(row["start_at"]), _x(end), color=colour, alpha=0.45, lw=0, zorder=0)
    for row in releases.iter_rows(named=True):
        release = row["release_date"]
        at = _x(datetime(release.year, release.month, release.day))
        ax.axvline(at, color=INK, lw=0.8, ls=(0, (2, 2)), zorder=1)
        ax.annotate(
            plain(str(row["model"])),
            (at, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -2),
            textcoords="offset points",
            va="top",
            fontsize=7,
            color=INK,
        )


def ttft_chart(
    provider: str,
    daily: pl.DataFrame,
    *,
    key: str,
    phases: pl.DataFrame,
    releases: pl.DataFrame,
    week: tuple[datetime, datetime],
    now: datetime,
) -> Chart | None:
    """Daily TTFT p50 (solid) and p95 (dashed) per context class, log scale."""
    daily = daily.filter(pl.col("p50").is_not_null())
    if daily.height == 0:
        return None
    with style():
        fig = new_figure(9.0, 2.5, margins=(0.9, 0.2, 0.3, 0.3))
        ax = fig.add_subplot()
        for cls, part in daily.partition_by("context_class", as_dict=True).items():
            name = str(cls[0])
            colour = _CLASS_COLOURS.get(name, PALETTE[2])
            x = dates(part, "day")
            ax.plot(x, part["p50"].to_numpy(), color=colour, label=f"{name} p50")
            ax.plot(
                x,
                part["p95"].to_numpy(),
                color=colour,
                ls="--",
                lw=0.9,
                alpha=0.8,
                label=f"{name} p95",
            )
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(ms_label))
        ax.yaxis.set_minor_formatter(NullFormatter())
        mark_timeline(ax, phases=phases, releases=releases, week=week, now=now)
        time_axis(ax)
        ax.set_ylabel("time to first token")
        ax.legend(loc="lower left", ncols=4, bbox_to_anchor=(0, 1.0), borderaxespad=0.2)
        svg = figure_svg(fig, key, label=f"TTFT over time, {provider}")
    return Chart(
        key=key,
        title=provider,
        caption="Daily median (solid) and 95th percentile (dashed) of time to first token, "
        "successful probes only. Red bands: degraded phases; yellow: recovering; "
        "dotted lines: model releases; grey: this report's week.",
        svg=svg,
    )


def penalty_chart(penalty: pl.DataFrame, providers: list[str]) -> Chart | None:
    """Long-context TTFT divided by short-context TTFT, 7-day rolling median."""
    if penalty.height == 0:
        return None
    with style():
        fig = new_figure(9.0, 2.3, margins=(0.9, 0.2, 0.3, 0.3))
        ax = fig.add_subplot()
        for i, provider in enumerate(providers):
            part = penalty.filter(pl.col("provider") == provider).sort("day")
            if part.height == 0:
                continue
            smooth = part["penalty"].rolling_median(window_size=7, min_samples=1)
            ax.plot(
                dates(part, "day"),
                smooth.to_numpy(),
                color=PALETTE[i % len(PALETTE)],
                label=plain(provider),
            )
        ax.axhline(1.0, color=MUTED, lw=0.8)
        ax.set_ylabel("long ÷ short TTFT")
        time_axis(ax)
        ax.legend(loc="lower left", ncols=6, bbox_to_anchor=(0, 1.0), borderaxespad=0.2)
        svg = figure_svg(fig, "penalty", label="Long-context penalty over time")
    return Chart(
        key="penalty",
        title="Long-context penalty",
        caption="Median TTFT of long-context probes divided by that of short ones, per hour, "
        "then a 7-day rolling median. A rising line means long prompts wait longer than "
        "the prompt size alone explains: usually the first sign of memory pressure.",
        svg=svg,
    )


def _stage_bars(ax: Axes, phases: pl.DataFrame, now: datetime) -> None:
    """One horizontal band coloured by stage, phase after phase."""
    for row in phases.sort("start_at").iter_rows(named=True):
        start = _x(row["start_at"])
        width = _x(row["end_at"] or now) - start
        colour = STAGE_COLOURS.get(str(row["stage"]), "#e5e7eb")
        ax.broken_barh([(start, width)], (0.25, 0.5), color=colour, lw=0)


def cycle_chart(
    phases: pl.DataFrame,
    releases_by_provider: dict[str, pl.DataFrame],
    forecasts: pl.DataFrame,
    providers: list[str],
    now: datetime,
) -> Chart | None:
    """Each provider's phases as a coloured band, with releases and forecast windows."""
    if phases.height == 0:
        return None
    with style():
        n = len(providers)
        fig = new_figure(
            9.0, 0.95 + 0.45 * n, margins=(1.1, 0.2, 0.6, 0.3), rows=n, gap_in=(0.0, 0.0)
        )
        axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
        for ax, provider in zip(axes, providers, strict=True):
            _stage_bars(ax, phases.filter(pl.col("provider") == provider), now)
            for row in releases_by_provider.get(provider, pl.DataFrame()).iter_rows(named=True):
                ax.axvline(row["release_date"], color=INK, lw=1.0, ls=(0, (2, 1.5)))
            for row in forecasts.filter(pl.col("provider") == provider).iter_rows(named=True):
                if row["window_lo"] and row["window_hi"]:
                    alpha = 0.6 if row["conclusive"] else 0.25
                    ax.axvspan(
                        row["window_lo"],
                        row["window_hi"],
                        0.15,
                        0.85,
                        color="#16a34a",
                        alpha=alpha,
                        lw=0,
                    )
            ax.axvline(_x(now), color=MUTED, lw=1.0)
            ax.set_ylim(0, 1)
            ax.set_yticks([])
            ax.grid(False)
            ax.spines["left"].set_visible(False)
            ax.set_ylabel(plain(provider), rotation=0, ha="right", va="center", fontsize=8.5)
        handles = [Patch(color=c, label=STAGE_LABELS[k]) for k, c in STAGE_COLOURS.items()]
        handles.append(Patch(color="#16a34a", alpha=0.6, label="release forecast"))
        fig.legend(handles=handles, loc="upper left", ncols=3, bbox_to_anchor=(1.1 / 9.0, 1.0))
        time_axis(axes[-1])
        svg = figure_svg(fig, "cycle", label="Release cycle: phases, releases, forecast")
    return Chart(
        key="cycle",
        title="Release cycle",
        caption="Each band is a provider's phases as the analysis found them. Dotted lines: "
        "releases of the provider's vendor; grey line: now. Green: forecast window for the "
        "next release (pale when inconclusive).",
        svg=svg,
    )
