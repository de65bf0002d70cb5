"""A lake's catalog at its limits: its disk full, its connection slots taken, and two sites
flushing while it is SIGKILLed and restarted.

One PostgreSQL for the module, its cluster on a small tmpfs of its own (so a test can fill
the disk) and with few connection slots (so a test can take them all); the data go to the
session's SeaweedFS. Mounting needs root (CI runs as root); elsewhere the module is
skipped with the reason (failed in CI). tests/test_lake_crashes.py covers one flusher.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.daemon.flush import FlushOutcome
from pipeline.daemon.schedule import job_specs
from pipeline.warehouse import Lake, Warehouse
from tests.support.daemon import make_config
from tests.support.lake_sites import ROWS, Site, lock_commits, open_site
from tests.support.mounts import unavailable
from tests.support.postgres import USER, PostgresServer, server_binaries, start_postgres, stop
from tests.support.seaweedfs import BUCKET, KEY_ID, SECRET, S3Server
from tests.support.waiting import read_line, wait_until

pytestmark = pytest.mark.slow

WAIT_DEADLINE_S = 60.0
TMPFS_SIZE = "160m"  # the cluster (~40 MB with its first WAL segment) and room to grow
FLUSHES_TO_FILL = 60  # small flushes until the catalog needs a page it cannot have
SLOTS = 16  # max_connections, none reserved for superusers (the test's user is one)
LINE_CHARS = 1500  # a log line's bound: what failed and why, not every statement
PG_PASSWORD = "pg-password-never-shown"  # a sentinel to look for in the logs


@dataclass
class Catalog:
    """The module's PostgreSQL on its tmpfs; a test that restarts it replaces ``server``."""

    server: PostgresServer
    mount: Path


@pytest.fixture(scope="module")
def catalog() -> Iterator[Catalog]:
    bin_dir = server_binaries()
    if bin_dir is None:
        unavailable("PostgreSQL server binaries are not installed")
    assert bin_dir is not None
    mount = Path(tempfile.mkdtemp(prefix="nerfwatch-pg-tmpfs-"))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0755", "tmpfs", str(mount)],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        mount.rmdir()
        unavailable(f"cannot mount a tmpfs for the catalog: {done.stderr.strip()}")
    try:
        settings = {"max_connections": str(SLOTS), "superuser_reserved_connections": "0"}
        own = Catalog(start_postgres(bin_dir, parent=mount, settings=settings), mount)
        try:
            yield own
        finally:
            if own.server.process.poll() is None:
                stop(own.server)
    finally:
        subprocess.run(["umount", str(mount)], timeout=30, check=False)
        shutil.rmtree(mount, ignore_errors=True)


@contextlib.contextmanager
def _sites(tmp_path: Path, lake: Lake, *names: str) -> Iterator[list[Site]]:
    spec = job_specs(make_config(tmp_path, location=lake))["alpha/short"]
    with contextlib.ExitStack() as stack:
        yield [
            stack.enter_context(open_site(name, tmp_path / f"spool-{name}", lake, spec))
            for name in names
        ]


