"""``nerfwatch status`` reads a recent window first and older rows only where needed
(``pipeline.daemon.status_latest``), with the same answer as the full scan it replaced.

The full scan is kept here as the oracle (``_FULL_SCAN_SQL``, status's query until
then), run on the same real DuckDB file: providers whose last error is months old,
that never erred, that have no recent row at all, that were only skipped lately, whose
last error sits right at the window's edge, plus another site's rows, synthetic rows,
skipped runs today and a row stamped ahead of the clock; on a file and on a lake.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from pipeline.daemon.state import day_start
from pipeline.daemon.status_latest import WINDOW, latest_by_provider
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.warehouses import location_for

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
TODAY = day_start(NOW.date())
AHEAD_AFTER = NOW + timedelta(minutes=1)

_FULL_SCAN_SQL = """
SELECT provider,
  max(started_at) FILTER (WHERE run_status = 'done') AS last_probe_at,
  arg_max(error_class, started_at) FILTER (WHERE run_status = 'done') AS last_class,
  max(started_at) FILTER (WHERE run_status = 'done' AND error_class <> 'ok') AS last_error_at,
  arg_max(error_class || coalesce(': ' || error_detail, ''), started_at)
    FILTER (WHERE run_status = 'done' AND error_class <> 'ok') AS last_error,
  count(*) FILTER (WHERE run_status = 'skipped' AND started_at >= ?
    AND started_at < ?) AS today_skipped,
  count(*) FILTER (WHERE started_at > ?) AS ahead
FROM probe_results WHERE source = 'live' {site} GROUP BY provider
"""


def _row(
    provider: str,
    started_at: datetime,
    error: str | None = None,
    detail: str | None = None,
    *,
    run_status: str = "done",
    site: str = "site-a",
    source: str = "live",
) -> ProbeResult:
    return ProbeResult(
        run_id=new_run_id(),
        started_at=started_at,
        provider=provider,
        model="m",
        probe="short",
        task_family="arithmetic",
        source=source,
        probe_site=site,
        run_status=run_status,
        skip_reason="budget" if run_status == "skipped" else None,
        context_target_tokens=2_000,
        max_output_tokens=512,
        error_class=(error or "ok") if run_status == "done" else None,
        error_detail=detail,
    )


def _history() -> list[ProbeResult]:
    days = [TODAY - timedelta(days=d) for d in range(200, -1, -1)]
    edge = TODAY - WINDOW
    rows = [_row("steady", day + timedelta(hours=3)) for day in days]  # never erred
    rows += [_row("old-error", day + timedelta(hours=4)) for day in days]
    rows += [
        _row("old-error", TODAY - timedelta(days=150), "timeout", "no answer in 60 s"),
        _row("old-error", TODAY - timedelta(days=120), "overloaded", "overloaded_error"),
        _row("old-error", TODAY - timedelta(days=90), "http_5xx"),  # no detail
        _row("gone", TODAY - timedelta(days=70), "rate_limited", "slow down"),
        _row("gone", TODAY - timedelta(days=60)),
        _row("gone-clean", TODAY - timedelta(days=40)),
        _row("paused", TODAY - timedelta(days=30), "auth", "key revoked"),
        _row("paused", TODAY - timedelta(days=29)),
        _row("paused", NOW - timedelta(hours=2), run_status="skipped"),
        _row("paused", NOW - timedelta(hours=1), run_status="skipped"),
        _row("edge", edge, "timeout", "at the edge"),  # in the window, just
        _row("edge", edge - timedelta(microseconds=1), "overloaded", "before the edge"),
        _row("edge", NOW - timedelta(hours=1)),
        _row("before-edge", edge - timedelta(microseconds=1), "timeout", "just before"),
        _row("before-edge", NOW - timedelta(hours=1)),
        _row("busy", TODAY - timedelta(days=100), "timeout", "long ago"),
        _row("busy", NOW - timedelta(days=3), "rate_limited", "lately"),
        _row("busy", NOW - timedelta(hours=5)),
        _row("busy", NOW - timedelta(hours=4), run_status="skipped"),
        _row("busy", NOW + timedelta(hours=2)),  # stamped ahead: a clock set back since
        _row("steady", NOW - timedelta(days=50), "timeout", "site b's", site="site-b"),
        _row("steady", NOW - timedelta(days=2), "timeout", "synthetic", source="synthetic"),
        _row("elsewhere", NOW - timedelta(days=90), "timeout", "only b", site="site-b"),
    ]
    return sorted(rows, key=lambda r: r.started_at)  # rows arrive in time order


@pytest.fixture(scope="module", params=["duckdb", "ducklake+sqlite+local"])
def warehouse(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Warehouse]:
    """The history on a DuckDB file, and on a lake (whose Parquet files have zone maps too)."""
    folder = Path(tmp_path_factory.mktemp("latest"))
    warehouse = Warehouse(location_for(request.param, folder, request))
    warehouse.insert_rows("probe_results", [r.as_row() for r in _history()], key="run_id")
    yield warehouse
    warehouse.close()


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(
        "provider", "last_probe_at", "last_class", "last_error_at", "last_error",
        pl.col("today_skipped").cast(pl.Int64), pl.col("ahead").cast(pl.Int64),
    ).sort("provider")  # fmt: skip


@pytest.mark.parametrize("site", [None, "site-a", "site-b"])
def test_windowed_answer_equals_the_full_scan(warehouse: Warehouse, site: str | None) -> None:
    oracle = warehouse.query(
        _FULL_SCAN_SQL.format(site="" if site is None else "AND probe_site = ?"),
        [TODAY, TODAY + timedelta(days=1), AHEAD_AFTER, *([] if site is None else [site])],
    )
    windowed = latest_by_provider(warehouse, TODAY, NOW, AHEAD_AFTER, site)
    assert _sorted(windowed).to_dicts() == _sorted(oracle).to_dicts()


def test_the_cases_are_what_they_claim(warehouse: Warehouse) -> None:
    """The oracle's answer holds each case the window has to get right."""
    got = {r["provider"]: r for r in latest_by_provider(
        warehouse, TODAY, NOW, AHEAD_AFTER, "site-a").iter_rows(named=True)}  # fmt: skip
    assert got["old-error"]["last_error"] == "http_5xx"
    assert got["old-error"]["last_error_at"] == TODAY - timedelta(days=90)
    assert got["steady"]["last_error"] is None and got["steady"]["last_class"] == "ok"
    assert got["gone"]["last_error"] == "rate_limited: slow down"
    assert got["gone"]["last_probe_at"] == TODAY - timedelta(days=60)
    assert got["gone-clean"]["last_error_at"] is None
    assert (
        got["paused"]["today_skipped"] == 2 and got["paused"]["last_error"] == "auth: key revoked"
    )
    assert got["edge"]["last_error"] == "timeout: at the edge"
    assert got["before-edge"]["last_error"] == "timeout: just before"
    assert got["busy"]["last_error"] == "rate_limited: lately" and got["busy"]["ahead"] == 1
    assert "elsewhere" not in got
