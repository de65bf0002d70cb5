"""The daemon writes into a DuckLake warehouse as it does into the file: through its flush
process (the lake crosses the process boundary), every scheduled run one row, and
``status`` reads the lake. The catalog is SQLite and the data a local folder here;
tests/test_warehouse.py runs the storage itself on PostgreSQL and S3 too."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pipeline.config import Config
from pipeline.daemon import Daemon, DaemonStats, DaemonTuning
from pipeline.daemon.status import gather_status
from pipeline.warehouse import Lake, Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.daemon import LocalProbe, make_config
from tests.support.waiting import within

pytestmark = pytest.mark.slow

QUIET = DaemonTuning(install_signals=False, schedule_report=False)
T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)


def _lake_config(tmp_path: Path) -> Config:
    config = make_config(tmp_path, every_s=0.5)
    lake = Lake(catalog=f"sqlite:{tmp_path / 'catalog.sqlite'}", data_path=str(tmp_path / "data"))
    return replace(config, warehouse=replace(config.warehouse, lake=lake))


def _run(config: Config, seconds: float) -> DaemonStats:
    async def main() -> DaemonStats:
        daemon = Daemon(config, probe_fn=LocalProbe(latency_s=0.02), tuning=QUIET)
        return await within(daemon.run(stop_after_s=seconds), seconds + 180, "the daemon's run")

    return asyncio.run(main())


def test_the_daemon_fills_a_lake_and_status_reads_it(tmp_path: Path) -> None:
    config = _lake_config(tmp_path)
    stats = _run(config, 3.0)
    assert not config.warehouse.path.exists()  # the lake, not the file, was written
    assert config.warehouse.lake is not None
    rows = Warehouse(config.warehouse.lake).query(
        "SELECT run_id, provider, run_status FROM probe_results"
    )
    assert stats.scheduled > 0
    assert rows.height == stats.scheduled == stats.rows
    assert rows["run_id"].n_unique() == rows.height
    assert set(rows["run_status"]) == {"done"}
    status = gather_status(config)
    assert status.warehouse_error is None
    assert status.spool_depth == 0
    assert {p.provider for p in status.providers if p.last_probe_at is not None} == {
        "alpha",
        "beta",
    }


def test_status_names_a_lake_that_was_never_created(tmp_path: Path) -> None:
    status = gather_status(_lake_config(tmp_path))
    assert any("no warehouse yet: lake sqlite:" in note for note in status.notes), status.notes


def test_status_on_a_shared_lake_reports_this_site_and_host_only(tmp_path: Path) -> None:
    """Two sites writing one lake: each one's 'nerfwatch status' showed the other's newest
    probe, errors and spend, and its daemon's heartbeat ('pid 6121' of the other site),
    so a site whose daemon had died still looked alive. Status reads this site's probes
    and this host's daemon events."""
    config = _lake_config(tmp_path)
    assert config.warehouse.lake is not None
    lake = Warehouse(config.warehouse.lake)
    here, elsewhere = config.warehouse.site, f"{config.warehouse.site}-elsewhere"
    mine, theirs = T0, T0 + timedelta(hours=1)  # the other site is the newer one
    lake.insert_rows(
        "probe_results",
        [
            _probe(here, mine, "ok"),
            _probe(elsewhere, theirs, "overloaded"),
        ],
        key="run_id",
    )
    lake.insert_rows(
        "daemon_events",
        [_event(socket.gethostname(), mine, 101), _event("another-host", theirs, 202)],
        key="event_id",
    )
    lake.close()
    status = gather_status(config)
    assert status.warehouse_error is None
    (alpha,) = [p for p in status.providers if p.provider == "alpha"]
    assert (alpha.last_probe_at, alpha.last_error_class, alpha.last_error) == (mine, "ok", None)
    assert status.last_event == f"heartbeat at {mine:%Y-%m-%dT%H:%M:%SZ} (pid 101)"
    assert status.rows_lost == 1  # this host's session only, not the other host's 5


def _probe(site: str, started_at: datetime, error_class: str) -> dict[str, object]:
    return ProbeResult(
        run_id=new_run_id(),
        started_at=started_at,
        provider="alpha",
        model="m",
        probe="short",
        task_family="arithmetic",
        error_class=error_class,
        probe_site=site,
    ).as_row()


def _event(host: str, occurred_at: datetime, pid: int) -> dict[str, object]:
    return {
        "event_id": new_run_id(),
        "session_id": f"session-{pid}",
        "occurred_at": occurred_at,
        "kind": "heartbeat",
        "host": host,
        "pid": pid,
        "rows_lost": 1 if pid == 101 else 5,
    }
