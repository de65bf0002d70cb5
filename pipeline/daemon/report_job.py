"""The weekly job: analyse, render the weekly report, send phase changes and its link.

Scheduled from ``[report]`` weekday/time/timezone by a ``WeeklyTrigger``. The report's
week is the last ISO week (UTC) that has ended when the job runs; in a zone ahead of UTC
the trigger holds a run due before the UTC week of the user's week has ended until it has
(Monday 08:00 in Tokyo runs at 09:00), so the report is never a week late, and a
fall-back night's repeated hour runs the job once. Analysis and rendering run in a worker
thread inside ``Flusher.paused()``, so the job's reads and writes never wait for a flush
and a flush never waits for the job (the spool just grows for the minutes it takes).
The analysis and the renderer are imported when the job first runs: they are heavy, and
a daemon that never reaches its report day need not load them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.base import BaseScheduler

from pipeline.config import Config, ReportConfig
from pipeline.daemon.alerts import send_phase_alert, send_report_link
from pipeline.daemon.weekly_trigger import WeeklyTrigger, last_week_end
from pipeline.warehouse import Warehouse

__all__ = [
    "JOB_ID",
    "PhaseChangeAlert",
    "WeeklyOutcome",
    "WeeklyReport",
    "add_report_job",
    "analyse_and_render",
    "last_week_end",
]

daemon_log = logging.getLogger("nerfwatch.daemon")  # the weekly job logs as the daemon

JOB_ID = "weekly-report"


def _note_if_moved(trigger: WeeklyTrigger, report: ReportConfig, now: datetime) -> None:
    """Say so when the configured time comes before the UTC week ends (zones ahead of
    UTC), and when the job runs instead."""
    fire = trigger.get_next_fire_time(None, now)
    asked = trigger.local.get_next_fire_time(None, now)
    if fire is None or asked is None or fire == asked:
        return
    daemon_log.info(
        "report: %s %s %s is %s UTC, before the UTC week ends; the job runs at %s %s"
        " (%s UTC), when the week it reports has ended",
        report.weekday, report.time, report.timezone, asked.astimezone(UTC).strftime("%a %H:%M"),
        fire.astimezone(trigger.zone).strftime("%a %H:%M"), report.timezone,
        fire.strftime("%a %H:%M"),
    )  # fmt: skip


def add_report_job(
    scheduler: BaseScheduler,
    config: Config,
    job: Callable[..., Any],
    now: datetime | None = None,
) -> bool:
    """Schedule ``job`` on the report's weekday and time; False when it cannot run here.
    ``now`` (default: the wall clock) is when the log line looks for the next run."""
    report = config.report
    if not report.enabled:
        return False
    hour, minute = (int(x) for x in report.time.split(":"))
    trigger = WeeklyTrigger(
        day_of_week=report.weekday, hour=hour, minute=minute, timezone=report.timezone
    )
    _note_if_moved(trigger, report, now or datetime.now(UTC))
    scheduler.add_job(
        job,
        trigger,
        id=JOB_ID,
        name=JOB_ID,
        # However late (a suspend over the report's hour, a stalled loop): one run on
        # resume, coalesced, rather than a week without a report.
        misfire_grace_time=None,
        coalesce=True,
        max_instances=1,
        replace_existing=True,
    )
    return True


@dataclass(frozen=True, slots=True)
class WeeklyOutcome:
    path: Path
    link: str  # under [report].link_base_url when set, else the file path
    phase_changes: list[PhaseChangeAlert]


@dataclass(frozen=True, slots=True)
class PhaseChangeAlert:
    provider: str
    phase: str
    detail: dict[str, Any]


def _has_probes(warehouse: Warehouse, start: datetime, end: datetime) -> bool:
    found = warehouse.query(
        "SELECT count(*) > 0 AS found FROM probe_results WHERE started_at >= ? AND started_at < ?",
        [start, end],
    )
    return bool(found["found"][0])


def _phase_changes(warehouse: Warehouse, analysis_id: str) -> list[PhaseChangeAlert]:
    from pipeline.analysis.phase_changes import phase_changes_since  # heavy: at the job

    return [
        PhaseChangeAlert(
            ch.provider,
            ch.stage,
            {"model": ch.model, "previous": ch.previous_stage, "since": ch.since.isoformat()},
        )
        for ch in phase_changes_since(warehouse, analysis_id)
    ]


def analyse_and_render(
    config: Config, paused: AbstractContextManager[None], now: datetime | None = None
) -> WeeklyOutcome:
    """Blocking: refresh the analysis tables, render the report of the last UTC week
    that has ended by ``now`` (default: the wall clock), list phase changes."""
    from pipeline.analysis.orchestrate import run_analysis  # heavy: at the job
    from pipeline.report import IsoWeek, render_weekly, report_link

    now = now or datetime.now(UTC)
    end = last_week_end(now)
    warehouse = Warehouse(config.warehouse.location)
    with paused:
        drift_dir = config.warehouse.drift_dir
        changes = _phase_changes(warehouse, run_analysis(warehouse, drift_dir=drift_dir))
        ended = IsoWeek.containing(end - timedelta(days=1))
        # A first report (no probes in the week that ended) shows the probes that exist.
        week = ended if _has_probes(warehouse, end - timedelta(days=7), end) else None
        path = Path(render_weekly(config, week, now=now))
    return WeeklyOutcome(path, report_link(config, path), changes)


class WeeklyReport:
    """The weekly job as the daemon runs it: scheduled from ``[report]``, never fatal."""

    def __init__(self, config: Config, *, paused: Callable[[], AbstractContextManager[None]]):
        self._config = config
        self._paused = paused

    def configure(self, config: Config) -> None:
        """The report settings and alert targets to use from now on (reload)."""
        self._config = config

    def schedule(self, scheduler: BaseScheduler) -> None:
        """Add, move or remove the job to match the config."""
        if not add_report_job(scheduler, self._config, self.run):
            with contextlib.suppress(JobLookupError):
                scheduler.remove_job(JOB_ID)

    async def run(self, now: datetime | None = None) -> Path | None:
        """Analysis, report, phase-change alerts and the report's link.

        ``now`` (default: the wall clock) picks the report's week: the last one ended.
        """
        config = self._config
        try:
            outcome = await asyncio.to_thread(analyse_and_render, config, self._paused(), now)
        except Exception as exc:  # a report failure must not stop probing
            daemon_log.error("weekly report failed: %s: %s", type(exc).__name__, exc)
            return None
        daemon_log.info("weekly report written: %s", outcome.path)
        for change in outcome.phase_changes:
            await send_phase_alert(config.alerts, change.provider, change.phase, change.detail)
        await send_report_link(config.alerts, outcome.link)
        return outcome.path
