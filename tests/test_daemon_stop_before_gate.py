"""A stop that comes while a fired run still reads its day's stored spend (the first run
of a new day, before the gate has seen it) still leaves that run's row.

The old code let the scheduler's shutdown cancel such a run silently: ``scheduled``
counted it and no row said what became of it (test_daemon_clock_steps' week-long
suspend lost one of 10,080 rows this way under load, when the new day's read outlasted
the grace period). The daemon runs in-process with the real runner against the
simulator; the day's read is made slow by holding it until the daemon has stopped.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import time_machine

from pipeline.config import ProviderConfig
from pipeline.daemon import Daemon, DaemonStats, DaemonTuning
from pipeline.daemon.budget import Spend
from pipeline.daemon.state import DaySpend
from pipeline.warehouse import Warehouse
from probes.runner import run_probe
from probes.simulator import SimulatorHandle
from tests.support.nova_daemon import nova_config
from tests.support.waiting import wait_until_async, within

QUIET = DaemonTuning(install_signals=False, schedule_report=False)
MIDNIGHT = datetime(2026, 11, 21, tzinfo=UTC)


class HeldDayRead:
    """The daemon's reader of a day's stored spend, held on ``day`` until released."""

    def __init__(self, real: DaySpend, day: date) -> None:
        self.real, self.day = real, day
        self.entered, self.release = threading.Event(), threading.Event()

    def __call__(self, day: date, prices: Mapping[str, ProviderConfig]) -> dict[str, Spend]:
        if day == self.day:
            self.entered.set()
            if not self.release.wait(timeout=120):
                raise AssertionError("the held day read was never released")
        return self.real(day, prices)


def test_a_run_stopped_while_reading_a_new_days_spend_leaves_a_shutdown_row(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    config = nova_config(tmp_path, simulator, every_s=60.0)  # a few misfires at the jump
    config = replace(config, daemon=replace(config.daemon, shutdown_grace_s=0.5))

    async def main() -> tuple[DaemonStats, HeldDayRead]:
        # Ten minutes before midnight: a start-up on a loaded machine (40 s seen) ends
        # well before it, so the daemon has read only the old day's spend.
        with time_machine.travel(MIDNIGHT - timedelta(minutes=10), tick=True) as clock:
            daemon = Daemon(config, probe_fn=run_probe, tuning=QUIET)
            task = asyncio.create_task(daemon.run())
            await wait_until_async(lambda: bool(daemon.next_runs()), what="the scheduler")
            assert isinstance(daemon.budget.load_day, DaySpend)
            held = HeldDayRead(daemon.budget.load_day, MIDNIGHT.date())
            daemon.budget.load_day = held
            clock.move_to(MIDNIGHT + timedelta(seconds=1))
            try:
                await wait_until_async(held.entered.is_set, what="a run reading the new day")
                daemon.stop()
                stats = await within(task, 60, "the daemon to stop")
            finally:
                held.release.set()  # the reading thread ends; asyncio.run waits for it
            return stats, held

    stats, _ = asyncio.run(main())
    frame = Warehouse(config.warehouse.location).query(
        "SELECT run_status, skip_reason, started_at FROM probe_results"
    )
    rows = list(frame.iter_rows(named=True))
    # Before the fix: one fewer row than runs scheduled (the cancelled run's).
    assert len(rows) == stats.scheduled == stats.rows, (len(rows), stats)
    stopped = [r for r in rows if r["skip_reason"] == "shutdown" and r["started_at"] >= MIDNIGHT]
    assert len(stopped) >= 1, rows
    assert not [r for r in rows if r["run_status"] == "done" and r["started_at"] >= MIDNIGHT]
