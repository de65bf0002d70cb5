"""Keeps the scheduler's jobs in step with the config and turns scheduler events into
bookkeeping: planned start times (for start lag), outstanding runs (for shutdown) and a
skipped row for every run that could not start (overrun, misfire, coalesced). Also the
weekly report job, when configured."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime, timedelta
from pathlib import Path

from apscheduler.events import (
    EVENT_JOB_MISSED,
    EVENT_JOB_SUBMITTED,
    JobExecutionEvent,
    JobSubmissionEvent,
    SchedulerEvent,
)
from apscheduler.jobstores.base import JobLookupError
from apscheduler.triggers.base import BaseTrigger

from pipeline.config import Config
from pipeline.daemon.alerts import send_phase_alert, send_report_link
from pipeline.daemon.report_job import JOB_ID as REPORT_JOB_ID
from pipeline.daemon.report_job import add_report_job, analyse_and_render
from pipeline.daemon.running import JobRunning
from pipeline.daemon.schedule import JobSpec, make_trigger, misfire_grace_s

__all__ = ["Scheduling"]

log = logging.getLogger("nerfwatch.daemon")

_MAX_BYPASSED_ROWS = 1_000  # after a long suspend, do not write days of skipped rows


class Scheduling(JobRunning):
    def _apply_jobs(self, specs: dict[str, JobSpec]) -> None:
        """Add, replace or remove jobs so the scheduler matches ``specs``."""
        assert self._scheduler is not None
        for key in set(self._specs) - set(specs):
            self._scheduler.remove_job(key)
            self._last_fire.pop(key, None)
            self._triggers.pop(key, None)
            log.info("job removed: %s", key)
        for key, spec in specs.items():
            old = self._specs.get(key)
            if old is not None and old.schedule == spec.schedule:
                continue
            trigger = make_trigger(spec)
            self._triggers[key] = trigger
            self._scheduler.add_job(
                self._job,
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

    def _trigger(self, key: str) -> BaseTrigger | None:
        return self._triggers.get(key)

    def _on_scheduler_event(self, event: SchedulerEvent) -> None:
        """Turn scheduler events into bookkeeping and skipped rows (runs on the loop)."""
        key = getattr(event, "job_id", None)
        if key is None or key not in self._specs:
            return
        if isinstance(event, JobSubmissionEvent):
            times = list(event.scheduled_run_times)
            self._record_bypassed(key, times[0])
            self._last_fire[key] = times[-1]
            self.stats.scheduled += len(times)
            if event.code == EVENT_JOB_SUBMITTED:
                self._planned[key] = times[-1]
                self._outstanding += len(times)
                self._idle.clear()
            else:  # max instances: the previous run is still going
                for when in times:
                    self._spawn(self._skip(self._specs[key], when, "overrun"))
        elif isinstance(event, JobExecutionEvent):
            if event.code == EVENT_JOB_MISSED:
                self._spawn(self._skip(self._specs[key], event.scheduled_run_time, "misfire"))
            self._outstanding -= 1
            if self._outstanding <= 0:
                self._outstanding = 0
                self._idle.set()

    def _record_bypassed(self, key: str, first_due: datetime) -> None:
        """Coalescing drops late runs without an event: give each one a skipped row."""
        last = self._last_fire.get(key)
        trigger = self._trigger(key)
        if last is None or trigger is None:
            return
        when = trigger.get_next_fire_time(last, last + timedelta(microseconds=1))
        bypassed = 0
        while when is not None and when < first_due and bypassed < _MAX_BYPASSED_ROWS:
            self.stats.scheduled += 1
            self._spawn(self._skip(self._specs[key], when, "misfire"))
            bypassed += 1
            when = trigger.get_next_fire_time(when, when + timedelta(microseconds=1))
        if bypassed:
            log.warning("job %s: %d coalesced runs recorded as skipped (misfire)", key, bypassed)

    # -- weekly report -----------------------------------------------------------------
    def _reschedule_report(self, config: Config) -> None:
        if not self.tuning.schedule_report or self._scheduler is None:
            return
        if not add_report_job(self._scheduler, config, self.run_weekly_report):
            with contextlib.suppress(JobLookupError):
                self._scheduler.remove_job(REPORT_JOB_ID)

    async def run_weekly_report(self, now: datetime | None = None) -> Path | None:
        """The weekly job: analysis, report, phase-change alerts and the report's link.

        ``now`` (default: the wall clock) picks the report's week; tests pin it.
        """
        try:
            outcome = await asyncio.to_thread(analyse_and_render, self.config, self.reading(), now)
        except Exception as exc:  # a report failure must not stop probing
            log.error("weekly report failed: %s: %s", type(exc).__name__, exc)
            return None
        log.info("weekly report written: %s", outcome.path)
        for change in outcome.phase_changes:
            await send_phase_alert(self.config.alerts, change.provider, change.phase, change.detail)
        await send_report_link(self.config.alerts, outcome.link)
        return outcome.path
