"""Read what one weekly report needs from the warehouse, as polars frames.

All queries run read-only in UTC (set by the Warehouse) so day and hour buckets do not
depend on the machine's zone. Raw metrics come from the views in ``sql/views``; analysis
results from the newest finished ``analysis_runs`` row, when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import duckdb
import polars as pl

from pipeline.report.daily_series import read_daily_series
from pipeline.report.heatmap_cells import cells_sql
from pipeline.report.timeline import CHART_DAYS
from pipeline.report.weeks import IsoWeek, default_week
from pipeline.warehouse import SqlError, Warehouse

__all__ = ["ANALYSIS_TABLES", "ReportData", "load_report_data", "report_week"]

HISTORY_DAYS = 365  # which providers and rows the report counts
HEATMAP_DAYS = 28

ANALYSIS_TABLES = (
    "phases",
    "degraded_probability",
    "warning_signs",
    "change_points",
    "release_cycles",
    "release_forecasts",
    "seasonality",
    "cycle_tests",
    "site_phases",
    "degradation_scope",
)

_TOTALS = """
SELECT count(*) AS n,
       -- simulated: written by the history generator, or probed live against the
       -- simulator (the demo's providers carry plan 'simulated')
       count(*) FILTER (WHERE source = 'synthetic' OR plan = 'simulated') AS n_synthetic,
       min(started_at) AS first_at, max(started_at) AS last_at
FROM probe_results WHERE started_at >= ? AND started_at < ?
"""

_PROVIDERS = """
SELECT provider, any_value(model ORDER BY started_at DESC) AS model,
       any_value(vendor ORDER BY started_at DESC) AS vendor,
       max(started_at) AS last_at
FROM probe_results WHERE started_at >= ? AND started_at < ?
GROUP BY provider ORDER BY provider
"""

_WEEK_STATS = """
SELECT provider, coalesce(context_class, 'short') AS context_class,
       count(*) AS n, count(*) FILTER (WHERE ok) AS n_ok,
       count(ttft_ms) FILTER (WHERE ok) AS n_ttft,
       quantile_cont(ttft_ms, 0.50) FILTER (WHERE ok) AS ttft_p50,
       quantile_cont(ttft_ms, 0.95) FILTER (WHERE ok) AS ttft_p95,
       quantile_cont(output_tokens_per_s, 0.50) FILTER (WHERE ok) AS tps_p50,
       count(correct) AS n_scored, count(*) FILTER (WHERE correct) AS n_correct,
       count(*) FILTER (WHERE flagged) AS n_flagged,
       sum(cost_usd) AS cost_usd
FROM probes WHERE started_at >= ? AND started_at < ?
GROUP BY ALL ORDER BY provider, context_class
"""

# Per day and context class, last week's days and this week's: ``week_moves`` compares
# days, not probes, because probes within a day are correlated.
_CLASS_DAYS = """
SELECT provider, coalesce(context_class, 'short') AS context_class, day,
       count(*) AS n, count(*) FILTER (WHERE ok) AS n_ok,
       quantile_cont(ttft_ms, 0.50) FILTER (WHERE ok) AS ttft_p50
FROM probes WHERE started_at >= ? AND started_at < ?
GROUP BY ALL ORDER BY provider, context_class, day
"""

# sites_in_a_source: the most sites any one source has this week (sites are compared
# within a source; simulated history's own site label is not a place probed from).
_SITE_STATS = """
WITH week AS (
    SELECT provider, coalesce(probe_site, '') AS probe_site, source, ok, ttft_ms, context_class
    FROM probes WHERE started_at >= ? AND started_at < ?
)
SELECT provider, probe_site,
       count(*) AS n, count(*) FILTER (WHERE ok) AS n_ok,
       quantile_cont(ttft_ms, 0.50) FILTER (WHERE ok AND coalesce(context_class, 'short') = 'short')
           AS ttft_short_p50,
       (SELECT max(n) FROM (SELECT count(DISTINCT probe_site) AS n FROM week GROUP BY source))
           AS sites_in_a_source
FROM week
GROUP BY provider, probe_site ORDER BY provider, probe_site
"""

_HEADROOM_DAILY = """
SELECT provider, date_trunc('day', hour) AS day,
       median(requests_headroom_p50) AS req_headroom,
       median(tokens_headroom_p50) AS tok_headroom,
       median(requests_limit_p50) AS req_limit,
       median(tokens_limit_p50) AS tok_limit
FROM rate_limit_headroom WHERE hour >= ? AND hour < ? AND n_reported > 0
GROUP BY ALL ORDER BY provider, day
"""

# A distribution-free 95 % interval for each median TTFT: the answers of ranks
# n/2 -+ 0.98 sqrt(n) (the binomial order-statistic bounds, normal approximation).
_MEDIAN_BOUNDS = """
WITH ranked AS (
    SELECT provider, coalesce(context_class, 'short') AS context_class, ttft_ms,
           row_number() OVER part AS r, count(*) OVER part AS n
    FROM probes
    WHERE started_at >= ? AND started_at < ? AND ok AND ttft_ms IS NOT NULL
    WINDOW part AS (PARTITION BY provider, coalesce(context_class, 'short') ORDER BY ttft_ms
                    ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
)
SELECT provider, context_class, any_value(n) AS n,
       min(ttft_ms) FILTER (WHERE r >= floor(n / 2 - 0.98 * sqrt(n))) AS p50_lo,
       max(ttft_ms) FILTER (WHERE r <= ceil(n / 2 + 1 + 0.98 * sqrt(n))) AS p50_hi
FROM ranked GROUP BY ALL ORDER BY provider, context_class
"""

_MODEL_NAMES = """
SELECT provider, model, count(*) AS n, min(started_at) AS first_at, max(started_at) AS last_at
FROM probe_results WHERE started_at >= ? AND started_at < ?
GROUP BY ALL ORDER BY provider, first_at
"""

# Every level of cells the heatmap may use, counted and with medians taken here (a
# median of hourly medians is not a cell's median): O(cells) rows, whatever the cadence.
_HOUR_OF_WEEK = cells_sql("""
SELECT provider, (isodow(started_at) - 1) AS dow, hour(started_at) AS hod, ttft_ms AS ttft
FROM probes
WHERE started_at >= ? AND started_at < ? AND ok AND coalesce(context_class, 'short') = 'short'
  AND ttft_ms IS NOT NULL
""")

_WEEK_HOURS = """
SELECT provider, date_trunc('hour', started_at) AS hour, count(*) AS n
FROM probe_results WHERE started_at >= ? AND started_at < ?
GROUP BY ALL ORDER BY provider, hour
"""

_HISTORY_HOURS = """
SELECT provider, date_trunc('hour', started_at) AS hour, count(*) AS n,
       count(*) FILTER (WHERE ok) AS n_ok,
       count(*) FILTER (WHERE ok AND coalesce(context_class, 'short') = 'short') AS n_short_ok,
       count(*) FILTER (WHERE ok AND context_class = 'long') AS n_long_ok
FROM probes WHERE started_at >= ? AND started_at < ?
GROUP BY ALL ORDER BY provider, hour
"""

_SKIPS = """
SELECT provider, run_status, coalesce(skip_reason, 'unspecified') AS reason, count(*) AS n
FROM probe_results
WHERE started_at >= ? AND started_at < ? AND run_status <> 'done'
GROUP BY ALL ORDER BY n DESC
"""

_EXAMPLES = """
SELECT provider, started_at, error_class, score_strict, sanity_flags,
       left(coalesce(error_detail, ''), 300) AS error_detail,
       left(coalesce(response_text, ''), 300) AS response_text
FROM probes
WHERE started_at >= ? AND started_at < ?
  AND (NOT ok OR score_strict = 'wrong' OR flagged)
ORDER BY started_at DESC LIMIT 12
"""

_RELEASES = """
SELECT vendor, model, release_date, kind, confidence, origin
FROM releases WHERE release_date < ? ORDER BY release_date
"""

_FIRST_AFTER = "SELECT min(started_at) AS first_at FROM probe_results WHERE started_at >= ?"

_LAST_BEFORE = "SELECT max(started_at) AS last_at FROM probe_results WHERE started_at < ?"

_ANY_IN = "SELECT count(*) > 0 AS found FROM probe_results WHERE started_at >= ? AND started_at < ?"

_ANALYSIS_RUN = """
SELECT analysis_id, started_at, finished_at, since, until
FROM analysis_runs WHERE status = 'done'
ORDER BY finished_at DESC NULLS LAST, started_at DESC LIMIT 1
"""


@dataclass(frozen=True, slots=True)
class ReportData:
    """Frames for one week; empty frames when there is nothing to show."""

    week: IsoWeek
    now: datetime  # end of the data window: the week's end, or now for a running week
    totals: dict[str, Any]
    providers: pl.DataFrame
    daily_ttft: pl.DataFrame
    week_stats: pl.DataFrame
    errors_daily: pl.DataFrame
    accuracy_daily: pl.DataFrame
    penalty_daily: pl.DataFrame
    headroom_daily: pl.DataFrame
    hour_of_week: pl.DataFrame  # heatmap cells at every level (``heatmap.cells_sql``)
    week_hours: pl.DataFrame
    history_hours: pl.DataFrame  # probes and answers per provider and hour, for evidence
    skips: pl.DataFrame
    examples: pl.DataFrame
    releases: pl.DataFrame
    analysis_run: dict[str, Any] | None
    analysis: dict[str, pl.DataFrame] = field(default_factory=dict)
    first_after: datetime | None = None  # the first probe after the week, if any
    last_before: datetime | None = None  # the last probe before the history window, if any
    site_stats: pl.DataFrame = field(default_factory=pl.DataFrame)  # per provider and site
    median_bounds: pl.DataFrame = field(default_factory=pl.DataFrame)  # this week's TTFT p50 CI
    model_names: pl.DataFrame = field(default_factory=pl.DataFrame)  # per provider this week
    class_days: pl.DataFrame = field(default_factory=pl.DataFrame)  # last week's and this week's

    @property
    def provider_names(self) -> list[str]:
        return (
            [str(p) for p in self.providers["provider"].to_list()] if self.providers.height else []
        )

    def result(self, table: str) -> pl.DataFrame:
        """An analysis table of the chosen run (empty frame if absent)."""
        return self.analysis.get(table, pl.DataFrame())

    def last_probe(self, provider: str) -> datetime | None:
        """When ``provider`` was last probed, as far as the report's data reach."""
        last = self.providers.filter(pl.col("provider") == provider)["last_at"]
        return last[0] if last.len() else None


def _query(wh: Warehouse, sql: str, params: list[Any]) -> pl.DataFrame:
    return wh.query(sql, params)


@dataclass(frozen=True, slots=True)
class _Reader:
    """Every query of one report on one read-only connection, in UTC.

    A connection per query opened the file 29 times and dropped DuckDB's buffer pool in
    between, so each query read and decompressed its columns afresh (about 1 s CPU of
    bench_report's 6 s in queries); one connection also reads one snapshot throughout."""

    wh: Warehouse
    con: duckdb.DuckDBPyConnection

    def __call__(self, sql: str, params: list[Any]) -> pl.DataFrame:
        try:
            return self.con.sql(sql, params=params).pl()
        except duckdb.Error as exc:
            raise SqlError(self.wh.scrub(exc)) from exc

    def run(self, sql: str, params: list[Any]) -> None:
        """A statement with no result (the daily series' temporary table)."""
        try:
            self.con.execute(sql, params)
        except duckdb.Error as exc:
            raise SqlError(self.wh.scrub(exc)) from exc


def _analysis(read: _Reader) -> tuple[dict[str, Any] | None, dict[str, pl.DataFrame]]:
    runs = read(_ANALYSIS_RUN, [])
    if runs.height == 0:
        return None, {}
    run = runs.row(0, named=True)
    tables = {
        name: read(f"SELECT * FROM {name} WHERE analysis_id = ?", [run["analysis_id"]])
        for name in ANALYSIS_TABLES
    }
    return run, tables


def load_report_data(wh: Warehouse, week: IsoWeek, *, now: datetime) -> ReportData:
    """Run every report query for ``week``; ``now`` caps a week still in progress."""
    with wh.connect(read_only=True) as con:
        return _load(_Reader(wh, con), week, now)


def _load(read: _Reader, week: IsoWeek, now: datetime) -> ReportData:
    end = min(week.end, now)
    start = week.start
    history = [week.end - timedelta(days=HISTORY_DAYS), end]
    charted = [week.end - timedelta(days=CHART_DAYS), end]  # every time chart's window
    this_week = [start, end]
    prev_week = [start - timedelta(days=7), start]
    totals = read(_TOTALS, history).row(0, named=True)
    run, tables = _analysis(read)
    daily = read_daily_series(read.run, read, *charted)
    return ReportData(
        week=week,
        now=end,
        totals=totals,
        providers=read(_PROVIDERS, history),
        daily_ttft=daily.ttft,
        week_stats=read(_WEEK_STATS, this_week),
        errors_daily=daily.errors,
        accuracy_daily=daily.accuracy,
        penalty_daily=daily.penalty,
        headroom_daily=read(_HEADROOM_DAILY, charted),
        hour_of_week=read(_HOUR_OF_WEEK, [end - timedelta(days=HEATMAP_DAYS), end]),
        week_hours=read(_WEEK_HOURS, this_week),
        history_hours=read(_HISTORY_HOURS, history),
        skips=read(_SKIPS, this_week),
        examples=read(_EXAMPLES, this_week),
        releases=read(_RELEASES, [week.end.date()]),
        analysis_run=run,
        analysis=tables,
        first_after=read(_FIRST_AFTER, [week.end])["first_at"][0],
        last_before=read(_LAST_BEFORE, [history[0]])["last_at"][0],
        site_stats=read(_SITE_STATS, this_week),
        median_bounds=read(_MEDIAN_BOUNDS, this_week),
        model_names=read(_MODEL_NAMES, this_week),
        class_days=read(_CLASS_DAYS, [prev_week[0], end]),
    )


def _has_probes(wh: Warehouse, start: datetime, end: datetime) -> bool:
    return bool(_query(wh, _ANY_IN, [start, end])["found"][0])


def report_week(wh: Warehouse, now: datetime) -> IsoWeek:
    """The week a report is about when none is given.

    ``default_week``: the current week, or during its first day the week that just
    ended. When that week has no probes but the current one has (a warehouse started
    on a Monday), the current week: a first report must show the probes that exist.
    """
    week, current = default_week(now), IsoWeek.containing(now)
    if week == current or _has_probes(wh, week.start, week.end):
        return week
    return current if _has_probes(wh, current.start, now) else week
