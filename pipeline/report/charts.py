"""Time-series charts of the weekly report: TTFT, long-context penalty, release cycle.

Each function takes frames from ``ReportData`` and returns a ``Chart`` or ``None`` when
there is nothing to draw. Data arrive already aggregated by day, which keeps the SVG
small however long the history is.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from pipeline.report.baseline import NoBaseline
from pipeline.report.context import Chart
from pipeline.report.svg import INK, MUTED, PALETTE, figure_svg, new_figure, plain, style
from pipeline.report.text_width import ROW_LABEL, fit
from pipeline.report.timeline import MARKS_NOTE, Timeline, dates, x

__all__ = [
    "FORECAST_COLOUR",
    "FORECAST_HATCH",
    "MIN_P95_ANSWERS",
    "cycle_chart",
    "marker",
    "ms_label",
    "penalty_chart",
    "ttft_chart",
]

_CLASS_COLOURS = {"short": PALETTE[0], "long": PALETTE[1]}
FORECAST_COLOUR = "#009E73"  # Okabe-Ito bluish green
FORECAST_HATCH = "xxx"
MIN_P95_ANSWERS = 20
"""Answers with a TTFT a class needs before the table prints its p95, and a day before
the TTFT chart draws it. Under 20, the 95th percentile of the sample is its largest value
or an interpolation towards it: one slow answer, not a tail. The median is still shown."""
FEW_POINTS = 8  # below this many days a line alone is hard to see: mark each point
STAGE_COLOURS = {
    "stable": "#d1d5db",
    "subtle_degradation": "#fde68a",
    "long_context_issues": "#fb923c",
    "major_degradation": "#dc2626",
    "recovery": "#93c5fd",
}
NO_BASELINE_LABEL = "no baseline yet"
STAGE_LABELS = {
    "stable": "stable",
    "subtle_degradation": "subtle degradation",
    "long_context_issues": "long-context issues",
    "major_degradation": "major degradation",
    "recovery": "recovery",
}


def ms_label(value: float, _pos: object = None) -> str:
    """Milliseconds as a short axis label."""
    if value >= 1000:
        return f"{value / 1000:.3g} s"
    return f"{value:.3g} ms"


def marker(points: int) -> str:
    """A dot per point when there are too few days for a line to show."""
    return "o" if points < FEW_POINTS else ""


def ttft_range(daily: pl.DataFrame) -> tuple[float, float] | None:
    """One log-scale y-range for every provider's TTFT chart, so their heights compare."""
    values = pl.concat([daily["p50"], daily["p95"]]).drop_nulls() if daily.height else None
    if values is None or values.len() == 0:
        return None
    low, high = float(values.min()), float(values.max())  # type: ignore[arg-type]
    return low / 1.25, high * 1.25


def _p95_where_enough(part: pl.DataFrame) -> np.ndarray[Any, Any]:
    """Daily p95, NaN (a gap) on days with fewer than ``MIN_P95_ANSWERS`` answers: a p95 of
    three answers is their slowest one, drawn as a tail it is not."""
    enough = part["n_ttft"].to_numpy() >= MIN_P95_ANSWERS
    return np.where(enough, part["p95"].cast(pl.Float64).to_numpy(), np.nan)


def ttft_chart(
    provider: str,
    daily: pl.DataFrame,
    *,
    key: str,
    timeline: Timeline,
    ylim: tuple[float, float] | None = None,
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
            days, dot = dates(part, "day"), marker(part.height)
            ax.plot(
                days, part["p50"].to_numpy(), color=colour, marker=dot, ms=3, label=f"{name} p50"
            )
            ax.plot(
                days,
                _p95_where_enough(part),
                color=colour,
                ls="--",
                lw=0.9,
                alpha=0.8,
                marker=dot,
                ms=2,
                label=f"{name} p95",
            )
        ax.set_yscale("log")
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(ms_label))
        ax.yaxis.set_minor_formatter(NullFormatter())
        timeline.mark(ax, provider)
        timeline.axis(ax)
        ax.set_ylabel("time to first token")
        ax.legend(loc="lower left", ncols=4, bbox_to_anchor=(0, 1.0), borderaxespad=0.2)
        svg = timeline.stamp(figure_svg(fig, key, label=f"TTFT over time, {provider}"), ax)
    return Chart(
        key=key,
        title=provider,
        caption="Daily median (solid) and 95th percentile (dashed) of time to first token, "
        f"successful probes only, on the same log scale for every provider; the 95th "
        f"percentile only on days with at least {MIN_P95_ANSWERS} answers. " + MARKS_NOTE,
        svg=svg,
    )


