"""Daily-rate change points whose later level leans on the last, partial day of data.

Error, timeout, wrong-answer and sanity-flag change points are found on one rate per UTC
day (``analysis.metric_rows.rate_change_rows``), and each day counts as one point however
few hours it holds. When the analysed data end mid-day (a running week, or probes that
stopped), the last point is a partial day: fewer probes, from one part of the daily
rhythm only. The last change point of a series rests on it: its level after, and its
date when the change is that fresh (a monitor's newest change is dated on the day the
data put it, ``changepoints.edges``, which may be this one). The report keeps such a
change point, since a fresh rise is the news a reader most needs, but marks it
provisional with the hours the partial day holds; it firms up once the day is complete
and analysed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

import polars as pl

from pipeline.report import fmt

__all__ = ["PartialDay", "partial_last_day", "provisional_note"]


@dataclass(frozen=True, slots=True)
class PartialDay:
    """The UTC day the analysed data of one provider end on, before its midnight."""

    day: datetime
    hours: int  # hours of the day with at least one probe (before the analysis's end)


def partial_last_day(hours: pl.DataFrame, until: datetime | None) -> PartialDay | None:
    """The last day of one provider's ``hours`` (``history_hours``) that the analysis saw
    (before ``until``), when its data end before the day does; None when it is whole."""
    if until is None or hours.height == 0:
        return None
    seen = hours.filter(pl.col("hour") < until)["hour"]
    last = seen.max()
    if not isinstance(last, datetime):
        return None
    day = datetime.combine(last.date(), time(), tzinfo=last.tzinfo)
    if last + timedelta(hours=1) >= day + timedelta(days=1):
        return None
    return PartialDay(day, int((seen >= day).sum()))


def _last_of_its_series(row: dict[str, Any], points: pl.DataFrame) -> bool:
    """No later change point of the same metric, context and detector: the rate after
    ``row`` runs to the end of the data."""
    later = points.filter(
        (pl.col("provider") == row["provider"])
        & pl.col("model").eq_missing(row["model"])
        & (pl.col("metric") == row["metric"])
        & pl.col("context_class").eq_missing(row["context_class"])
        & (pl.col("detector") == row["detector"])
        & (pl.col("at") > row["at"])
    )
    return later.height == 0


def provisional_note(row: dict[str, Any], points: pl.DataFrame, partial: PartialDay | None) -> str:
    """The words marking a daily-rate change point that rests on ``partial`` provisional;
    "" otherwise (latency change points are hourly and need no whole day)."""
    if partial is None or not str(row["metric"]).endswith("_rate"):
        return ""
    if not _last_of_its_series(row, points):
        return ""
    return f", provisional: last day {fmt.day(partial.day)} partial, {partial.hours} of 24 hours"
