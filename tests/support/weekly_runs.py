"""The daemon's weekly report job run by APScheduler's engine on a moved clock: when it
fires, and which week each run renders (shared by the zone and calendar tests)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import time_machine

from pipeline.config import Config, ReportConfig
from pipeline.daemon.report_job import add_report_job, last_week_end
from pipeline.report import IsoWeek
from tests.support.daemon import make_config
from tests.support.stepped_scheduler import SteppedScheduler, run_until

__all__ = ["report_config", "report_runs", "reported_week"]


def report_config(
    tmp_path: Path, timezone: str, weekday: str = "mon", time: str = "08:00"
) -> Config:
    """A daemon config whose weekly report runs at ``weekday`` ``time`` in ``timezone``."""
    report = ReportConfig(
        out_dir=tmp_path / "reports", weekday=weekday, time=time, timezone=timezone
    )
    return replace(make_config(tmp_path), report=report)


def report_runs(config: Config, start: datetime, end: datetime) -> list[datetime]:
    """The weekly job's runs between ``start`` and ``end``, run by APScheduler's engine
    with the clock moved from run to run."""
    fired: list[datetime] = []
    with time_machine.travel(start, tick=False) as clock:
        scheduler = SteppedScheduler(timezone=UTC)
        assert add_report_job(scheduler, config, lambda: fired.append(datetime.now(UTC)))
        run_until(scheduler, clock, end)
        scheduler.shutdown()
    return fired


def reported_week(fire: datetime) -> str:
    """The week a run at ``fire`` renders (``analyse_and_render``: the last UTC week ended)."""
    return IsoWeek.containing(last_week_end(fire) - timedelta(days=1)).label
