"""A lake's servers failing under the flush and the maintenance: what is logged, what is
kept, what a command says. Real PostgreSQL (tests/support/postgres.py) as the catalog."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.daemon.flush import Flusher, FlushOutcome, SegmentWriter
from pipeline.daemon.rows import bare_row
from pipeline.daemon.schedule import job_specs
from pipeline.daemon.spool import Spool
from pipeline.warehouse import Lake, Warehouse
from tests.support.daemon import make_config
from tests.support.postgres import PostgresServer
from tests.test_config import VALID
from tests.test_warehouse_lake import rows

OUTAGE_FLUSHES = 4
ROWS_PER_FLUSH = 5
COMMAND_DEADLINE_S = 120.0


def test_a_catalog_outage_is_logged_once_and_its_rows_land_once_it_is_back(
    tmp_path: Path, postgres_server: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The catalog's database is missing (PostgreSQL refuses every connection) for several
    flushes: one error line for the outage, not one per flush; the spool keeps the rows,
    and the first flush after the database appears stores each of them once."""
    database = postgres_server.unused_database()
    lake = Lake(f"postgres:{postgres_server.conninfo(database)}", str(tmp_path / "data"))
    spec = job_specs(make_config(Path("unused")))["alpha/short"]
    spooled: list[str] = []

    async def flushes() -> tuple[list[FlushOutcome], FlushOutcome]:
        spool = Spool(tmp_path / "spool")
        spool.open()
        flusher = Flusher(spool, SegmentWriter(Warehouse(lake, lock_wait_s=0.2), spool.directory))

        async def spool_and_flush() -> FlushOutcome:
            for _ in range(ROWS_PER_FLUSH):
                row = bare_row(spec, datetime.now(UTC), "skipped", "misfire", site="test")
                await spool.append(row.to_json())
                spooled.append(row.run_id)
            return await asyncio.to_thread(flusher.flush_once)

        try:
            failed = [await spool_and_flush() for _ in range(OUTAGE_FLUSHES)]
            await asyncio.to_thread(postgres_server.create_database, database)
            return failed, await spool_and_flush()
        finally:
            spool.close()
            flusher.close()

    caplog.set_level(logging.INFO, logger="pipeline.daemon.flush.daemon_side")
    failed, back = asyncio.run(flushes())

    assert all(outcome.error and database in outcome.error for outcome in failed), failed
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, f"one line per outage, not one per flush: {errors}"
    assert "spool keeps the rows" in errors[0] and database in errors[0]
    assert any("reachable again after 4 failed flushes" in r.getMessage() for r in caplog.records)
    assert back.error is None and back.inserted == OUTAGE_FLUSHES * ROWS_PER_FLUSH + ROWS_PER_FLUSH
    stored = Warehouse(lake).query("SELECT run_id FROM probe_results")["run_id"].to_list()
    assert sorted(stored) == sorted(spooled)


def test_maintain_on_a_lake_whose_data_files_are_gone_says_so_in_one_line(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    """The catalog names Parquet files that were deleted: ``nerfwatch warehouse maintain``
    fails with one line naming the lake and a missing file, never a traceback."""
    data = tmp_path / "data"
    lake = Lake(f"postgres:{postgres_server.conninfo(postgres_server.new_database())}", str(data))
    warehouse = Warehouse(lake)
    warehouse.insert_rows("probe_results", rows(50), key="run_id")  # enough for a data file
    warehouse.close()
    assert list(data.rglob("*.parquet"))
    shutil.rmtree(data)
    config = tmp_path / "lake.toml"
    config.write_text(
        VALID.replace(
            'path = "data/nw.duckdb"',
            f'path = "data/nw.duckdb"\nbackend = "ducklake"\ncatalog = "{lake.catalog}"\n'
            f'data_path = "{data}"',
            1,
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pipeline.cli import main; main()",
            "warehouse",
            "maintain",
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=COMMAND_DEADLINE_S,
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "maintenance of lake postgres:" in lines[0] and ".parquet" in lines[0], lines[0]