def _lake(
    catalog: Catalog, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> tuple[Lake, str]:
    for name, value in {**s3_server.environment(), "PGPASSWORD": PG_PASSWORD}.items():
        monkeypatch.setenv(name, value)
    database = catalog.server.new_database()
    conninfo = catalog.server.conninfo(database)
    return Lake(f"postgres:{conninfo}", f"s3://{BUCKET}/{database}/"), database


def _stored(lake: Lake, site: str) -> list[str]:
    warehouse = Warehouse(lake)
    try:
        frame = warehouse.query(f"SELECT run_id FROM probe_results WHERE probe_site = '{site}'")
    finally:
        warehouse.close()
    return sorted(frame["run_id"].to_list())


def _said_no_secret(caplog: pytest.LogCaptureFixture, outcomes: list[FlushOutcome]) -> None:
    said = [r.getMessage() for r in caplog.records] + [o.error or "" for o in outcomes]
    for secret in (PG_PASSWORD, SECRET, KEY_ID):
        assert not [line for line in said if secret in line], f"{secret} leaked"


def _error_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def _fill(folder: Path) -> Path:
    """A file that takes every free byte of ``folder``'s file system (ENOSPC ends it)."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for chunk in (b"\0" * (1 << 20), b"\0" * (1 << 12)):
            with contextlib.suppress(OSError):  # ENOSPC (anything else: see below)
                while os.write(fd, chunk) == len(chunk):
                    pass
    finally:
        os.close(fd)
    assert shutil.disk_usage(folder).free < 1 << 16, f"{folder} not full"
    return filler


def test_a_catalog_whose_disk_fills_up_loses_no_row_and_says_so(
    tmp_path: Path,
    catalog: Catalog,
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The catalog's file system fills up between two flushes: the flush fails without
    raising, one error line says the catalog's disk is full, and once space is freed the
    next flush stores every spooled row once."""
    lake, _ = _lake(catalog, s3_server, monkeypatch)
    caplog.set_level(logging.INFO)

    async def run(site: Site) -> list[FlushOutcome]:
        await site.spool_rows()
        outcomes = [await site.flush()]  # the lake's catalog and schema now exist
        filler = await asyncio.to_thread(_fill, catalog.mount)
        try:  # the catalog's pages have room left, its WAL segment is preallocated
            for _ in range(FLUSHES_TO_FILL):
                await site.spool_rows(ROWS // 4)
                outcomes.append(await site.flush())
                if outcomes[-1].error:
                    break
            outcomes.append(await site.flush())  # still full
        finally:
            filler.unlink()
        outcomes.append(await site.flush())
        return outcomes

    with _sites(tmp_path, lake, "test") as (site,):
        outcomes = asyncio.run(run(site))
    first, *filling, full, still_full, freed = outcomes
    assert first.error is None and first.inserted == ROWS, first
    assert full.error and still_full.error, (full, still_full)
    assert freed.error is None, freed
    assert first.inserted + sum(o.inserted for o in [*filling, freed]) == len(site.spooled)
    assert _stored(lake, "test") == sorted(site.spooled), "each spooled row stored once"
    errors = _error_lines(caplog)
    assert len(errors) == 1, errors
    assert errors[0].startswith("flush failed (the catalog's disk is full), the spool"), errors
    # the failed commit quotes its catalog statements (inlined rows too): one line, short
    assert "\n" not in errors[0] and len(errors[0]) < LINE_CHARS, errors[0]
    assert "No space left on device" in errors[0], errors[0]
    _said_no_secret(caplog, outcomes)


def _take_every_slot(server: PostgresServer, database: str) -> list[subprocess.Popen[str]]:
    """psql sessions holding every connection slot left (until PostgreSQL refuses one)."""
    holders: list[subprocess.Popen[str]] = []
    try:
        return _hold_slots(server, database, holders)
    except BaseException:
        _release(holders)
        raise


def _release(holders: list[subprocess.Popen[str]]) -> None:
    for holder in holders:
        holder.kill()
        holder.communicate(timeout=WAIT_DEADLINE_S)


def _hold_slots(
    server: PostgresServer, database: str, holders: list[subprocess.Popen[str]]
) -> list[subprocess.Popen[str]]:
    for _ in range(SLOTS + 1):
        holder = subprocess.Popen(
            [str(server.bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(server.port), "-U",
             USER, "-d", database, "-qAt"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert holder.stdin is not None
        holder.stdin.write("SELECT 'held';\n")
        holder.stdin.flush()
        try:
            assert read_line(holder, WAIT_DEADLINE_S, "a slot holder's 'held'") == "held"
        except AssertionError as refused:  # it carries psql's stderr; psql is gone
            assert "too many clients" in str(refused), refused
            return holders
        holders.append(holder)
    raise AssertionError(f"PostgreSQL took {SLOTS + 1} sessions with max_connections={SLOTS}")


def test_a_catalog_without_a_free_connection_slot_fails_the_flush_until_one_frees(
    tmp_path: Path,
    catalog: Catalog,
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Other clients take every connection slot: a running daemon's flush goes on through
    the connections it holds; once restarted, its flushes fail without raising, one error
    line says the catalog has no connection to spare, and the first flush after the slots
    free stores every spooled row once."""
    lake, database = _lake(catalog, s3_server, monkeypatch)
    caplog.set_level(logging.INFO)

    async def run(site: Site) -> list[FlushOutcome]:
        await site.spool_rows()
        outcomes = [await site.flush()]
        holders = await asyncio.to_thread(_take_every_slot, catalog.server, database)
        try:
            await site.spool_rows()
            outcomes.append(await site.flush())  # through the connections it keeps
            site.restart_flusher(lake)  # its connections closed; the next flush must connect
            holders += await asyncio.to_thread(_take_every_slot, catalog.server, database)
            for _ in range(2):
                await site.spool_rows()
                outcomes.append(await site.flush())
        finally:
            _release(holders)
        outcomes.append(await site.flush())
        return outcomes

    with _sites(tmp_path, lake, "test") as (site,):
        outcomes = asyncio.run(run(site))
    first, attached, *refused, freed = outcomes
    assert first.error is None and first.inserted == ROWS, first
    assert attached.error is None and attached.inserted == ROWS, attached
    assert all(o.error for o in refused), refused
    assert freed.error is None and freed.inserted == 2 * ROWS, freed
    assert _stored(lake, "test") == sorted(site.spooled), "each spooled row stored once"
    errors = _error_lines(caplog)
    assert len(errors) == 1, errors
    assert errors[0].startswith(
        "flush failed (the catalog has no connection to spare), the spool"
    ), errors
    _said_no_secret(caplog, outcomes)


def _commits_waiting(server: PostgresServer, database: str) -> int:
    return int(
        server.sql(
            database,
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database()",
        ).strip()
    )


def test_two_sites_flushing_through_a_catalog_crash_each_store_their_rows_once(
    tmp_path: Path,
    catalog: Catalog,
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two sites' flushes both wait inside their commits when PostgreSQL is SIGKILLed;
    both fail without raising, fail again while it is down, and after the restart (from
    its WAL) each site's rows are stored once: none lost, none twice, none mixed up."""
    lake, database = _lake(catalog, s3_server, monkeypatch)
    caplog.set_level(logging.INFO)

    async def together(sites: list[Site]) -> list[FlushOutcome]:
        return list(await asyncio.gather(*(site.flush() for site in sites)))

    async def run(sites: list[Site]) -> list[list[FlushOutcome]]:
        for site in sites:
            await site.spool_rows()
        rounds = [await together(sites)]  # both create or find the lake's schema at once
        for site in sites:
            await site.spool_rows()
        holder = lock_commits(catalog.server, database)
        try:
            committing = asyncio.ensure_future(together(sites))
            await asyncio.to_thread(
                wait_until,
                lambda: _commits_waiting(catalog.server, database) >= len(sites),
                WAIT_DEADLINE_S,
                "both sites' commits to wait on the locked snapshot table",
            )
            await asyncio.to_thread(catalog.server.crash)
            rounds.append(await committing)
        finally:
            holder.kill()
            holder.communicate(timeout=WAIT_DEADLINE_S)
        for site in sites:
            await site.spool_rows()
        rounds.append(await together(sites))  # still down
        catalog.server = await asyncio.to_thread(catalog.server.restarted)
        rounds.append(await together(sites))
        return rounds

    made_before = int(catalog.server.unused_database().removeprefix("lake_"))

    with _sites(tmp_path, lake, "east", "west") as sites:
        first, killed, down, back = asyncio.run(run(sites))
    assert all(o.error is None and o.inserted == ROWS for o in first), first
    assert all(o.error for o in killed + down), (killed, down)
    assert all(o.error is None and o.inserted == 2 * ROWS for o in back), back
    for site in sites:
        assert _stored(lake, site.name) == sorted(site.spooled), f"{site.name}'s rows once"
    # the restarted server goes on naming databases where the killed one left off
    assert int(catalog.server.unused_database().removeprefix("lake_")) > made_before
    _said_no_secret(caplog, first + killed + down + back)
