"""The report's four daily series, now summed from one grouped pass over ``probes``
(pipeline/report/daily_series.py), equal what the four queries that each scanned the raw
probes gave, to the bit.

A guard of an equivalence (a speed change), so it passes on the old code too. The old
queries are kept here verbatim and run against the same seeded warehouse. The seed has the
edges a regrouping could get wrong: two models of one provider (the penalty is hourly per
model), a NULL context class, answers with no TTFT, failures with one, a NULL error
class, skipped runs, a
day with no answers, and ``now`` mid-hour with probes after it in that hour (where the
chart's window and the whole-hours window differ).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from pipeline.report import IsoWeek
from pipeline.report.data import _load, _Reader, load_report_data
from pipeline.report.timeline import CHART_DAYS
from pipeline.warehouse import Warehouse
from tests.support.report import Series, insert_hostile_rows, probe_frame

WEEK = IsoWeek(2026, 47)
END = datetime(2026, 11, 20, 18, tzinfo=UTC)

_OLD_DAILY_TTFT = """
SELECT provider, coalesce(context_class, 'short') AS context_class, day,
       count(*) AS n, count(ttft_ms) FILTER (WHERE ok) AS n_ttft,
       quantile_cont(ttft_ms, 0.50) FILTER (WHERE ok) AS p50,
       quantile_cont(ttft_ms, 0.95) FILTER (WHERE ok) AS p95
FROM probes WHERE started_at >= ? AND started_at < ?
GROUP BY ALL ORDER BY provider, context_class, day
"""

_OLD_ERRORS_DAILY = """
SELECT provider, day, error_class, count(*) AS n
FROM probes WHERE started_at >= ? AND started_at < ?
GROUP BY ALL ORDER BY provider, day, error_class
"""

_OLD_ACCURACY_DAILY = """
SELECT provider, day, count(*) AS n, count(correct) AS n_scored,
       count(*) FILTER (WHERE correct) AS n_correct,
       count(*) FILTER (WHERE flagged) AS n_flagged
FROM probes WHERE started_at >= ? AND started_at < ?
GROUP BY ALL ORDER BY provider, day
"""

_OLD_PENALTY_DAILY = """
SELECT provider, date_trunc('day', hour) AS day, median(penalty_ratio) AS penalty
FROM long_context_penalty WHERE hour >= ? AND hour < ? AND penalty_ratio IS NOT NULL
GROUP BY ALL ORDER BY provider, day
"""


def _seed(wh: Warehouse) -> None:
    series = [
        Series("alpha", "a-short", "short"),
        Series("alpha", "a-long", "long", base_ttft_ms=900.0),
        Series("beta", "b-short", "short", vendor="Other"),
        Series("beta", "b-long", "long", vendor="Other"),
        Series("gamma", "g-short", "short"),
    ]
    frame = probe_frame(
        series, end=END, days=40, every_min=11, degraded=(END - timedelta(days=6), END), seed=7
    )
    frame = frame.with_columns(
        # beta's long probes ran on a second model for the last ten days
        model=pl.when(
            (pl.col("provider") == "beta")
            & (pl.col("probe") == "b-long")
            & (pl.col("started_at") >= END - timedelta(days=10))
        )
        .then(pl.lit("beta-model-2"))
        .otherwise(pl.col("model")),
        # gamma: some probes with no context class, some answers with no TTFT
        context_class=pl.when((pl.col("provider") == "gamma") & (pl.int_range(pl.len()) % 5 == 0))
        .then(None)
        .otherwise(pl.col("context_class")),
        ttft_ms=pl.when((pl.col("provider") == "gamma") & (pl.int_range(pl.len()) % 7 == 0))
        .then(None)
        .otherwise(pl.col("ttft_ms")),
        # gamma: some stalled after the first token, so failures with a TTFT
        error_class=pl.when((pl.col("provider") == "gamma") & (pl.int_range(pl.len()) % 11 == 3))
        .then(pl.lit("stall"))
        .otherwise(pl.col("error_class")),
    )
    # alpha answered nothing on one day: every probe of it failed
    outage = pl.col("started_at").dt.date() == (END - timedelta(days=12)).date()
    frame = frame.with_columns(
        error_class=pl.when((pl.col("provider") == "alpha") & outage)
        .then(pl.lit("timeout_connect"))
        .otherwise(pl.col("error_class")),
        ttft_ms=pl.when((pl.col("provider") == "alpha") & outage)
        .then(None)
        .otherwise(pl.col("ttft_ms")),
    )
    wh.insert_frame("probe_results", frame, key="run_id")
    odd = [
        {
            "run_id": str(uuid.uuid4()),
            "started_at": END - timedelta(days=2, minutes=13 * i),
            "provider": "beta",
            "model": "beta-model",
            "probe": "b-short",
            "task_family": "arithmetic",
            "context_class": "short",
            "source": "live",
            "run_status": status,
            "error_class": error,
        }
        for i, (status, error) in enumerate([("done", None), ("skipped", None), ("done", None)])
    ]
    wh.insert_rows("probe_results", odd, key="run_id")
    insert_hostile_rows(wh, "gamma", END - timedelta(days=1))


@pytest.mark.parametrize("warehouse", ["duckdb", "ducklake+sqlite+local"], indirect=True)
def test_daily_series_equal_the_four_scans(warehouse: Warehouse) -> None:
    _seed(warehouse)
    noon = datetime(2026, 11, 20, 12, tzinfo=UTC)
    # (now, the end of the whole hours before it: the 12:00 hour counts whole)
    for now, hours_end in ((noon + timedelta(minutes=30), noon + timedelta(hours=1)), (noon, noon)):
        data = load_report_data(warehouse, WEEK, now=now)
        charted = [WEEK.end - timedelta(days=CHART_DAYS), now]
        whole_hours = [charted[0], hours_end]  # the chart starts on a Monday's midnight

        def old(sql: str, params: list[datetime]) -> pl.DataFrame:
            return warehouse.query("SET TimeZone = 'UTC';\n" + sql, params)

        expected = {
            "daily_ttft": old(_OLD_DAILY_TTFT, charted),
            "errors_daily": old(_OLD_ERRORS_DAILY, whole_hours),
            "accuracy_daily": old(_OLD_ACCURACY_DAILY, charted),
            "penalty_daily": old(_OLD_PENALTY_DAILY, charted),
        }
        for name, frame in expected.items():
            assert frame.height > 30, name  # the seed reaches every series
            assert_frame_equal(getattr(data, name), frame, check_exact=True)
        # the edges are there: a day alpha answered nothing, two models in one hour's
        # penalty, NULL error classes
        ttft = expected["daily_ttft"]
        assert ttft.filter((pl.col("provider") == "alpha") & pl.col("p50").is_null()).height
        assert expected["errors_daily"]["error_class"].null_count() > 0
        assert ttft["n_ttft"].min() == 0


def test_the_groups_leave_no_table_behind(warehouse: Warehouse) -> None:
    """The grouped pass's temporary table is dropped once the series are read."""
    _seed(warehouse)
    with warehouse.connect(read_only=True) as con:
        _load(_Reader(warehouse, con), WEEK, datetime(2026, 11, 20, 12, 30, tzinfo=UTC))
        left = con.sql("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
    assert left == []
