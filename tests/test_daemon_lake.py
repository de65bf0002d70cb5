"""The daemon writes into a DuckLake warehouse as it does into the file: through its flush
process (the lake crosses the process boundary), every scheduled run one row, and
``status`` reads the lake. The catalog is SQLite and the data a local folder here;
tests/test_warehouse.py runs the storage itself on PostgreSQL and S3 too."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.config import Config
from pipeline.daemon import Daemon, DaemonStats, DaemonTuning
from pipeline.daemon.status import gather_status
from pipeline.warehouse import Lake, Warehouse
from tests.support.daemon import LocalProbe, make_config
from tests.support.waiting import within

pytestmark = pytest.mark.slow

QUIET = DaemonTuning(install_signals=False, schedule_report=False)


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
