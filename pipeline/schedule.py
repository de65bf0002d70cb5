"""Schedule arithmetic shared by config checks and the plan: runs per day, cron gaps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

from apscheduler.triggers.cron import CronTrigger

from pipeline.config_types import ProbeConfig

__all__ = ["cron_fire_times", "cron_interval_s", "runs_per_day"]

_WEEK = timedelta(days=7)
_ORIGIN = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday: the sample week for cron math


def cron_fire_times(
    expression: str, start: datetime = _ORIGIN, span: timedelta = _WEEK, limit: int = 20_000
) -> list[datetime]:
    """Fire times of a crontab expression within ``span`` after ``start`` (UTC)."""
    trigger = CronTrigger.from_crontab(expression, timezone=UTC)
    times: list[datetime] = []
    previous = None
    now = start
    while len(times) < limit:
        fire = trigger.get_next_fire_time(previous, now)
        if fire is None or fire >= start + span:
            break
        times.append(fire)
        previous, now = fire, fire + timedelta(microseconds=1)
    return times


def cron_interval_s(expression: str) -> float:
    """The shortest gap between two runs in a sample week (for timeout checks)."""
    times = cron_fire_times(expression, span=timedelta(days=8))
    if len(times) < 2:
        return 7 * 86400.0
    return min((b - a).total_seconds() for a, b in pairwise(times))


def runs_per_day(probe: ProbeConfig) -> float:
    """Average scheduled runs per day of one probe against one provider."""
    if probe.every_s is not None:
        return 86400.0 / probe.every_s
    assert probe.cron is not None
    return len(cron_fire_times(probe.cron)) / 7.0
