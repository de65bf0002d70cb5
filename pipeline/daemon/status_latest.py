"""Each provider's last probe and last error for ``nerfwatch status``, without reading
all of history each time.

Taking ``max``/``arg_max`` over every live row cost a scan of ``probe_results`` that
grew with history (2.2 s CPU at 1.9 M rows, and status always opens the file cold). The
newest rows answer almost every provider: a recent window (``WINDOW``, which also holds
today's skipped runs and the rows stamped ahead) is read first, its rows found by the
zone maps on ``started_at`` (rows arrive in time order). Only providers the window
leaves unanswered (no row in it, or no error in it) are looked up in the older rows,
and there the error text is read only for the one row that is each one's last error.
The answer is the same as the full scan's: a value found in the window is later than
any before it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

from pipeline.warehouse import Warehouse

__all__ = ["WINDOW", "latest_by_provider"]

WINDOW = timedelta(days=8)  # before today's start: a week of errors, and today

_RECENT_SQL = """
SELECT provider,
  max(started_at) FILTER (WHERE run_status = 'done') AS last_probe_at,
  arg_max(error_class, started_at) FILTER (WHERE run_status = 'done') AS last_class,
  max(started_at) FILTER (WHERE run_status = 'done' AND error_class <> 'ok') AS last_error_at,
  arg_max(error_class || coalesce(': ' || error_detail, ''), started_at)
    FILTER (WHERE run_status = 'done' AND error_class <> 'ok') AS last_error,
  count(*) FILTER (WHERE run_status = 'skipped' AND started_at >= ?
    AND started_at < ?) AS today_skipped,
  count(*) FILTER (WHERE started_at > ?) AS ahead
FROM probe_results WHERE source = 'live' AND started_at >= ? {site} GROUP BY provider
"""

# Providers the window answered in full are left out; the error text is not read here.
_OLDER_SQL = """
SELECT provider,
  max(started_at) FILTER (WHERE run_status = 'done') AS last_probe_at,
  arg_max(error_class, started_at) FILTER (WHERE run_status = 'done') AS last_class,
  max(started_at) FILTER (WHERE run_status = 'done' AND error_class <> 'ok') AS last_error_at
FROM probe_results WHERE source = 'live' AND started_at < ?
  AND NOT list_contains(?::VARCHAR[], provider) {site} GROUP BY provider
"""

# The text of each last error found in the older rows, read at its own instant only.
_ERROR_TEXT_SQL = """
SELECT provider, started_at AS last_error_at,
  any_value(error_class || coalesce(': ' || error_detail, '')) AS last_error
FROM probe_results WHERE source = 'live' AND run_status = 'done' AND error_class <> 'ok'
  AND started_at IN ({instants}) {site} GROUP BY provider, started_at
"""

_COLUMNS = ["last_probe_at", "last_class", "last_error_at", "last_error"]


def latest_by_provider(
    warehouse: Warehouse,
    today: datetime,
    now: datetime,
    ahead_after: datetime,
    site: str | None,
) -> pl.DataFrame:
    """One row per provider with live rows (of ``site``, if given): ``last_probe_at``,
    ``last_class``, ``last_error_at``, ``last_error``, ``today_skipped`` (on the day
    starting ``today``) and ``ahead`` (rows stamped after ``ahead_after``). ``now`` is
    the clock the window is counted back from."""
    since = min(today, now) - WINDOW
    site_sql, site_params = ("", []) if site is None else ("AND probe_site = ?", [site])
    recent = warehouse.query(
        _RECENT_SQL.format(site=site_sql),
        # skipped today: rows stamped later (by a clock since set back) are not today's
        [today, today + timedelta(days=1), ahead_after, since, *site_params],
    )
    answered = recent.filter(pl.col("last_error_at").is_not_null())["provider"].to_list()
    older = warehouse.query(_OLDER_SQL.format(site=site_sql), [since, answered, *site_params])
    if older.height == 0:
        return recent
    older = _with_error_text(warehouse, older, site_sql, site_params)
    merged = recent.join(older, on="provider", how="full", coalesce=True, suffix="_older")
    return merged.select(
        "provider",
        *[pl.coalesce(column, f"{column}_older").alias(column) for column in _COLUMNS],
        pl.col("today_skipped").fill_null(0),
        pl.col("ahead").fill_null(0),
    )


def _with_error_text(
    warehouse: Warehouse, older: pl.DataFrame, site_sql: str, site_params: list[str]
) -> pl.DataFrame:
    """``older`` with each provider's last error text, read at that error's instant."""
    found = older.filter(pl.col("last_error_at").is_not_null())
    if found.height == 0:
        return older.with_columns(last_error=pl.lit(None, pl.String))
    instants = found["last_error_at"].to_list()
    texts = warehouse.query(
        _ERROR_TEXT_SQL.format(instants=", ".join("?" * len(instants)), site=site_sql),
        [*instants, *site_params],
    )
    return older.join(texts, on=["provider", "last_error_at"], how="left")
