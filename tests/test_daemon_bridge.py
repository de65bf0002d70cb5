"""The scheduler bridge alone: real APScheduler triggers in, run requests and missed
runs out, with the bookkeeping the stop relies on. No gate, no run, no spool."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from pipeline.daemon.bridge import SchedulerBridge
from pipeline.daemon.contract import DaemonStats
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.schedule import JobSpec, RunRequest, job_specs
from tests.support.daemon import make_config


class _Recorder:
    """What the daemon would do with the bridge's output; runs can be held open."""

    def __init__(self) -> None:
        self.runs: list[RunRequest] = []
        self.missed: list[tuple[str, datetime, str]] = []
        self.release = asyncio.Event()

    async def on_run(self, request: RunRequest) -> None:
        self.runs.append(request)
        await self.release.wait()

    def on_missed(self, spec: JobSpec, when: datetime, reason: str) -> None:
        self.missed.append((spec.key, when, reason))


def test_a_run_still_going_turns_the_next_ones_into_overruns(tmp_path: Path) -> None:
    config = make_config(tmp_path, every_s=0.2)
    stats = DaemonStats()

    async def main() -> tuple[_Recorder, int]:
        seen = _Recorder()
        bridge = SchedulerBridge(
            on_run=seen.on_run, on_missed=seen.on_missed, stats=stats, metrics=Metrics()
        )
        bridge.apply(job_specs(config))
        bridge.start()
        await asyncio.sleep(1.1)  # each job's first run holds on: later ones overrun
        bridge.pause()
        seen.release.set()
        await bridge.wait_idle(5.0)
        outstanding = bridge.outstanding
        bridge.shutdown()
        return seen, outstanding

    seen, outstanding = asyncio.run(main())

    assert sorted(r.spec.key for r in seen.runs) == ["alpha/short", "beta/short"]
    overruns = [m for m in seen.missed if m[2] == "overrun"]
    assert len(overruns) >= 4  # about five 0.2 s ticks per job while its run held on
    assert {m[0] for m in overruns} == {"alpha/short", "beta/short"}
    assert stats.scheduled == len(seen.runs) + len(seen.missed)  # each one row, later
    assert len(stats.start_lag_ms) == len(seen.runs)
    assert outstanding == 0


def test_apply_keeps_unchanged_jobs_and_removes_dropped_ones(tmp_path: Path) -> None:
    config = make_config(tmp_path, every_s=60.0)
    specs = job_specs(config)

    async def main() -> tuple[dict[str, datetime], dict[str, datetime], dict[str, datetime]]:
        seen = _Recorder()
        bridge = SchedulerBridge(
            on_run=seen.on_run, on_missed=seen.on_missed, stats=DaemonStats(), metrics=Metrics()
        )
        bridge.apply(specs)
        bridge.start()
        first = bridge.next_runs()
        bridge.apply(dict(specs))  # same schedules: the jobs stay as they are
        same = bridge.next_runs()
        every_2_min = replace(specs["beta/short"].probe, every_s=120.0)
        bridge.apply({"beta/short": replace(specs["beta/short"], probe=every_2_min)})
        changed = bridge.next_runs()
        bridge.shutdown()
        return first, same, changed

    first, same, changed = asyncio.run(main())

    assert set(first) == {"alpha/short", "beta/short"}
    assert same == first
    assert set(changed) == {"beta/short"}
