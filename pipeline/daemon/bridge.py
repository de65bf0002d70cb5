"""The bridge between APScheduler and the daemon: triggers in, run requests out.

It keeps the scheduler's jobs in step with the config and turns scheduler events into
bookkeeping: the planned start of each run (for start lag), the runs outstanding (the
stop waits for them) and a missed-run notice for every run that could not start
(``overrun``: the previous run still going; ``misfire``: too late, or coalesced away).
Every fired run and every missed one is one scheduled run in ``DaemonStats``.

The scheduler plans in wall time, so the bridge also watches the wall clock: after a
step back it moves each job's next run earlier by the step (to the trigger's next time
from there), keeping the real-time spacing instead of idling until the clock catches up;
after a jump forward (a resumed suspend) it wakes the scheduler at once, which coalesces
the runs due meanwhile into one, each missed one recorded as a ``misfire`` row.

Every coalesced run gets its row, however long the suspend: a week of a minute job is
10,080 rows (about 1 MB in the warehouse), and summarising the excess in one row would
make every count of rows per run wrong. They are walked lazily and handed to
``on_missed_runs``, which writes them a chunk at a time, so neither the walk (a cron
trigger's next time costs ~0.1 ms) nor the writes hold the event loop for long.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
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

from pipeline.daemon.clock_watch import ClockWatch
from pipeline.daemon.contract import DaemonStats
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.schedule import JobSpec, RunRequest, make_trigger, misfire_grace_s

__all__ = ["SchedulerBridge"]

log = logging.getLogger("nerfwatch.daemon")

OnRun = Callable[[RunRequest], Awaitable[None]]
OnMissed = Callable[[JobSpec, datetime, str], None]
OnMissedRuns = Callable[[JobSpec, Iterator[datetime], str], None]


class SchedulerBridge:
    """Owns the scheduler and its jobs; calls ``on_run`` for each run it fires (inside
    the job's task) and ``on_missed`` for each run that could not start, or
    ``on_missed_runs`` (when given) with the lazy series of runs a clock jump skipped."""

    def __init__(
        self,
        *,
        on_run: OnRun,
        on_missed: OnMissed,
        stats: DaemonStats,
        metrics: Metrics,
        on_missed_runs: OnMissedRuns | None = None,
    ) -> None:
        self._on_run = on_run
        self._on_missed = on_missed
        self._on_missed_runs = on_missed_runs
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
        self._expected: dict[str, datetime] = {}  # each job's first due run not yet seen
        self._outstanding = 0
        self._idle = asyncio.Event()
        self._clock = ClockWatch(self._clock_stepped)

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
        self._clock.start()

    def pause(self) -> None:
        self._clock.stop()
        if self.scheduler.running:
            self.scheduler.pause()

    def shutdown(self) -> None:
        self._clock.stop()
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    def next_runs(self) -> dict[str, datetime]:
        """Every scheduled job (probe jobs and others) and its next run time."""
        return {job.id: job.next_run_time for job in self.scheduler.get_jobs()}

    def apply(self, specs: dict[str, JobSpec]) -> None:
        """Add, replace or remove jobs so the scheduler matches ``specs``."""
        for key in set(self._specs) - set(specs):
            self.scheduler.remove_job(key)
            self._expected.pop(key, None)
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
            self._expect(key, trigger.get_next_fire_time(None, datetime.now(UTC)))
        self._specs = dict(specs)

    def _clock_stepped(self, step_s: float) -> None:
        """Re-time the jobs after a wall-clock step of ``step_s`` seconds."""
        if step_s > 0:
            log.warning(
                "wall clock jumped forward %.0f s (suspend or correction): runs due"
                " meanwhile are coalesced, the missed ones recorded as misfires",
                step_s,
            )
            self.scheduler.wakeup()
            return
        moved = 0
        for job in self.scheduler.get_jobs():
            due: datetime | None = job.next_run_time
            if due is None:  # paused
                continue
            earlier = job.trigger.get_next_fire_time(None, due + timedelta(seconds=step_s))
            if earlier is not None and earlier < due:
                self.scheduler.modify_job(job.id, next_run_time=earlier)
                if job.id in self._specs:
                    self._expect(job.id, earlier)
                moved += 1
        log.warning(
            "wall clock stepped back %.0f s: %d jobs re-timed to keep their real-time spacing",
            -step_s,
            moved,
        )

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
            self._expect(key, self._after(key, times[-1]))
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

    def _expect(self, key: str, when: datetime | None) -> None:
        if when is None:
            self._expected.pop(key, None)
        else:
            self._expected[key] = when

    def _after(self, key: str, when: datetime) -> datetime | None:
        """The job's next fire time after ``when`` (one of its fire times)."""
        trigger = self._triggers.get(key)
        if trigger is None:
            return None
        next_time: datetime | None = trigger.get_next_fire_time(
            when, when + timedelta(microseconds=1)
        )
        return next_time

    def _record_bypassed(self, key: str, first_due: datetime) -> None:
        """Coalescing drops late runs without an event: report each one as missed, from
        the first run the job was expected to make (also before it ever ran: a suspend
        may come before a job's first run)."""
        when, trigger = self._expected.get(key), self._triggers.get(key)
        if when is None or trigger is None or when >= first_due:
            return
        runs = self._bypassed_runs(key, trigger, when, first_due)
        if self._on_missed_runs is not None:
            self._on_missed_runs(self._specs[key], runs, "misfire")
        else:
            for missed in runs:
                self._on_missed(self._specs[key], missed, "misfire")

    def _bypassed_runs(
        self, key: str, trigger: BaseTrigger, when: datetime, first_due: datetime
    ) -> Iterator[datetime]:
        """The fire times from ``when`` up to ``first_due``, each counted as a scheduled
        run as it is taken."""
        bypassed = 0
        current: datetime | None = when
        while current is not None and current < first_due:
            self._stats.scheduled += 1
            bypassed += 1
            yield current
            current = trigger.get_next_fire_time(current, current + timedelta(microseconds=1))
        log.warning("job %s: %d coalesced runs recorded as skipped (misfire)", key, bypassed)
