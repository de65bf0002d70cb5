"""The one time window every time chart of a report shares, with its phase and release marks.

Every chart over time draws the same x-range, the same degraded/recovering bands and the
same release lines, so a reader can line a latency step up with an error burst and a
release. The window is the last ``CHART_DAYS`` up to the end of the report's week (about
one release cycle, which users describe as six months), shortened to the data that
exists: a first-week warehouse shows that week, not years of empty axis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import matplotlib.dates as mdates
import numpy as np
import polars as pl
from markupsafe import Markup
from matplotlib.axes import Axes

from pipeline.report.svg import INK, MUTED, plain

__all__ = ["CHART_DAYS", "PHASE_COLOURS", "Timeline", "dates", "x"]

CHART_DAYS = 182  # 26 weeks: one release cycle, so a phase's onset is still in view
PHASE_COLOURS = {"degraded": "#fca5a5", "recovering": "#fde68a"}
WEEK_HATCH = "////"
MARKS_NOTE = (
    "Red bands: degraded phases; yellow: recovering; dotted lines: model releases; "
    "hatched: this report's week, when the chart shows more than that week."
)


def x(moment: datetime) -> float:
    """A UTC moment as a matplotlib date number."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return float(mdates.date2num(moment))


def dates(frame: pl.DataFrame, column: str) -> np.ndarray[Any, Any]:
    """A daily timestamp column as naive-UTC datetime64 at the middle of each day.

    A day's value is drawn at noon, so a point sits inside its day's bar and band.
    """
    series = frame[column]
    if isinstance(series.dtype, pl.Datetime) and series.dtype.time_zone is not None:
        series = series.dt.replace_time_zone(None)
    elif series.dtype == pl.Date:
        series = series.cast(pl.Datetime("us"))
    return (series.dt.truncate("1d") + timedelta(hours=12)).to_numpy()


def _day(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass(frozen=True, slots=True)
class Timeline:
    """The shared x-window of a report's time charts and what is marked on it.

    Attributes:
        start: left edge (UTC midnight).
        end: right edge: the end of the report's week.
        week: the report's week, [Monday, next Monday).
        now: the end of the data (the week's end, or now for a week in progress).
        phases: the analysis's phases of every provider (may be empty).
        releases: per provider, its vendor's releases (may be missing).
    """

    start: datetime
    end: datetime
    week: tuple[datetime, datetime]
    now: datetime
    phases: pl.DataFrame = field(default_factory=pl.DataFrame)
    releases: dict[str, pl.DataFrame] = field(default_factory=dict)

    @classmethod
    def for_week(
        cls,
        week: tuple[datetime, datetime],
        *,
        now: datetime,
        first_data: datetime | None,
        phases: pl.DataFrame | None = None,
        releases: dict[str, pl.DataFrame] | None = None,
    ) -> Timeline:
        """The last ``CHART_DAYS`` up to the week's end, cut to start at the first data.

        The window never starts after the week itself, so a report on little data
        shows its week (seven days) with the data it has.
        """
        earliest = week[1] - timedelta(days=CHART_DAYS)
        start = week[0]
        if first_data is not None:
            start = min(start, max(earliest, _day(first_data)))
        return cls(
            start=start,
            end=week[1],
            week=week,
            now=now,
            phases=phases if phases is not None else pl.DataFrame(),
            releases=releases or {},
        )

    def axis(self, ax: Axes) -> None:
        """The shared x-range with concise date ticks (years only when they change)."""
        ax.set_xlim(x(self.start), x(self.end))
        locator = mdates.AutoDateLocator(minticks=4, maxticks=9)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, show_offset=False))

    @staticmethod
    def stamp(svg: Markup, ax: Axes) -> Markup:
        """Record the x-range ``ax`` actually drew on the SVG (``data-x-window``), so the
        window of every chart can be checked from the page alone."""
        lo, hi = (mdates.num2date(v).strftime("%Y-%m-%dT%H:%M") for v in ax.get_xlim())
        stamped = str(svg).replace("<svg ", f'<svg data-x-window="{lo}/{hi}" ', 1)
        return Markup(stamped)  # noqa: S704 - our own SVG plus two formatted dates

    def mark(self, ax: Axes, provider: str | None) -> None:
        """Hatch the report's week; band ``provider``'s phases; line its vendor's releases.

        The week is hatched, not filled, so it never blends with a phase band into a
        colour the caption does not name.
        """
        if self.start < self.week[0]:  # a window of the week alone needs no highlight
            self._week_hatch(ax)
        if provider is None:
            return
        self._phase_bands(ax, provider)
        self._release_lines(ax, provider)

    def _week_hatch(self, ax: Axes) -> None:
        ax.axvspan(
            x(self.week[0]),
            x(self.week[1]),
            fill=False,
            hatch=WEEK_HATCH,
            edgecolor="#c4c8cf",
            lw=0,
            zorder=0,
        )

    def _phase_bands(self, ax: Axes, provider: str) -> None:
        if self.phases.height == 0:
            return
        for row in self.phases.filter(pl.col("provider") == provider).iter_rows(named=True):
            colour = PHASE_COLOURS.get(str(row["label"]))
            if colour is None:
                continue
            start = max(row["start_at"], self.start)
            end = min(row["end_at"] or self.now, self.end)
            if end > start:
                ax.axvspan(x(start), x(end), color=colour, alpha=0.45, lw=0, zorder=0)

    def _release_lines(self, ax: Axes, provider: str) -> None:
        releases = self.releases.get(provider)
        if releases is None or releases.height == 0:
            return
        for row in releases.iter_rows(named=True):
            release = row["release_date"]
            moment = datetime(release.year, release.month, release.day, tzinfo=UTC)
            if not self.start <= moment <= self.end:
                continue
            ax.axvline(x(moment), color=INK, lw=0.8, ls=(0, (2, 2)), zorder=1)
            ax.annotate(
                plain(str(row["model"])),
                (x(moment), 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(2, -2),
                textcoords="offset points",
                va="top",
                fontsize=7,
                color=MUTED,
            )
