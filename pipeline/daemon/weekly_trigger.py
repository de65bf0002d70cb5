"""When the weekly job runs: the configured local weekday and time, with two corrections.

The report is about ISO weeks in UTC (the warehouse, the report's queries and its file
name all count weeks in UTC, so reports from sites in different zones cover the same
rows). A user's local week has the same ISO label as a UTC week, but in a zone ahead of
UTC it ends earlier: Monday 08:00 in Tokyo is Sunday 23:00 UTC, when that week still has
an hour to go. Run there, "the last week that has ended" is the week before, a report a
week late. So a run due after the user's week ended but before the UTC week of the same
label ends waits for that end (Monday 09:00 in Tokyo, Monday 14:00 in Kiritimati). Zones
behind UTC end their week after UTC does and are never moved.

A local time inside the hour a fall-back night repeats (02:30 in Berlin, 01:30 in New
York) runs at its first pass only. A time skipped by a spring-forward night runs once, as
much later by the wall clock as the night skipped (an hour; 30 minutes on Lord Howe).

The runs are worked out here, one per local week, not by APScheduler's ``CronTrigger``:
3.11 yields both passes of a repeated time, drops a time in the first hour after midnight
of the day after a spring-forward night (Monday 00:30 in London after 2026-03-29 came
next on 2026-04-06: a week without a report), and drops a time a midnight change skips
(Friday 00:00 in Cairo on 2026-04-24) instead of moving it forward.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger

__all__ = ["LocalWeekly", "WeeklyTrigger", "last_week_end", "local_week_end_utc"]

_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

# No zone is more than 14 hours ahead of UTC (Pacific/Kiritimati), so no run is moved
# further than that; a day covers it.
_LOOK_BACK = timedelta(days=1)
_TICK = timedelta(microseconds=1)


def last_week_end(moment: datetime) -> datetime:
    """The latest Monday 00:00 UTC at or before ``moment``: the end of the last ISO week
    (UTC) that has ended by then."""
    utc = moment.astimezone(UTC)
    midnight = utc.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight - timedelta(days=utc.weekday())


def local_week_end_utc(moment: datetime, zone: tzinfo) -> datetime:
    """The end, in UTC, of the UTC week whose ISO label is that of the last local week
    ended at ``moment``: the UTC Monday 00:00 with the date of the local Monday."""
    wall = moment.astimezone(zone).replace(tzinfo=UTC, fold=0)
    return last_week_end(wall)


class LocalWeekly:
    """A weekday and wall time in a zone: one run a week, as the wall clock reads it."""

    def __init__(self, *, weekday: int, at: time, zone: ZoneInfo) -> None:
        self.weekday, self.at, self.zone = weekday, at, zone

    def __str__(self) -> str:
        return f"{_WEEKDAYS[self.weekday]} {self.at:%H:%M} {self.zone.key}"

    def run_on(self, day: date) -> datetime:
        """The run on local ``day``, in the zone. ``fold=0`` is the first pass of a repeated
        time and, for a skipped one, the offset before the change: as much later by the
        wall clock as the night skipped."""
        wall = datetime.combine(day, self.at, tzinfo=self.zone)
        return wall.astimezone(UTC).astimezone(self.zone)

    def get_next_fire_time(self, previous: datetime | None, now: datetime) -> datetime:
        """The first run at or after ``now`` (after ``previous`` when given)."""
        # In UTC: two datetimes sharing a zone compare by wall time, fold ignored.
        since = now.astimezone(UTC)
        if previous is not None:
            since = max(since, previous.astimezone(UTC) + _TICK)
        day = since.astimezone(self.zone).date() - timedelta(days=1)
        day += timedelta(days=(self.weekday - day.weekday()) % 7)
        while self.run_on(day).astimezone(UTC) < since:
            day += timedelta(days=7)
        return self.run_on(day)


class WeeklyTrigger(BaseTrigger):
    """``day_of_week`` at ``hour``:``minute`` in ``timezone``, never before the UTC week
    of the user's week has ended, and once per local day on a fall-back night."""

    def __init__(self, *, day_of_week: str, hour: int, minute: int, timezone: str) -> None:
        if day_of_week not in _WEEKDAYS:
            raise ValueError(
                f"day_of_week: expected one of {', '.join(_WEEKDAYS)}, got {day_of_week!r}"
            )
        self.zone = ZoneInfo(timezone)
        self.local = LocalWeekly(
            weekday=_WEEKDAYS.index(day_of_week), at=time(hour, minute), zone=self.zone
        )

    def __repr__(self) -> str:
        return f"<WeeklyTrigger {self.local} after the UTC week ends>"

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        """The first run at or after ``now`` (after ``previous_fire_time`` when given, as
        APScheduler asks when it counts the runs a pause or suspend passed over)."""
        # In UTC throughout: two datetimes sharing a zone compare by wall time, fold ignored.
        start = now.astimezone(UTC)
        previous = None if previous_fire_time is None else previous_fire_time.astimezone(UTC)
        if previous is not None:
            start = min(start, previous + _TICK)
        candidate = self.local.get_next_fire_time(None, start - _LOOK_BACK)
        while True:  # ends: each candidate is a week after the one before
            fire = max(candidate.astimezone(UTC), local_week_end_utc(candidate, self.zone))
            if fire >= start and (previous is None or fire > previous):
                return fire
            candidate = self.local.get_next_fire_time(candidate, candidate)