def penalty_chart(
    penalty: pl.DataFrame, providers: list[str], *, timeline: Timeline
) -> Chart | None:
    """Long-context TTFT divided by short-context TTFT, 7-day rolling median, per provider."""
    shown = [p for p in providers if penalty.filter(pl.col("provider") == p).height]
    if not shown:
        return None
    with style():
        n = len(shown)
        fig = new_figure(
            9.0, 0.65 + 0.95 * n, margins=(1.3, 0.2, 0.35, 0.3), rows=n, gap_in=(0.15, 0.7)
        )
        axes = fig.subplots(n, 1, sharex=True, sharey=True, squeeze=False)[:, 0]
        for ax, provider in zip(axes, shown, strict=True):
            part = penalty.filter(pl.col("provider") == provider).sort("day")
            smooth = part["penalty"].rolling_median(window_size=7, min_samples=1)
            colour = PALETTE[providers.index(provider) % len(PALETTE)]
            ax.plot(
                dates(part, "day"),
                smooth.to_numpy(),
                color=colour,
                marker=marker(part.height),
                ms=3,
            )
            ax.axhline(1.0, color=MUTED, lw=0.8)
            name = plain(fit(provider, ROW_LABEL))
            ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=8)
            timeline.mark(ax, provider)
            timeline.axis(ax)
        axes[0].set_ylim(bottom=0)  # after every row: the scale is shared
        axes[0].set_title("long ÷ short TTFT, same scale for every provider")
        svg = figure_svg(fig, "penalty", label="Long-context penalty over time")
        svg = timeline.stamp(svg, axes[-1])
    return Chart(
        key="penalty",
        title="Long-context penalty",
        caption="Median TTFT of long-context probes divided by that of short ones, per hour, "
        "then a 7-day rolling median. A rising line means long prompts wait longer than "
        "the prompt size alone explains: usually the first sign of memory pressure. " + MARKS_NOTE,
        svg=svg,
    )


def _stage_bars(ax: Axes, phases: pl.DataFrame, timeline: Timeline) -> None:
    """One horizontal band coloured by stage, phase after phase, inside the window."""
    for row in phases.sort("start_at").iter_rows(named=True):
        start = x(max(row["start_at"], timeline.start))
        width = x(row["end_at"] or timeline.now) - start
        if width <= 0:
            continue
        colour = STAGE_COLOURS.get(str(row["stage"]), "#e5e7eb")
        ax.broken_barh([(start, width)], (0.25, 0.5), color=colour, lw=0)


def _day_x(day: object) -> float:
    return x(datetime.combine(day, datetime.min.time()))  # type: ignore[arg-type]


def _forecast_windows(ax: Axes, forecasts: pl.DataFrame, today: date) -> None:
    """Forecast windows as hatched outlines: a fill over a phase colour would mix into a
    colour the legend does not show. As in the table, a window is drawn from ``today`` at
    the earliest, and one that closed (overdue) is not drawn as if still ahead."""
    for row in forecasts.iter_rows(named=True):
        if not (row["window_lo"] and row["window_hi"]) or row["window_hi"] < today:
            continue
        ax.axvspan(
            _day_x(max(row["window_lo"], today)),
            _day_x(row["window_hi"]),
            0.1,
            0.9,
            fill=False,
            hatch=FORECAST_HATCH if row["conclusive"] else "..",
            edgecolor=FORECAST_COLOUR,
            lw=1.2,
            ls="-" if row["conclusive"] else "--",
            zorder=3,
        )


def _no_baseline_box(ax: Axes, probes: NoBaseline, timeline: Timeline) -> None:
    """A dashed outline over the probes of a provider without a baseline, and those words:
    the analysis cannot call that stretch stable or degraded yet."""
    start = x(max(probes.first, timeline.start))
    end = x(min(probes.end, timeline.now))
    if end > start:
        ax.broken_barh(
            [(start, end - start)], (0.25, 0.5), facecolor="none", edgecolor=MUTED, lw=1.0,
            linestyle="--",
        )  # fmt: skip
    middle = (x(timeline.start) + x(timeline.end)) / 2
    left = start > middle  # the words go where there is room
    ax.annotate(
        f"{NO_BASELINE_LABEL} ({probes.words})",
        (start if left else max(end, start), 0.5),
        xytext=(-4 if left else 4, 0),
        textcoords="offset points",
        ha="right" if left else "left",
        va="center",
        fontsize=7,
        color=MUTED,
    )


