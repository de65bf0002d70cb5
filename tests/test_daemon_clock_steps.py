"""The daemon under wall-clock steps: NTP stepping back, a resumed suspend, a day boundary.

The daemon runs in-process with the real runner against the simulator over loopback; the
wall clock (``datetime.now``, ``time.time``) is moved with time_machine, the monotonic
clock is not, which is what a real step or a suspend does. Waits watch rows and counters,
each with a deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import time_machine

from pipeline.config import (
    BudgetConfig,
    BudgetLimits,
    Config,
    ProbeConfig,
    ProviderConfig,
)
from pipeline.daemon import Daemon, DaemonStats, DaemonTuning
from pipeline.daemon.schedule import job_key, offset_s
from pipeline.daemon.status import DaemonStatus, gather_status
from pipeline.warehouse import Warehouse
from pipeline.warehouse.queries import resolve_sql
from probes.ids import new_run_id
from probes.result import ProbeResult, planned_row
from probes.runner import run_probe
from probes.simulator import SimulatorHandle
from tests.support.nova_daemon import nova_config
from tests.support.waiting import wait_until_async, within

QUIET = DaemonTuning(install_signals=False, schedule_report=False)
WORST = 300 + 64  # one run's reservation: context target plus every output token
# Deadlines for waits that include a start-up or a day first met: the first run on a day
# reads that day's spend from the warehouse, holding off flushes and waiting out a running
# one (here storing the misfire rows of the jump). On a machine at load ~35 a start-up took
# over a minute and the first run after the jump to midnight 60 s and more. A passing test
# never waits for the deadline; a daemon that never runs on the new day still fails.
SLOW_STEP_S = 180


class TimedRunner:
    """The real ``run_probe``, noting on the monotonic clock when each call began, and
    the run ids in the order the results were made."""

    def __init__(self) -> None:
        self.began: list[float] = []
        self.run_ids: list[str] = []

    async def __call__(
        self, provider: ProviderConfig, probe: ProbeConfig, **kwargs: Any
    ) -> ProbeResult:
        self.began.append(time.monotonic())
        result = await run_probe(provider, probe, **kwargs)
        self.run_ids.append(result.run_id)
        return result


def _rows(config: Config) -> list[dict[str, Any]]:
    frame = Warehouse(config.warehouse.location).query(
        "SELECT run_id, run_status, skip_reason, started_at, ttft_ms, total_ms,"
        " input_tokens, output_tokens FROM probe_results"
    )
    return list(frame.iter_rows(named=True))


@pytest.mark.parametrize("step_s", [60, 7200])
def test_a_backward_step_neither_stalls_nor_doubles_the_schedule(
    tmp_path: Path, simulator: SimulatorHandle, step_s: int
) -> None:
    config = nova_config(tmp_path, simulator)
    runner = TimedRunner()

    async def main() -> tuple[DaemonStats, int, DaemonStatus]:
        with time_machine.travel(datetime(2026, 11, 20, 12, 0, tzinfo=UTC), tick=True) as clock:
            daemon = Daemon(config, probe_fn=runner, tuning=QUIET)  # type: ignore[arg-type]
            task = asyncio.create_task(daemon.run())
            # a start-up under load ~35 took over a minute
            await wait_until_async(lambda: len(runner.began) >= 2, 180, what="two probes")
            clock.shift(-step_s)
            before = len(runner.began)
            # Before the fix the scheduler idled until the wall clock caught up: a minute
            # or two hours without a probe.
            await wait_until_async(
                lambda: len(runner.began) >= before + 3,
                timeout=30,
                what=f"three probes after the clock stepped back {step_s} s",
            )
            daemon.stop()
            stats = await within(task, 120, "the daemon to stop")
            return stats, before, await asyncio.to_thread(gather_status, config)

    stats, before, status = asyncio.run(main())
    rows = _rows(config)
    assert len(rows) == stats.scheduled == stats.rows
    assert len({r["run_id"] for r in rows}) == len(rows)  # none dropped as a duplicate id
    # Ids made after the step still sort after those made before it (paging by id).
    assert runner.run_ids == sorted(runner.run_ids), runner.run_ids
    late = {r["skip_reason"] for r in rows if r["run_status"] != "done"}
    assert late <= {"overrun", "misfire", "shutdown"}, late  # a loaded machine's verdicts
    # Never fired twice for one step: successive probes keep (about) their 1 s spacing.
    gaps = [b - a for a, b in zip(runner.began, runner.began[1:], strict=False)]
    assert min(gaps) > 0.2, gaps
    assert gaps[before - 1] < 5.0, gaps  # nor waited for the clock to catch up
    # Latencies come from the monotonic clock: no negative or step-sized figures.
    done = [r for r in rows if r["run_status"] == "done"]
    assert len(done) >= 5
    for r in done:
        assert 0 <= r["ttft_ms"] <= r["total_ms"] < 5_000, r
    # status names the session's true last event, and the rows stamped before the step
    # (now in the future) when there are any more than a minute ahead
    assert status.last_event is not None and status.last_event.startswith("stop"), status
    ahead = [n for n in status.notes if "stamped later than now" in n]
    assert len(ahead) == (step_s > 60), status.notes


@pytest.mark.parametrize("suspend", [timedelta(hours=6), timedelta(days=7)])
def test_a_resumed_suspend_wakes_the_schedule_with_one_run_and_misfire_rows(
    tmp_path: Path, simulator: SimulatorHandle, suspend: timedelta
) -> None:
    # Every minute at a spread second; the daemon starts just after this minute's run time,
    # so its scheduler sleeps ~a minute (on the monotonic clock, which a suspend stops).
    # A week is 10,080 runs: each one missed is a row (the old code kept 1,000 per job).
    config = nova_config(tmp_path, simulator, every_s=None, cron="* * * * *")
    second = int(offset_s(job_key("nova", "short"), 60.0))
    start = datetime(2026, 11, 20, 12, 0, second, tzinfo=UTC) + timedelta(seconds=1)
    runner = TimedRunner()
    due = int(suspend.total_seconds() // 60)  # run times the suspend passed over

    async def main() -> tuple[DaemonStats, float]:
        with time_machine.travel(start, tick=True) as clock:
            daemon = Daemon(config, probe_fn=runner, tuning=QUIET)  # type: ignore[arg-type]
            task = asyncio.create_task(daemon.run())
            await wait_until_async(lambda: bool(daemon.next_runs()), what="the scheduler")
            clock.shift(suspend)  # suspended, then resumed
            resumed = time.monotonic()
            # Before the fix nothing happened until the old timer ran out (~a minute).
            await wait_until_async(
                lambda: daemon.stats.scheduled >= due,
                timeout=20 + due / 100,
                what=f"the {due} missed runs to be accounted for",
            )
            await asyncio.sleep(0)
            daemon.stop()
            return await within(task, 120, "the daemon to stop"), resumed

    stats, resumed = asyncio.run(main())
    rows = _rows(config)
    assert len(rows) == stats.scheduled == stats.rows
    # No burst on the provider: the one coalesced run after the resume, then the minute
    # job's usual spacing (a loaded machine may take over a minute to account for a
    # week's rows, and the next minute's run is then a due run, not a catch-up).
    after = [t for t in runner.began if t >= resumed]
    assert all(b - a > 30 for a, b in itertools.pairwise(after)), runner.began
    missed = [r for r in rows if r["skip_reason"] == "misfire"]
    assert len(missed) >= due - 1
    assert len({r["started_at"] for r in missed}) == len(missed)  # one row per run
    assert all(start <= r["started_at"] <= start + suspend for r in missed)
    # The canned query counts them all, over the whole suspend.
    sql = resolve_sql("skipped_runs")
    counted = (
        Warehouse(config.warehouse.location).query(sql).filter(pl.col("skip_reason") == "misfire")
    )
    assert counted["n"].to_list() == [len(missed)], counted
    assert counted["last_at"][0] - counted["first_at"][0] >= suspend - timedelta(minutes=2)


def test_todays_spend_and_status_across_midnight_both_ways(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    """A jump over midnight starts a fresh day's budget; NTP stepping back over it returns
    to the old day, whose spend is still counted; status agrees on either side."""
    budget = BudgetConfig(per_provider={"nova": BudgetLimits(daily_tokens=WORST)})
    config = replace(nova_config(tmp_path, simulator), budget=budget)  # one run a day
    tuning = replace(QUIET, heartbeat_s=0.3)
    midnight = datetime(2026, 11, 21, tzinfo=UTC)
    stepped_back = midnight - timedelta(seconds=45)

    async def main() -> tuple[DaemonStats, DaemonStatus, DaemonStatus]:
        with time_machine.travel(midnight - timedelta(minutes=2), tick=True) as clock:
            daemon = Daemon(config, probe_fn=run_probe, tuning=tuning)
            stats = daemon.stats
            task = asyncio.create_task(daemon.run())
            await wait_until_async(
                lambda: stats.skipped["budget"] >= 1, SLOW_STEP_S, what="the cap to bite"
            )
            clock.move_to(midnight + timedelta(seconds=30))
            done = stats.done
            await wait_until_async(
                lambda: stats.done > done, SLOW_STEP_S, what="a run on the new day"
            )
            await wait_until_async(lambda: stats.skipped["budget"] >= 3, what="its cap to bite")
            clock.move_to(stepped_back)  # NTP steps back over midnight
            skipped = stats.skipped["budget"]
            await wait_until_async(
                lambda: stats.skipped["budget"] >= skipped + 3,
                SLOW_STEP_S,
                what="the old day's cap",
            )
            daemon.stop()
            await within(task, 120, "the daemon to stop")
            old_day = await asyncio.to_thread(gather_status, config)  # still the old day
            clock.move_to(midnight + timedelta(minutes=5))
            new_day = await asyncio.to_thread(gather_status, config)
            return stats, old_day, new_day

    stats, old_day, new_day = asyncio.run(main())
    rows = _rows(config)
    assert len(rows) == stats.scheduled == stats.rows
    old_tokens = _done_tokens(rows, midnight - timedelta(days=1), midnight)
    new_tokens = _done_tokens(rows, midnight, midnight + timedelta(days=1))
    assert 0 < old_tokens <= WORST and 0 < new_tokens <= WORST  # one run each day
    # Back on the old day its cap still holds: no run, only budget skips (and the
    # misfires of the jump forward, stamped at the times it leapt over).
    back = [r for r in rows if stepped_back <= r["started_at"] < midnight]
    assert not [r for r in back if r["run_status"] == "done"], back
    assert sum(r["skip_reason"] == "budget" for r in back) >= 3, back
    # status: each side's "today" is that day's spend; the last event is the stop, not
    # a heartbeat stamped on the new day before the clock went back
    assert old_day.providers[0].today_tokens == old_tokens, old_day
    assert new_day.providers[0].today_tokens == new_tokens, new_day
    assert old_day.last_event is not None and old_day.last_event.startswith("stop"), old_day


def _done_tokens(rows: list[dict[str, Any]], start: datetime, end: datetime) -> int:
    return sum(
        (r["input_tokens"] or 0) + (r["output_tokens"] or 0)
        for r in rows
        if r["run_status"] == "done" and start <= r["started_at"] < end
    )


def test_a_day_the_process_never_saw_is_read_before_it_spends_on_it(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    """Booted with the clock three days ahead, then corrected back: the real day's cap,
    spent by an earlier session, still holds (its rows are in the warehouse)."""
    budget = BudgetConfig(per_provider={"nova": BudgetLimits(daily_tokens=WORST)})
    config = replace(nova_config(tmp_path, simulator), budget=budget)  # one run a day
    today = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    earlier = replace(_done_row(config, today - timedelta(hours=3)), input_tokens=WORST)
    warehouse = Warehouse(config.warehouse.location)
    warehouse.migrate()
    warehouse.insert_rows("probe_results", [earlier.as_row()], key="run_id")

    async def main() -> DaemonStats:
        with time_machine.travel(today + timedelta(days=3), tick=True) as clock:
            daemon = Daemon(config, probe_fn=run_probe, tuning=QUIET)
            stats = daemon.stats
            task = asyncio.create_task(daemon.run())
            await wait_until_async(
                lambda: stats.skipped["budget"] >= 1, SLOW_STEP_S, what="the cap to bite"
            )
            clock.move_to(today)  # the clock corrected back to the real day
            skipped = stats.skipped["budget"]
            await wait_until_async(
                lambda: stats.skipped["budget"] >= skipped + 3,
                SLOW_STEP_S,
                what="the real day's cap",
            )
            daemon.stop()
            return await within(task, 120, "the daemon to stop")

    stats = asyncio.run(main())
    rows = _rows(config)
    on_today = [r for r in rows if today.date() == r["started_at"].date()]
    # Before the fix the real day started afresh: a whole cap more was spent on it.
    assert [r["run_id"] for r in on_today if r["run_status"] == "done"] == [earlier.run_id]
    assert sum(r["skip_reason"] == "budget" for r in on_today) >= 3, on_today
    assert stats.done == 1  # the one run on the day three days ahead


def _done_row(config: Config, at: datetime) -> ProbeResult:
    """A live probe an earlier session stored."""
    provider, probe = config.providers[0], config.probes[0]
    row = planned_row(provider, probe, run_id=new_run_id(), started_at=at)
    return replace(row, input_tokens=0, output_tokens=0, cost_usd=0.0)
