"""The report's four daily series from one grouped pass over the raw probes.

Daily TTFT, daily accuracy, daily errors and the daily long-context penalty each scanned
``probes`` over the chart's 26 weeks; at 25 providers x 90 days of 5-minute probes that
was 5-9 s apiece, most of a report. Now one pass groups the window by provider, model,
context class, UTC hour and error class into a temporary table, and each series is
summed from it. Medians cannot be summed, so each group keeps its answers' TTFTs as a
list and the medians are taken over the concatenated lists: the same values, so the same
``quantile_cont`` results, to the bit (tests/test_report_daily_series.py).

Two windows meet here: TTFT and accuracy count ``started_at`` in the chart's window;
errors and the penalty count whole UTC hours (the ``long_context_penalty`` view is
hourly), i.e. ``started_at`` bounds rounded up to the hour. The pass reads their union
and marks each group with the windows it is in. Errors are counted from ``probes``, not
from the ``errors_hourly`` view, which joins every hour of the whole history to its total
before a window applies (tests/test_report_errors_daily.py shows the counts agree).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import polars as pl

__all__ = ["DailySeries", "hour_bounds", "read_daily_series"]

GROUPS = "report_daily_groups"

# ``ok`` is error_class = 'ok', so it is one value within a group. ``charted``: in
# [chart start, end); ``whole_hours``: in [ceil(chart start), ceil(end)).
_GROUP = f"""
CREATE OR REPLACE TEMP TABLE {GROUPS} AS
SELECT provider, model, context_class, hour, day, error_class, ok,
       started_at >= ? AND started_at < ? AS charted,
       started_at >= ? AS whole_hours,
       count(*) AS n, count(ttft_ms) AS n_ttft,
       list(ttft_ms) FILTER (WHERE ttft_ms IS NOT NULL) AS ttfts,
       count(correct) AS n_scored, count(*) FILTER (WHERE correct) AS n_correct,
       count(*) FILTER (WHERE flagged) AS n_flagged
FROM probes WHERE started_at >= ? AND started_at < ?
GROUP BY ALL
"""

_DROP = f"DROP TABLE IF EXISTS {GROUPS}"

# Every answer's TTFT in a row's groups (NULL when none), as quantile_cont sees them.
_ANSWER_TTFTS = "flatten(list(ttfts) FILTER (WHERE ok AND ttfts IS NOT NULL))"

_DAILY_TTFT = f"""
SELECT provider, coalesce(context_class, 'short') AS context_class, day,
       sum(n)::BIGINT AS n, coalesce(sum(n_ttft) FILTER (WHERE ok), 0)::BIGINT AS n_ttft,
       list_aggregate({_ANSWER_TTFTS}, 'quantile_cont', 0.50) AS p50,
       list_aggregate({_ANSWER_TTFTS}, 'quantile_cont', 0.95) AS p95
FROM {GROUPS} WHERE charted
GROUP BY ALL ORDER BY provider, context_class, day
"""

_ACCURACY_DAILY = f"""
SELECT provider, day, sum(n)::BIGINT AS n, sum(n_scored)::BIGINT AS n_scored,
       sum(n_correct)::BIGINT AS n_correct, sum(n_flagged)::BIGINT AS n_flagged
FROM {GROUPS} WHERE charted
GROUP BY ALL ORDER BY provider, day
"""

_ERRORS_DAILY = f"""
SELECT provider, day, error_class, sum(n)::BIGINT AS n
FROM {GROUPS} WHERE whole_hours
GROUP BY ALL ORDER BY provider, day, error_class
"""


def _class_median(context_class: str) -> str:
    ttfts = f"flatten(list(ttfts) FILTER (WHERE context_class = '{context_class}'))"
    return f"nullif(list_aggregate({ttfts}, 'quantile_cont', 0.5), 0)"


# The ``long_context_penalty`` view's hourly ratio per provider and model, over answers,
# then its median per day, as the report took it from the view.
_PENALTY_DAILY = f"""
WITH hourly AS (
    SELECT provider, model, hour, any_value(day) AS day,
           {_class_median("long")} / {_class_median("short")} AS penalty_ratio
    FROM {GROUPS} WHERE whole_hours AND ok
    GROUP BY provider, model, hour
)
SELECT provider, day, median(penalty_ratio) AS penalty
FROM hourly WHERE penalty_ratio IS NOT NULL
GROUP BY ALL ORDER BY provider, day
"""


@dataclass(frozen=True, slots=True)
class DailySeries:
    """Per provider and UTC day over the chart's window (``ttft`` also per class)."""

    ttft: pl.DataFrame
    accuracy: pl.DataFrame
    errors: pl.DataFrame
    penalty: pl.DataFrame


def hour_bounds(start: datetime, end: datetime) -> list[datetime]:
    """``started_at`` bounds that keep exactly the hours h with start <= h < end."""

    def ceil(moment: datetime) -> datetime:
        hour = moment.replace(minute=0, second=0, microsecond=0)
        return hour if hour == moment else hour + timedelta(hours=1)

    return [ceil(start), ceil(end)]


def read_daily_series(
    run: Callable[[str, list[Any]], None],
    read: Callable[[str, list[Any]], pl.DataFrame],
    start: datetime,
    end: datetime,
) -> DailySeries:
    """The four series for the chart's window [start, end); ``run`` executes a statement
    and ``read`` a query, on one connection (the groups are its temporary table)."""
    hours = hour_bounds(start, end)
    run(_GROUP, [start, end, hours[0], min(start, hours[0]), max(end, hours[1])])
    try:
        return DailySeries(
            ttft=read(_DAILY_TTFT, []),
            accuracy=read(_ACCURACY_DAILY, []),
            errors=read(_ERRORS_DAILY, []),
            penalty=read(_PENALTY_DAILY, []),
        )
    finally:
        run(_DROP, [])
