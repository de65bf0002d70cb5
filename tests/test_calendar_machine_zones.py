"""The analysis on a machine whose clock is set to a zone with a part-hour offset.

DuckDB buckets ``date_trunc('hour', ...)`` on a TIMESTAMPTZ in the session's time zone,
which defaults to the process's (``TZ``). In Kathmandu (+5:45) or St. John's (-3:30) the
analysis's hourly buckets started at :15 or :30 UTC: two probes 25 minutes apart on either
side of midnight UTC at the year's end shared one "hour", and on a five-week warehouse the
seasonality's peak hours moved by one (13-15 against 14-16 UTC) and the change points
changed. The analysis counts hours in UTC (``load_hourly``'s contract), whatever the zone.

Each zone runs in its own process: DuckDB's ICU reads ``TZ`` once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

REPO = Path(__file__).resolve().parents[1]
LATE = datetime(2026, 12, 31, 23, 40, tzinfo=UTC)  # 2026-W53, the last day of 2026
EARLY = datetime(2027, 1, 1, 0, 5, tzinfo=UTC)  # 25 minutes later, the first of 2027

_HOURS_THERE = """
import json, sys
from pipeline.analysis.series import load_hourly
from pipeline.warehouse import Warehouse
frame = load_hourly(Warehouse(sys.argv[1]))
print(json.dumps([[h.isoformat(), n] for h, n in zip(frame["hour"], frame["n"], strict=True)]))
"""


def _in_zone(script: str, zone: str, *args: str) -> Any:
    """What ``script`` prints as JSON, run by a process whose ``TZ`` is ``zone``."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env={**os.environ, "TZ": zone},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _hours_in_zone(location: Path, zone: str) -> list[list[object]]:
    """(UTC hour, probes) of ``load_hourly`` run by a process whose ``TZ`` is ``zone``."""
    result: list[list[object]] = _in_zone(_HOURS_THERE, zone, str(location))
    return result


def _store_year_end_probes(warehouse: Warehouse) -> None:
    """Two answered probes 25 minutes apart, either side of midnight UTC at the year's end."""
    frame = probe_frame([Series("alpha", "alpha-short", "short")], end=EARLY, days=2 / 24)
    frame = frame.with_columns(
        started_at=pl.Series([LATE, EARLY], dtype=pl.Datetime("us", "UTC")),
        error_class=pl.lit("ok"),
    )
    warehouse.insert_frame("probe_results", frame, key="run_id")


@pytest.mark.parametrize("zone", ["Asia/Kathmandu", "America/St_Johns"])
def test_hourly_buckets_are_utc_hours_whatever_the_machines_zone(
    warehouse: Warehouse, zone: str
) -> None:
    _store_year_end_probes(warehouse)
    assert _hours_in_zone(warehouse.path, zone) == [
        ["2026-12-31T23:00:00+00:00", 1],
        ["2027-01-01T00:00:00+00:00", 1],
    ]


_VIEW_THERE = """
import json, sys
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
rows = con.sql("SELECT epoch(hour), epoch(day) FROM probes ORDER BY started_at").fetchall()
query = open(sys.argv[2]).read().rstrip().rstrip(";")
spend = con.sql(f"SELECT epoch(day) FROM ({query})").fetchall()
print(json.dumps({"probes": rows, "daily_spend": [day for (day,) in spend]}))
"""


@pytest.mark.parametrize("zone", ["Asia/Kathmandu", "America/St_Johns", "Pacific/Kiritimati"])
def test_views_bucket_utc_hours_and_days_in_the_plain_duckdb_client(
    warehouse: Warehouse, zone: str
) -> None:
    """A user's own ``duckdb`` session (no ``SET TimeZone``) sees the report's UTC buckets."""
    _store_year_end_probes(warehouse)
    query = REPO / "sql" / "queries" / "daily_spend.sql"
    seen = _in_zone(_VIEW_THERE, zone, str(warehouse.path), str(query))
    last_hour, new_year = LATE.replace(minute=0), EARLY.replace(minute=0)
    assert seen["probes"] == [
        [last_hour.timestamp(), LATE.replace(hour=0, minute=0).timestamp()],
        [new_year.timestamp(), new_year.timestamp()],
    ]
    assert sorted(seen["daily_spend"]) == [
        LATE.replace(hour=0, minute=0).timestamp(),
        new_year.timestamp(),
    ]


_PLAIN_READ_THERE = """
import json, sys
from pipeline.warehouse import Warehouse
frame = Warehouse(sys.argv[1]).query(
    "SELECT epoch(date_trunc('day', started_at)) AS day, "
    "epoch(date_trunc('hour', started_at)) AS hour FROM probe_results ORDER BY started_at"
)
print(json.dumps([frame["day"].to_list(), frame["hour"].to_list()]))
"""


def test_a_plain_warehouse_read_buckets_utc_days_in_kathmandu(warehouse: Warehouse) -> None:
    """Any reader's own SQL, not only the analysis's and the report's, counts UTC days: the
    Warehouse sets the zone on its connections. Before, a query that did not say
    ``SET TimeZone`` cut days at 18:15 UTC in Kathmandu (+5:45), so 23:40 UTC on the last
    day of 2026 fell on 2027-01-01 there."""
    _store_year_end_probes(warehouse)
    days, hours = _in_zone(_PLAIN_READ_THERE, "Asia/Kathmandu", str(warehouse.path))
    midnight = LATE.replace(hour=0, minute=0).timestamp()
    assert days == [midnight, EARLY.replace(minute=0).timestamp()]
    assert hours == [LATE.replace(minute=0).timestamp(), EARLY.replace(minute=0).timestamp()]
