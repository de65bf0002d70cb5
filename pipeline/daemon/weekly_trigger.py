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
York) is a fire time twice for APScheduler's ``CronTrigger`` (3.11 yields both folds); the
job runs at the first only. A time skipped by a spring-forward night runs once, an hour
later by the wall clock (``CronTrigger`` normalises the missing time forward).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger

__all__ = ["WeeklyTrigger", "last_week_end", "local_week_end_utc"]

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


class WeeklyTrigger(BaseTrigger):
    """``day_of_week`` at ``hour``:``minute`` in ``timezone``, never before the UTC week
    of the user's week has ended, and once per local day on a fall-back night."""

    def __init__(self, *, day_of_week: str, hour: int, minute: int, timezone: str) -> None:
        self.zone = ZoneInfo(timezone)
        self.local = CronTrigger(
            day_of_week=day_of_week, hour=hour, minute=minute, timezone=self.zone
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
        candidate: datetime | None = self.local.get_next_fire_time(None, start - _LOOK_BACK)
        while candidate is not None:
            fire = max(candidate.astimezone(UTC), local_week_end_utc(candidate, self.zone))
            later = previous is None or fire > previous
            if fire >= start and later and not self._repeated(candidate):
                return fire
            # Step in UTC: local arithmetic drops the fold and would find this run again.
            candidate = self.local.get_next_fire_time(None, candidate.astimezone(UTC) + _TICK)
        return None

    def _repeated(self, candidate: datetime) -> bool:
        """The second pass of a wall time a fall-back night repeats, when the first
        pass was a fire time too."""
        if not candidate.fold:
            return False
        first = candidate.replace(fold=0)
        if first.utcoffset() == candidate.utcoffset():
            return False
        again = self.local.get_next_fire_time(None, first)
        return again is not None and again.timestamp() == first.timestamp()
