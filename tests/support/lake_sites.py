"""Probe sites on a lake for chaos tests: a spool each, a flusher, the ids it spooled, and a
psql session that holds a lake's commits mid-way.

Each flush carries ``ROWS`` rows, past DuckLake's data inlining, so a Parquet file really
goes to S3 (with a handful of rows S3 is never touched).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline.daemon.flush import Flusher, FlushOutcome, SegmentWriter
from pipeline.daemon.rows import bare_row
from pipeline.daemon.schedule import JobSpec
from pipeline.daemon.spool import Spool
from pipeline.warehouse import Lake, Warehouse
from tests.support.postgres import USER, PostgresServer
from tests.support.waiting import read_line, within

__all__ = ["FLUSH_DEADLINE_S", "ROWS", "T0", "Site", "lock_commits", "open_site"]

T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
ROWS = 40
FLUSH_DEADLINE_S = 120.0
LOCK_DEADLINE_S = 60.0


@dataclass
class Site:
    """One probe site's spool and flusher on a lake; the run ids it spooled."""

    name: str
    spool: Spool
    flusher: Flusher
    spec: JobSpec
    spooled: list[str] = field(default_factory=list)

    async def spool_rows(self, count: int = ROWS) -> None:
        for _ in range(count):
            at = T0 + timedelta(seconds=len(self.spooled))
            row = bare_row(self.spec, at, "skipped", "misfire", site=self.name)
            await self.spool.append(row.to_json())
            self.spooled.append(row.run_id)

    async def flush(self) -> FlushOutcome:
        return await within(
            asyncio.to_thread(self.flusher.flush_once), FLUSH_DEADLINE_S, f"{self.name}'s flush"
        )

    def restart_flusher(self, lake: Lake) -> None:
        """A daemon restarted on the same spool: a new writer, attached afresh."""
        self.flusher.close()
        self.flusher = Flusher(self.spool, _writer(lake, self.spool))

    def close(self) -> None:
        self.spool.close()
        self.flusher.close()


def _writer(lake: Lake, spool: Spool) -> SegmentWriter:
    return SegmentWriter(Warehouse(lake, lock_wait_s=0.2), spool.directory)


@contextlib.contextmanager
def open_site(name: str, spool_dir: Path, lake: Lake, spec: JobSpec) -> Iterator[Site]:
    """A site's spool opened at ``spool_dir`` and its flusher on ``lake``; closed after."""
    spool = Spool(spool_dir)
    spool.open()
    site = Site(name, spool, Flusher(spool, _writer(lake, spool)), spec)
    try:
        yield site
    finally:
        site.close()


def lock_commits(server: PostgresServer, database: str) -> subprocess.Popen[str]:
    """A psql session that holds ducklake_snapshot in EXCLUSIVE mode: reads go on, but a
    commit (which inserts its snapshot there) waits, with its data files written."""
    holder = subprocess.Popen(
        [str(server.bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(server.port), "-U", USER,
         "-d", database, "-qAt"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdin is not None
    holder.stdin.write("BEGIN; LOCK TABLE ducklake_snapshot IN EXCLUSIVE MODE; SELECT 'locked';\n")
    holder.stdin.flush()
    assert read_line(holder, LOCK_DEADLINE_S, "the lock holder's 'locked'") == "locked"
    return holder
