"""Hourly and daily series per provider, model and context class, read from the ``probes`` view.

One SQL pass aggregates probe rows into hourly buckets (percentiles of successful probes,
counts of every outcome); everything downstream works on counts, so daily rates and exact
tests stay exact. Hours with no probe at all are *missing* (the prober was down), never an
outage: the grid keeps them as nulls.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl
from numpy.typing import NDArray

from pipeline.warehouse import Warehouse

__all__ = [
    "BUSY_CLASSES",
    "KEYS",
    "LATENCY_METRICS",
    "daily_counts",
    "hour_grid",
    "hourly_from_probes",
    "load_hourly",
    "long_context_penalty",
    "series",
    "time_span",
]

KEYS = ["provider", "model", "context_class"]
LATENCY_METRICS = ["ttft_p50_ms", "ttft_p95_ms", "total_p50_ms", "output_tps_p50"]
BUSY_CLASSES = ("rate_limited", "overloaded", "server_error")
_TIMEOUTS = ("timeout_connect", "timeout_first_token", "stall")

# The probes view buckets hours with date_trunc in the session's time zone: the
# Warehouse's connections count in UTC, so these are UTC hours, as in the report.
_HOURLY_SQL = f"""
SELECT
    provider, model, coalesce(context_class, 'short') AS context_class, hour, {{site}}
    any_value(vendor)                                          AS vendor,
    count(*)                                                   AS n,
    count(*) FILTER (WHERE ok)                                 AS n_ok,
    quantile_cont(ttft_ms, 0.50) FILTER (WHERE ok)             AS ttft_p50_ms,
    quantile_cont(ttft_ms, 0.95) FILTER (WHERE ok)             AS ttft_p95_ms,
    quantile_cont(total_ms, 0.50) FILTER (WHERE ok)            AS total_p50_ms,
    quantile_cont(output_tokens_per_s, 0.50) FILTER (WHERE ok) AS output_tps_p50,
    count(*) FILTER (WHERE error_class IN {BUSY_CLASSES!s})              AS n_busy,
    count(*) FILTER (WHERE error_class = 'rate_limited')       AS n_rate_limited,
    count(*) FILTER (WHERE error_class = 'overloaded')         AS n_overloaded,
    count(*) FILTER (WHERE error_class = 'server_error')       AS n_server_error,
    count(*) FILTER (WHERE error_class IN {_TIMEOUTS!s})          AS n_timeout,
    count(correct)                                             AS n_scored,
    count(*) FILTER (WHERE correct)                            AS n_correct,
    count(*) FILTER (WHERE flagged)                            AS n_flagged,
    median(rl_requests_limit)::DOUBLE                          AS requests_limit,
    median(rl_tokens_limit)::DOUBLE                            AS tokens_limit,
    median(rl_requests_remaining::DOUBLE / nullif(rl_requests_limit, 0)) AS requests_headroom
FROM probes
WHERE ($1::TIMESTAMPTZ IS NULL OR started_at >= $1::TIMESTAMPTZ)
  AND ($2::TIMESTAMPTZ IS NULL OR started_at < $2::TIMESTAMPTZ)
  AND ($3::VARCHAR IS NULL OR source = $3::VARCHAR)
GROUP BY ALL
ORDER BY provider, model, context_class, hour
"""


def load_hourly(
    warehouse: Warehouse,
    since: datetime | None = None,
    until: datetime | None = None,
    source: str | None = None,
    *,
    by_site: bool = False,
) -> pl.DataFrame:
    """Hourly buckets per (provider, model, context_class), with UTC ``hour``; with
    ``by_site`` per probe site too (column ``probe_site``, "" where a row has none)."""
    site = "coalesce(probe_site, '') AS probe_site," if by_site else ""
    frame = warehouse.query(_HOURLY_SQL.format(site=site), [since, until, source])
    return hourly_from_probes(frame)


def hourly_from_probes(frame: pl.DataFrame) -> pl.DataFrame:
    """Normalise the hourly frame: UTC timestamps, float metrics, sorted."""
    if frame.height == 0:
        return frame
    return frame.with_columns(pl.col("hour").dt.convert_time_zone("UTC")).sort([*KEYS, "hour"])


def hour_grid(frame: pl.DataFrame) -> pl.DataFrame:
    """Every hour between the first and last observation of each series; gaps stay null."""
    if frame.height == 0:
        return frame
    parts = []
    for _, part in frame.group_by(KEYS, maintain_order=True):
        lo, hi = time_span(part["hour"])
        hours = pl.datetime_range(lo, hi, interval="1h", eager=True, time_zone="UTC")
        full = pl.DataFrame({"hour": hours}).join(part, on="hour", how="left")
        full = full.with_columns(
            [pl.lit(part[k][0]).alias(k) for k in [*KEYS, "vendor"]],
        )
        parts.append(full.select(frame.columns))
    return pl.concat(parts)


def time_span(column: pl.Series) -> tuple[datetime, datetime]:
    """(first, last) timestamp of a non-empty datetime column, typed as datetimes."""
    lo, hi = column.min(), column.max()
    if not isinstance(lo, datetime) or not isinstance(hi, datetime):
        raise TypeError(f"expected a datetime column, got {column.dtype}")
    return lo, hi


def series(
    grid: pl.DataFrame, provider: str, model: str, context_class: str, metric: str
) -> tuple[NDArray[np.datetime64], NDArray[np.float64]]:
    """(hours, values) of one metric of one series on the hourly grid; NaN where missing."""
    part = grid.filter(
        (pl.col("provider") == provider)
        & (pl.col("model") == model)
        & (pl.col("context_class") == context_class)
    )
    hours = part["hour"].dt.replace_time_zone(None).to_numpy().astype("datetime64[h]")
    values = part[metric].cast(pl.Float64).fill_null(np.nan).to_numpy()
    return hours, values


def long_context_penalty(grid: pl.DataFrame) -> pl.DataFrame:
    """Per (provider, model, hour): long / short median TTFT ratio (null when either is
    missing or not positive, as the SQL view has it: a TTFT of 0 is no measurement)."""
    short = grid.filter(pl.col("context_class") == "short").select(
        "provider", "model", "hour", pl.col("ttft_p50_ms").alias("short_ms")
    )
    long = grid.filter(pl.col("context_class") == "long").select(
        "provider", "model", "hour", pl.col("ttft_p50_ms").alias("long_ms")
    )
    joined = short.join(long, on=["provider", "model", "hour"], how="full", coalesce=True)
    measured = (pl.col("long_ms") > 0) & (pl.col("short_ms") > 0)
    ratio = pl.when(measured).then(pl.col("long_ms") / pl.col("short_ms"))
    return joined.with_columns(ratio.alias("penalty")).sort("provider", "model", "hour")


_COUNTS = [
    "n",
    "n_ok",
    "n_busy",
    "n_rate_limited",
    "n_overloaded",
    "n_server_error",
    "n_timeout",
    "n_scored",
    "n_correct",
    "n_flagged",
]


def daily_counts(hourly: pl.DataFrame, by: list[str] | None = None) -> pl.DataFrame:
    """Daily sums of the outcome counts and medians of the hourly latency medians."""
    by = by or ["provider", "model"]
    return (
        hourly.with_columns(pl.col("hour").dt.truncate("1d").alias("day"))
        .group_by([*by, "day"])
        .agg(
            [pl.col(c).sum() for c in _COUNTS]
            + [pl.col(m).median() for m in LATENCY_METRICS]
            + [pl.col("requests_limit").median(), pl.col("tokens_limit").median()]
        )
        .sort([*by, "day"])
    )
