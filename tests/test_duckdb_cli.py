"""The plain ``duckdb`` CLI (the pinned ``duckdb-cli`` wheel) opens a warehouse nerfwatch
wrote, read-only, and sees the same views: the README's promise, tested."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline.warehouse import Warehouse
from probes.ids import run_id_at
from tests.support.mounts import unavailable

T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
CLI_DEADLINE_S = 60.0


def duckdb_cli() -> Path:
    """The ``duckdb`` binary of this environment (dev dependency ``duckdb-cli``)."""
    beside = Path(sys.executable).parent / "duckdb"
    found = beside if beside.is_file() else shutil.which("duckdb")
    if found is None:
        unavailable("the duckdb CLI is not installed (dev dependency duckdb-cli)")
        raise AssertionError("unreachable")
    return Path(found)


def cli_rows(db: Path | None, sql: str) -> list[dict[str, str]]:
    """Run ``sql`` through the CLI on ``db`` opened read-only (None: an in-memory
    database, which may attach a lake); the result as CSV rows."""
    opened = [] if db is None else ["-readonly", str(db)]
    done = subprocess.run(
        [str(duckdb_cli()), "-csv", *opened, "-c", sql],
        capture_output=True,
        text=True,
        timeout=CLI_DEADLINE_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return list(csv.DictReader(io.StringIO(done.stdout)))


def test_the_duckdb_cli_is_the_pinned_version() -> None:
    done = subprocess.run(
        [str(duckdb_cli()), "-version"], capture_output=True, text=True, timeout=CLI_DEADLINE_S
    )
    assert done.stdout.startswith("v1.5.5"), done.stdout


def test_the_duckdb_cli_reads_the_views_of_a_warehouse_nerfwatch_wrote(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "nerfwatch.duckdb")
    rows = [
        {
            "run_id": run_id_at(int((T0 + timedelta(minutes=i)).timestamp() * 1000)),
            "started_at": T0 + timedelta(minutes=i),
            "provider": provider,
            "model": "m",
            "probe": "short",
            "task_family": "arithmetic",
            "context_class": "short",
            "error_class": "ok" if i % 4 else "rate_limited",
            "ttft_ms": 100.0 + i,
            "total_ms": 500.0,
        }
        for i in range(12)
        for provider in ("alpha", "beta")
    ]
    assert warehouse.insert_rows("probe_results", rows, key="run_id") == 24

    probes = cli_rows(
        warehouse.path, "SELECT provider, count(*) AS n FROM probes GROUP BY ALL ORDER BY ALL"
    )
    assert probes == [{"provider": "alpha", "n": "12"}, {"provider": "beta", "n": "12"}]
    hourly = cli_rows(
        warehouse.path, "SELECT provider, hour, n FROM hourly ORDER BY provider, hour"
    )
    assert [(r["provider"], r["n"]) for r in hourly] == [("alpha", "12"), ("beta", "12")]
    errors = cli_rows(warehouse.path, "SELECT count(*) AS n FROM errors_hourly")
    assert int(errors[0]["n"]) >= 2
    # what nerfwatch itself says agrees
    ours = warehouse.query("SELECT provider, n FROM hourly ORDER BY provider")
    assert ours["n"].to_list() == [12, 12]
