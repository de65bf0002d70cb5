"""A lake's servers crashing (SIGKILL, not a clean stop) under a flush, then coming back.

tests/test_lake_outages.py covers a catalog that refuses connections from the start (its
database missing); here PostgreSQL dies while a flush is committing: its data files are
already on S3 (SeaweedFS), the catalog's transaction is lost with the server, and the
cluster then recovers from its WAL. Each test starts its own PostgreSQL (the session's is
shared and must not be killed).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.daemon.flush import FlushOutcome
from pipeline.daemon.schedule import job_specs
from pipeline.daemon.status import gather_status
from pipeline.warehouse import Lake, Warehouse
from tests.support.daemon import make_config
from tests.support.lake_sites import ROWS, Site, lock_commits, open_site
from tests.support.postgres import PostgresServer, server_binaries, start_postgres, stop
from tests.support.seaweedfs import BUCKET, KEY_ID, SECRET, S3Server, start_s3, weed_binary
from tests.support.seaweedfs import stop as stop_s3
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

WAIT_DEADLINE_S = 60.0
PG_PASSWORD = "pg-password-never-shown"  # a sentinel to look for in the logs


class Cluster:
    """A PostgreSQL of this test's own, which the test may kill and start again."""

    def __init__(self) -> None:
        bin_dir = server_binaries()
        if bin_dir is None:
            pytest.skip("PostgreSQL server binaries are not installed")
        self.server: PostgresServer = start_postgres(bin_dir)

    def restart(self) -> None:
        self.server = self.server.restarted()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    own = Cluster()
    try:
        yield own
    finally:
        if own.server.process.poll() is None:
            stop(own.server)


def _waiting_on_a_lock(server: PostgresServer, database: str) -> bool:
    return (
        server.sql(
            database,
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database()",
        ).strip()
        != "0"
    )


def test_a_catalog_killed_mid_commit_loses_no_row_and_stores_none_twice(
    tmp_path: Path,
    cluster: Cluster,
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """PostgreSQL is SIGKILLed while a flush's commit waits inside it (its Parquet files
    already uploaded), stays down for another flush, and restarts from its WAL. The flush
    fails without raising, the outage is one classified error line, the rows wait in the
    spool and ``status`` says where the lake is out of reach; the first flush after the
    restart stores every spooled row once. No secret reaches a log line or a message."""
    for name, value in {**s3_server.environment(), "PGPASSWORD": PG_PASSWORD}.items():
        monkeypatch.setenv(name, value)
    database = cluster.server.new_database()
    lake = Lake(f"postgres:{cluster.server.conninfo(database)}", f"s3://{BUCKET}/{database}/")
    config = make_config(tmp_path, location=lake)
    spec = job_specs(config)["alpha/short"]
    caplog.set_level(logging.INFO)

    async def run(site: Site) -> tuple[list[FlushOutcome], int, str | None]:
        await site.spool_rows()
        outcomes = [await site.flush()]  # the lake is up: its catalog and schema exist
        await site.spool_rows()
        holder = lock_commits(cluster.server, database)
        try:
            committing = asyncio.ensure_future(site.flush())
            await asyncio.to_thread(
                wait_until,
                lambda: _waiting_on_a_lock(cluster.server, database),
                WAIT_DEADLINE_S,
                "the flush's commit to wait on the locked snapshot table",
            )
            await asyncio.to_thread(cluster.server.crash)
            outcomes.append(await committing)
        finally:
            holder.kill()
            holder.communicate(timeout=WAIT_DEADLINE_S)
        await site.spool_rows()
        outcomes.append(await site.flush())  # still down
        status = await asyncio.to_thread(gather_status, config)
        await asyncio.to_thread(cluster.restart)
        outcomes.append(await site.flush())
        return outcomes, status.spool_depth, status.warehouse_error

    with open_site("test", config.warehouse.spool_dir, lake, spec) as site:
        outcomes, depth_in_outage, status_error = asyncio.run(run(site))
    _assert_rows_kept(lake, site.spooled, outcomes, depth_in_outage)
    assert status_error is not None and database in status_error, status_error

    errors = _one_error_line(caplog)
    assert errors[0].startswith("flush failed (the catalog is out of reach), the spool keeps"), (
        errors[0]
    )
    assert "on lake postgres:" in errors[0] and database in errors[0], "the line names its lake"
    assert any("reachable again after 2 failed flushes" in r.getMessage() for r in caplog.records)
    _assert_no_secret(caplog, outcomes, status_error)


@pytest.fixture
def own_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[S3Server]]:
    """A SeaweedFS of this test's own (the session's must not be killed), in a list the
    test replaces it in when it restarts it; stopped by PID at the end."""
    binary = weed_binary()
    if binary is None:
        pytest.skip("SeaweedFS's weed is not installed")
    servers = [start_s3(binary, tmp_path_factory.mktemp("own-seaweedfs"))]
    try:
        yield servers
    finally:
        if servers[-1].process.poll() is None:
            stop_s3(servers[-1])


