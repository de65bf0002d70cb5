"""The report's daily error counts, now counted from ``probes`` on started_at bounds,
are the ``errors_hourly`` view's hourly counts summed by day, as before.

It guards an equivalence (a speed change: the view joined the whole history before the
window applied), so it passes on the old code too. ``now`` is pinned mid-hour with
probes after it in the same hour, where hour bounds and started_at bounds differ.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
from polars.testing import assert_frame_equal

from pipeline.report import IsoWeek
from pipeline.report.data import load_report_data
from pipeline.report.timeline import CHART_DAYS
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

WEEK = IsoWeek(2026, 47)

_VIEW = """
SET TimeZone = 'UTC';
SELECT provider, date_trunc('day', hour) AS day, error_class, sum(n)::BIGINT AS n
FROM errors_hourly WHERE hour >= ? AND hour < ?
GROUP BY ALL ORDER BY provider, day, error_class
"""


def test_daily_errors_match_the_hourly_view(warehouse: Warehouse) -> None:
    end = datetime(2026, 11, 20, 18, tzinfo=UTC)
    series = [Series("alpha", "a-short", "short"), Series("beta", "b-long", "long")]
    frame = probe_frame(
        series, end=end, days=30, every_min=7, degraded=(end - timedelta(days=3), end)
    )
    warehouse.insert_frame("probe_results", frame, key="run_id")
    for now in (datetime(2026, 11, 20, 12, 30, tzinfo=UTC), datetime(2026, 11, 20, 12, tzinfo=UTC)):
        data = load_report_data(warehouse, WEEK, now=now)
        expected = warehouse.query(_VIEW, [WEEK.end - timedelta(days=CHART_DAYS), now])
        assert expected.filter(pl.col("error_class") != "ok").height > 0
        assert_frame_equal(data.errors_daily, expected, check_exact=True)
    # the 12:00 hour's probes from 12:30 on are in the view's hour: they are counted
    late = frame.filter(pl.col("started_at") >= datetime(2026, 11, 20, 12, 30, tzinfo=UTC))
    assert late.filter(pl.col("started_at") < datetime(2026, 11, 20, 13, tzinfo=UTC)).height > 0
