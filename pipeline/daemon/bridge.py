"""The bridge between APScheduler and the daemon: triggers in, run requests out.

It keeps the scheduler's jobs in step with the config and turns scheduler events into
bookkeeping: the planned start of each run (for start lag), the runs outstanding (the
stop waits for them) and a missed-run notice for every run that could not start
(``overrun``: the previous run still going; ``misfire``: too late, or coalesced away).
Every fired run and every missed one is one scheduled run in ``DaemonStats``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta

from apscheduler.events import (
    EVENT_JOB_ERROR,
    EVENT_JOB_EXECUTED,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    EVENT_JOB_SUBMITTED,
    JobExecutionEvent,
    JobSubmissionEvent,
    SchedulerEvent,
)
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger

from pipeline.daemon.contract import DaemonStats
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.schedule import JobSpec, RunRequest, make_trigger, misfire_grace_s

__all__ = ["SchedulerBridge"]

log = logging.getLogger("nerfwatch.daemon")

_MAX_BYPASSED_ROWS = 1_000  # after a long suspend, do not write days of skipped rows

OnRun = Callable[[RunRequest], Awaitable[None]]
OnMissed = Callable[[JobSpec, datetime, str], None]


class SchedulerBridge:
    """Owns the scheduler and its jobs; calls ``on_run`` for each run it fires (inside
    the job's task) and ``on_missed`` for each run that could not start."""

    def __init__(
        self, *, on_run: OnRun, on_missed: OnMissed, stats: DaemonStats, metrics: Metrics
    ) -> None:
        self._on_run = on_run
        self._on_missed = on_missed
        self._stats = stats
        self._metrics = metrics
        self.scheduler = AsyncIOScheduler(
            timezone=UTC, job_defaults={"coalesce": True, "max_instances": 1}
        )
        self.scheduler.add_listener(
            self._on_event,
            EVENT_JOB_SUBMITTED
            | EVENT_JOB_MAX_INSTANCES
            | EVENT_JOB_MISSED
            | EVENT_JOB_EXECUTED
            | EVENT_JOB_ERROR,
        )
        self._specs: dict[str, JobSpec] = {}
        self._triggers: dict[str, BaseTrigger] = {}
        self._planned: dict[str, datetime] = {}
        self._last_fire: dict[str, datetime] = {}
        self._outstanding = 0
        self._idle = asyncio.Event()

    @property
    def specs(self) -> Mapping[str, JobSpec]:
        return self._specs

    @property
    def outstanding(self) -> int:
        """Runs fired and not finished yet."""
        return self._outstanding

    async def wait_idle(self, timeout: float) -> None:
        """Until no fired run is outstanding, or ``timeout`` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout=timeout)

    def start(self) -> None:
        """Start firing (inside the running loop, as APScheduler 3.11 requires)."""
        self.scheduler.start()

    def pause(self) -> None:
        if self.scheduler.running:
            self.scheduler.pause()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def next_runs(self) -> dict[str, datetime]:
        """Every scheduled job (probe jobs and others) and its next run time."""
        return {job.id: job.next_run_time for job in self.scheduler.get_jobs()}

    def apply(self, specs: dict[str, JobSpec]) -> None:
        """Add, replace or remove jobs so the scheduler matches ``specs``."""
        for key in set(self._specs) - set(specs):
            self.scheduler.remove_job(key)
            self._last_fire.pop(key, None)
            self._triggers.pop(key, None)
            log.info("job removed: %s", key)
        for key, spec in specs.items():
            old = self._specs.get(key)
            if old is not None and old.schedule == spec.schedule:
                continue
            trigger = make_trigger(spec)
            self._triggers[key] = trigger
            self.scheduler.add_job(
                self._fire,
                trigger,
                args=[key],
                id=key,
                name=key,
                misfire_grace_time=misfire_grace_s(trigger),
                coalesce=True,
                max_instances=1,
                replace_existing=True,
            )
            self._last_fire.pop(key, None)
        self._specs = dict(specs)

    async def _fire(self, key: str) -> None:
        """The job APScheduler runs: record the start lag, hand the run on."""
        now = datetime.now(UTC)
        planned = self._planned.pop(key, now)
        lag = (now - planned).total_seconds()
        self._stats.start_lag_ms.append(lag * 1000)
        self._metrics.start_lag.observe(max(lag, 0.0))
        spec = self._specs.get(key)
        if spec is None:
            return
        await self._on_run(RunRequest(spec, planned))

    def _on_event(self, event: SchedulerEvent) -> None:
        """Turn scheduler events into bookkeeping and missed runs (runs on the loop)."""
        key = getattr(event, "job_id", None)
        if key is None or key not in self._specs:
            return
        if isinstance(event, JobSubmissionEvent):
            times = list(event.scheduled_run_times)
            self._record_bypassed(key, times[0])
            self._last_fire[key] = times[-1]
            self._stats.scheduled += len(times)
            if event.code == EVENT_JOB_SUBMITTED:
                self._planned[key] = times[-1]
                self._outstanding += len(times)
                self._idle.clear()
            else:  # max instances: the previous run is still going
                for when in times:
                    self._on_missed(self._specs[key], when, "overrun")
        elif isinstance(event, JobExecutionEvent):
            if event.code == EVENT_JOB_MISSED:
                self._on_missed(self._specs[key], event.scheduled_run_time, "misfire")
            self._outstanding -= 1
            if self._outstanding <= 0:
                self._outstanding = 0
                self._idle.set()

    def _record_bypassed(self, key: str, first_due: datetime) -> None:
        """Coalescing drops late runs without an event: report each one as missed."""
        last = self._last_fire.get(key)
        trigger = self._triggers.get(key)
        if last is None or trigger is None:
            return
        when = trigger.get_next_fire_time(last, last + timedelta(microseconds=1))
        bypassed = 0
        while when is not None and when < first_due and bypassed < _MAX_BYPASSED_ROWS:
            self._stats.scheduled += 1
            self._on_missed(self._specs[key], when, "misfire")
            bypassed += 1
            when = trigger.get_next_fire_time(when, when + timedelta(microseconds=1))
        if bypassed:
            log.warning("job %s: %d coalesced runs recorded as skipped (misfire)", key, bypassed)
