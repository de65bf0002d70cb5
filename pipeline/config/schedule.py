"""Schedule arithmetic shared by config checks and the plan: runs per day, cron gaps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

from apscheduler.triggers.cron import CronTrigger

from pipeline.config.model import ProbeConfig

__all__ = [
    "cron_fire_times",
    "cron_interval_s",
    "cron_never_fires",
    "normalize_crontab",
    "runs_per_day",
]

_WEEK = timedelta(days=7)
_ORIGIN = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday: the sample week for cron math


_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # crontab numbering: 0 = Sunday


def _weekday_numbers(field: str) -> set[int]:
    """Days (0 = Sunday) named by a crontab day-of-week field such as ``1-5`` or ``*/2``."""
    days: set[int] = set()
    for item in field.lower().split(","):
        span, _, step_text = item.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError(f"bad step in day-of-week {field!r}")
        if span == "*":
            low, high = 0, 6
        else:
            ends = [_DAY_NAMES.index(e) if e in _DAY_NAMES else int(e) for e in span.split("-")]
            if len(ends) > 2 or not all(0 <= e <= 7 for e in ends):
                raise ValueError(f"bad day-of-week {field!r}")
            if len(ends) == 2:
                low, high = ends
            else:  # a single day, or "start/step" meaning from start to the end of the week
                low, high = ends[0], 6 if step_text else ends[0]
        if low > high:
            raise ValueError(f"bad day-of-week range {field!r}")
        days.update(day % 7 for day in range(low, high + 1, step))
    return days


def normalize_crontab(expression: str) -> str:
    """The expression with its day-of-week field spelled as names.

    APScheduler 3 numbers weekdays from 0 = Monday, crontab from 0 = Sunday, so a numeric
    field would silently run a day late; names mean the same to both.
    """
    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(f"expected 5 fields (minute hour day month weekday), got {len(fields)}")
    if fields[4] != "*":
        try:
            days = _weekday_numbers(fields[4])
        except (ValueError, IndexError):
            raise ValueError(f"bad day-of-week field {fields[4]!r}") from None
        order = [1, 2, 3, 4, 5, 6, 0]
        fields[4] = "*" if len(days) == 7 else ",".join(_DAY_NAMES[d] for d in order if d in days)
    normalized = " ".join(fields)
    CronTrigger.from_crontab(normalized, timezone=UTC)  # raises ValueError when invalid
    return normalized


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


def cron_never_fires(expression: str) -> bool:
    """True for a valid expression that names no real date (``0 0 30 2 *``).

    Eight years from a leap year's start cover every calendar day there is.
    """
    trigger = CronTrigger.from_crontab(expression, timezone=UTC)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    first = trigger.get_next_fire_time(None, start)
    return first is None or first >= start + timedelta(days=8 * 366)


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