def _unread_by_server(port: int) -> int:
    """Bytes and connections sent to a loopback server on ``port`` that its (frozen)
    process has not read or accepted yet: the receive queues in /proc/net/tcp of its
    sockets (a listener's counts connections waiting to be accepted)."""
    unread = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port:
            unread += int(fields[4].split(":")[1], 16)
    return unread


def test_an_s3_server_killed_under_a_flush_loses_no_row_and_stores_none_twice(
    tmp_path: Path,
    postgres_server: PostgresServer,
    own_s3: list[S3Server],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """SeaweedFS is frozen (SIGSTOP) so that a flush's S3 request waits in its listen
    queue, then SIGKILLed, stays down for another flush, and restarts on the same folder.
    The flushes fail without raising; one classified error line; ``status`` says the
    lake's data are out of reach; the first flush after the restart stores every spooled
    row once; neither the S3 key pair nor the catalog's password is ever shown."""
    for name, value in {**own_s3[0].environment(), "PGPASSWORD": PG_PASSWORD}.items():
        monkeypatch.setenv(name, value)
    database = postgres_server.new_database()
    lake = Lake(f"postgres:{postgres_server.conninfo(database)}", f"s3://{BUCKET}/{database}/")
    config = make_config(tmp_path, location=lake)
    spec = job_specs(config)["alpha/short"]
    caplog.set_level(logging.INFO)

    async def run(site: Site) -> tuple[list[FlushOutcome], int, str | None]:
        await site.spool_rows()
        outcomes = [await site.flush()]
        await site.spool_rows()
        s3 = own_s3[0]
        os.kill(s3.process.pid, signal.SIGSTOP)
        try:
            in_flight = asyncio.ensure_future(site.flush())
            await asyncio.to_thread(
                wait_until,
                lambda: _unread_by_server(s3.port) > 0,
                WAIT_DEADLINE_S,
                "the flush to call on the frozen S3 server",
            )
        finally:
            s3.crash()  # SIGKILL ends a stopped process too
        outcomes.append(await in_flight)
        await site.spool_rows()
        outcomes.append(await site.flush())  # still down
        status = await asyncio.to_thread(gather_status, config)
        own_s3.append(await asyncio.to_thread(s3.restarted))
        outcomes.append(await site.flush())
        return outcomes, status.spool_depth, status.warehouse_error

    with open_site("test", config.warehouse.spool_dir, lake, spec) as site:
        outcomes, depth_in_outage, status_error = asyncio.run(run(site))
    _assert_rows_kept(lake, site.spooled, outcomes, depth_in_outage)
    assert status_error is not None and lake.data_path in status_error, status_error

    errors = _one_error_line(caplog)
    assert errors[0].startswith("flush failed (S3 is out of reach), the spool keeps"), errors[0]
    _assert_no_secret(caplog, outcomes, status_error)


def _assert_rows_kept(
    lake: Lake, spooled: list[str], outcomes: list[FlushOutcome], depth_in_outage: int
) -> None:
    """Flushed before, failed twice (killed, still down), every spooled row kept waiting
    and stored exactly once by the first flush after the restart."""
    first, killed, down, back = outcomes
    assert first.error is None and first.inserted == ROWS, first
    assert killed.error and down.error, (killed, down)
    assert depth_in_outage == 2 * ROWS
    assert back.error is None and back.inserted == 2 * ROWS, back
    stored = Warehouse(lake).query("SELECT run_id FROM probe_results")["run_id"].to_list()
    assert sorted(stored) == sorted(spooled), "each spooled row stored exactly once"


def _one_error_line(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The outage's error lines: exactly one, on one line."""
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, f"one line for the outage: {errors}"
    assert "\n" not in errors[0]
    return errors


def _assert_no_secret(
    caplog: pytest.LogCaptureFixture, outcomes: list[FlushOutcome], status_error: str | None
) -> None:
    said = [r.getMessage() for r in caplog.records]
    said += [o.error or "" for o in outcomes] + [status_error or ""]
    for secret in (PG_PASSWORD, SECRET, KEY_ID):
        assert not [line for line in said if secret in line], f"{secret} leaked"
