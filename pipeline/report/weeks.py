"""ISO weeks: the unit a report covers (Monday 00:00 UTC up to the next Monday)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

__all__ = ["IsoWeek", "default_week", "parse_week"]

_WEEK = re.compile(r"^(?P<year>\d{4})-W(?P<week>\d{2})$")


@dataclass(frozen=True, slots=True, order=True)
class IsoWeek:
    """One ISO-8601 week, e.g. ``2026-W47``."""

    year: int
    week: int

    @property
    def label(self) -> str:
        return f"{self.year}-W{self.week:02d}"

    @property
    def start(self) -> datetime:
        """Monday 00:00 UTC."""
        monday = date.fromisocalendar(self.year, self.week, 1)
        return datetime(monday.year, monday.month, monday.day, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        """The next Monday 00:00 UTC (exclusive)."""
        return self.start + timedelta(days=7)

    @property
    def filename(self) -> str:
        return f"nerfwatch-{self.label}.html"

    def previous(self) -> IsoWeek:
        return IsoWeek.containing(self.start - timedelta(days=1))

    @staticmethod
    def containing(moment: datetime) -> IsoWeek:
        year, week, _ = moment.astimezone(UTC).isocalendar()
        return IsoWeek(year, week)


def parse_week(text: str) -> IsoWeek:
    """Parse ``YYYY-Www``; raise ``ValueError`` with a message naming the bad value."""
    match = _WEEK.match(text.strip())
    if match is None:
        raise ValueError(f"week {text!r} is not an ISO week like 2026-W47")
    year, week = int(match["year"]), int(match["week"])
    try:
        date.fromisocalendar(year, week, 1)
    except ValueError:
        raise ValueError(f"week {text!r} does not exist (year {year} has no week {week})") from None
    return IsoWeek(year, week)


def default_week(now: datetime | None = None) -> IsoWeek:
    """The week a report is about when none is given.

    The current week, except during its first day: a report scheduled for Monday
    morning is about the week that just ended, not about a few hours of the new one.
    """
    now = now or datetime.now(UTC)
    return IsoWeek.containing(now - timedelta(hours=24))
