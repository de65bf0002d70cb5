"""``maintain`` and ``nerfwatch warehouse maintain`` on real lakes: compaction keeps every
row once, duplicates from the upstream flush race are repaired, one run at a time."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.warehouse import Warehouse
from pipeline.warehouse.maintenance import maintain
from tests.support.warehouses import LAKE_BACKENDS
from tests.test_warehouse_lake import rows

on_every_lake = pytest.mark.parametrize("warehouse", LAKE_BACKENDS, indirect=True)


@on_every_lake
def test_maintenance_compacts_and_keeps_every_row_once(warehouse: Warehouse) -> None:
    batches = [rows(4, site=f"s{i}") for i in range(6)]  # small commits: inlined
    for batch in batches:
        warehouse.insert_rows("probe_results", batch, key="run_id")
    done = maintain(warehouse, holder="test", keep=timedelta(0))
    assert done.skipped is None, done.skipped
    assert [step.split(":")[0] for step in done.steps] == [
        "flush inlined",
        "merge files",
        "expire snapshots",
        "delete expired files",
    ]
    counts = warehouse.query("SELECT count(*) AS n, count(DISTINCT run_id) AS u FROM probes")
    assert counts.row(0) == (24, 24)
    with warehouse.connect() as con:
        files = con.execute(
            "SELECT count(*) FROM ducklake_list_files('warehouse', 'probe_results')"
        ).fetchall()[0][0]
    assert files == 1  # six inlined commits became one file
    assert warehouse.insert_rows("probe_results", batches[0], key="run_id") == 0


@on_every_lake
def test_maintenance_reduces_duplicate_keys_to_one_copy(warehouse: Warehouse) -> None:
    batch = rows(30)
    warehouse.insert_rows("probe_results", batch, key="run_id")
    warehouse.insert_frame("probe_results", warehouse.query("SELECT * FROM probe_results LIMIT 7"))
    assert warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 37
    done = maintain(warehouse, holder="test")
    assert done.duplicates_removed == 7
    counts = warehouse.query("SELECT count(*), count(DISTINCT run_id) FROM probe_results")
    assert counts.row(0) == (30, 30)


@on_every_lake
def test_only_one_maintenance_runs_at_a_time(warehouse: Warehouse) -> None:
    warehouse.execute(
        "CREATE TABLE IF NOT EXISTS _maintenance_lease (holder VARCHAR, until TIMESTAMPTZ)"
    )
    warehouse.execute(
        "INSERT INTO _maintenance_lease VALUES ('site-b:42', now() + INTERVAL 1 HOUR)"
    )
    busy = maintain(warehouse, holder="site-a:7")
    assert busy.skipped is not None and "site-b:42" in busy.skipped and not busy.steps
    warehouse.execute("UPDATE _maintenance_lease SET until = now() - INTERVAL 1 SECOND")
    taken_over = maintain(warehouse, holder="site-a:7")  # the holder crashed: lease expired
    assert taken_over.skipped is None
    assert warehouse.query("SELECT count(*) AS n FROM _maintenance_lease")["n"][0] == 0


def _killed_pid() -> int:
    """The PID of a process that was killed with SIGKILL (as a maintenance can be)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    return proc.pid


@on_every_lake
def test_the_lease_of_a_maintenance_killed_on_this_host_is_taken_over_at_once(
    warehouse: Warehouse,
) -> None:
    host = socket.gethostname()
    warehouse.execute(
        "CREATE TABLE IF NOT EXISTS _maintenance_lease (holder VARCHAR, until TIMESTAMPTZ)"
    )
    alive = f"{host}:{os.getppid()}"  # another maintenance here, still running
    warehouse.execute("INSERT INTO _maintenance_lease VALUES (?, now() + INTERVAL 1 HOUR)", [alive])
    busy = maintain(warehouse, holder=f"{host}:{os.getpid()}")
    assert busy.skipped is not None and alive in busy.skipped
    killed = f"{host}:{_killed_pid()}"
    warehouse.execute("UPDATE _maintenance_lease SET holder = ?", [killed])
    done = maintain(warehouse, holder=f"{host}:{os.getpid()}")
    assert done.skipped is None, done.skipped
    assert warehouse.query("SELECT count(*) AS n FROM _maintenance_lease")["n"][0] == 0


def test_a_file_needs_no_maintenance_and_the_command_says_so(tmp_path: Path) -> None:
    file = Warehouse(tmp_path / "nerfwatch.duckdb")
    file.migrate()
    result = CliRunner().invoke(app, ["warehouse", "maintain", "--db", str(file.path)])
    assert result.exit_code == 0
    assert "nothing done: a DuckDB file compacts itself at checkpoints" in result.output
    bad = CliRunner().invoke(app, ["warehouse", "maintain", "--db", str(file.path), "--keep", "x"])
    assert bad.exit_code == 2 and "--keep" in bad.output