def _cycle_legend(unfounded: bool) -> list[Patch]:
    handles = [Patch(color=c, label=STAGE_LABELS[k]) for k, c in STAGE_COLOURS.items()]
    if unfounded:
        handles.append(Patch(fill=False, ls="--", edgecolor=MUTED, label=NO_BASELINE_LABEL))
    handles.append(
        Patch(fill=False, hatch=FORECAST_HATCH, edgecolor=FORECAST_COLOUR, label="release forecast")
    )
    handles.append(
        Patch(fill=False, hatch="..", ls="--", edgecolor=FORECAST_COLOUR, label="inconclusive")
    )
    return handles


def _cycle_end(timeline: Timeline, forecasts: pl.DataFrame) -> datetime:
    """The shared window's end, stretched to show a forecast window that lies beyond it."""
    his = forecasts["window_hi"].drop_nulls() if forecasts.height else pl.Series([])
    if his.len() == 0:
        return timeline.end
    last = his.max()
    moment = datetime(last.year, last.month, last.day, tzinfo=timeline.end.tzinfo)  # type: ignore[union-attr]
    return max(timeline.end, moment + timedelta(days=3))


def cycle_chart(
    forecasts: pl.DataFrame,
    providers: list[str],
    *,
    timeline: Timeline,
    unfounded: Mapping[str, NoBaseline] | None = None,
) -> Chart | None:
    """Each provider's phases as a coloured band, with releases and forecast windows.

    Same window as every other time chart, except that it runs on past the week's end
    when a forecast window lies in the future. A provider in ``unfounded`` (phases found
    without a baseline, which the verdict does not tell) gets a dashed outline over its
    probes instead of a band. None when no provider of the report has phases: the newest
    analysis may cover data after the report's week (a past week rendered on a Monday)
    or providers it lacks.
    """
    phases, unfounded = timeline.phases, unfounded or {}
    drawn = set(phases["provider"].to_list()) if phases.height else set()
    providers = [p for p in providers if p in drawn or p in unfounded]
    unfounded = {p: unfounded[p] for p in providers if p in unfounded}
    if not providers:
        return None
    with style():
        n = len(providers)
        fig = new_figure(
            9.0, 0.95 + 0.45 * n, margins=(1.1, 0.2, 0.6, 0.3), rows=n, gap_in=(0.0, 0.0)
        )
        axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
        for ax, provider in zip(axes, providers, strict=True):
            if provider in unfounded:
                _no_baseline_box(ax, unfounded[provider], timeline)
            else:
                _stage_bars(ax, phases.filter(pl.col("provider") == provider), timeline)
            timeline.mark(ax, provider=None)
            for row in timeline.releases.get(provider, pl.DataFrame()).iter_rows(named=True):
                ax.axvline(_day_x(row["release_date"]), color=INK, lw=1.0, ls=(0, (2, 1.5)))
            mine = (
                forecasts.filter(pl.col("provider") == provider) if forecasts.height else forecasts
            )
            if provider not in unfounded:  # a forecast from phases the verdict does not tell
                _forecast_windows(ax, mine, timeline.now.date())
            ax.axvline(x(timeline.now), color=MUTED, lw=1.0)
            ax.set_ylim(0, 1)
            ax.set_yticks([])
            ax.grid(False)
            ax.spines["left"].set_visible(False)
            name = plain(fit(provider, ROW_LABEL))
            ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=8.5)
        fig.legend(
            handles=_cycle_legend(bool(unfounded)),
            loc="upper left",
            ncols=4,
            bbox_to_anchor=(1.1 / 9.0, 1.0),
        )
        timeline.axis(axes[-1])
        axes[-1].set_xlim(x(timeline.start), x(_cycle_end(timeline, forecasts)))
        svg = figure_svg(fig, "cycle", label="Release cycle: phases, releases, forecast")
        svg = timeline.stamp(svg, axes[-1])
    return Chart(
        key="cycle",
        title="Release cycle",
        caption="Each band is a provider's phases as the analysis found them, over the same "
        "window as the charts above. Dotted lines: releases of the provider's vendor; grey "
        "line: now; hatched: this report's week. Green hatched outline: forecast window for "
        "the next release (dotted and dashed when inconclusive)." + _no_baseline_note(unfounded),
        svg=svg,
    )


def _no_baseline_note(unfounded: Mapping[str, NoBaseline]) -> str:
    """Who has no baseline, said in the caption too (the chart's own words are paths)."""
    if not unfounded:
        return ""
    who = "; ".join(f"{p}: {b.words}" for p, b in unfounded.items())
    return (
        f" Dashed outline, {NO_BASELINE_LABEL}: probes so far ({who}), fewer than the "
        "phases' baseline needs, so they are not called stable or degraded."
    )
