"""The daemon side of the flush alone: the flush loop paces a real ``Flusher`` moving a
real spool into a real DuckDB file (a ``SegmentWriter`` in this process).

No daemon, no scheduler: rows are appended the way ``RowSink`` does it, and the loop is
told about each one.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.daemon.contract import DaemonStats
from pipeline.daemon.flush import Flusher, FlushOutcome, SegmentWriter
from pipeline.daemon.flush.daemon_loop import FlushLoop, FlushPacing, account_flush
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.rows import bare_row
from pipeline.daemon.schedule import job_specs
from pipeline.daemon.spool import Spool
from pipeline.warehouse import Warehouse
from tests.support.daemon import make_config
from tests.support.lock_holder import holding
from tests.support.waiting import wait_until_async


def _pacing(**changes: float) -> FlushPacing:
    base = {
        "interval_s": 30.0,
        "max_rows": 3,
        "min_gap_s": 0.0,
        "backoff_max_s": 30.0,
        "heartbeat_s": 3600.0,
    }
    return FlushPacing(**{**base, **changes})  # type: ignore[arg-type]


@dataclass
class _Parts:
    loop: FlushLoop
    held: HeldRows
    stats: DaemonStats
    warehouse: Warehouse
    beats: list[float] = field(default_factory=list)

    async def spool_rows(self, count: int) -> None:
        """Append rows as the row sink does: spool first, then tell the loop."""
        spec = job_specs(make_config(Path("unused")))["alpha/short"]
        for _ in range(count):
            row = bare_row(spec, datetime.now(UTC), "skipped", "misfire", site="test")
            assert await self.held.append(row.to_json())
            self.loop.note_spooled()

    def stored(self) -> int:
        frame = self.warehouse.query("SELECT count(*) AS n FROM probe_results")
        return int(frame["n"][0])


@asynccontextmanager
async def _running(
    tmp_path: Path, pacing: FlushPacing, *, lock_wait_s: float = 0.2
) -> AsyncIterator[_Parts]:
    """The loop running over a fresh spool and warehouse; stopped (promptly) on exit."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    spool = Spool(tmp_path / "spool")
    spool.open()
    writer = SegmentWriter(Warehouse(warehouse.path, lock_wait_s=lock_wait_s), spool.directory)
    flusher = Flusher(spool, writer)
    stats, beats, held = DaemonStats(), [], HeldRows(spool)
    loop = FlushLoop(
        flusher,
        pacing,
        held=held,
        on_flushed=functools.partial(account_flush, stats, Metrics()),
        heartbeat=lambda: beats.append(time.monotonic()),
    )
    parts = _Parts(loop, held, stats, warehouse, beats)
    task = asyncio.ensure_future(loop.run())
    try:
        yield parts
    finally:
        loop.stop()
        await asyncio.wait_for(task, timeout=5)  # a 30 s interval must not delay a stop
        spool.close()
        flusher.close()


def test_enough_waiting_rows_flush_before_the_interval(tmp_path: Path) -> None:
    async def main() -> tuple[int, int, int, int]:
        async with _running(tmp_path, _pacing(interval_s=30.0, max_rows=3)) as parts:
            await parts.spool_rows(2)
            await asyncio.sleep(0.3)
            flushes_below_the_bound = parts.stats.flushes
            await parts.spool_rows(1)
            await wait_until_async(lambda: parts.stats.flushed_rows == 3, 20, "an early flush")
            return flushes_below_the_bound, parts.stats.flushes, parts.stored(), len(parts.beats)

    below, flushes, stored, beats = asyncio.run(main())

    assert below == 0  # two rows wait for the interval (30 s)
    assert flushes == 1 and stored == 3
    assert beats == 0  # the heartbeat is due after 3600 s


def test_every_flush_tick_beats_the_heartbeat_once_due(tmp_path: Path) -> None:
    async def main() -> int:
        async with _running(tmp_path, _pacing(interval_s=0.05, heartbeat_s=0.0)) as parts:
            await wait_until_async(lambda: len(parts.beats) >= 3, 20, "heartbeats")
            return parts.stats.flushes

    assert asyncio.run(main()) >= 2


@pytest.mark.slow
def test_a_reader_holding_the_file_backs_the_loop_off_and_the_rows_wait(tmp_path: Path) -> None:
    """With a 0.05 s interval a busy warehouse would be retried ~15 times in 1.5 s;
    the back-off (doubling up to 0.4 s) allows at most about six."""

    async def main() -> tuple[int, int, int, int]:
        pacing = _pacing(interval_s=0.05, max_rows=2, backoff_max_s=0.4)
        async with _running(tmp_path, pacing, lock_wait_s=0.05) as parts:
            with holding(parts.warehouse.path):
                await parts.spool_rows(2)
                await wait_until_async(lambda: parts.stats.busy_flushes >= 1, 20, "a busy flush")
                before = parts.stats.flushes
                await parts.spool_rows(6)  # over max_rows, but a deferred loop is not woken
                await asyncio.sleep(1.5)
                tries, flushed_while_held = parts.stats.flushes - before, parts.stats.flushed_rows
            await wait_until_async(lambda: parts.stats.flushed_rows == 8, 20, "rows after")
            return tries, flushed_while_held, parts.stats.busy_flushes, parts.stored()

    tries, flushed_while_held, busy, stored = asyncio.run(main())

    assert 1 <= tries <= 8
    assert flushed_while_held == 0
    assert busy >= 2 and stored == 8


class _BrokenWriter:
    """A row writer that fails in a way the Flusher does not expect."""

    def start(self) -> None: ...

    def write(self, batch: object) -> object:
        raise RuntimeError("the disk said no")

    def close(self) -> None: ...


def test_a_flush_that_raises_is_an_outcome_not_an_exception(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    spool.open()
    heard: list[FlushOutcome] = []
    loop = FlushLoop(
        Flusher(spool, _BrokenWriter()),  # type: ignore[arg-type]
        _pacing(),
        held=HeldRows(spool),
        on_flushed=heard.append,
    )

    async def main() -> list[FlushOutcome]:
        assert await HeldRows(spool).append('{"run_id": "x"}')
        return [await loop.flush(), await loop.flush()]

    outcomes = asyncio.run(main())
    spool.close()

    assert all(o.error == "the disk said no" for o in outcomes)
    assert heard == outcomes
    assert spool.depth() == 1  # the row stays in the spool for the next try
