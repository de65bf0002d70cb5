"""The weekly report's runs at the calendar's edges: the week after a daylight-saving
change, a midnight that does not exist, and ISO week 53 with the year boundary.

Driven by APScheduler's own engine on a pinned clock (``SteppedScheduler``). APScheduler
3.11's ``CronTrigger`` drops a weekly time in the first hour after midnight of the day
after a spring-forward night (Monday 00:30 in London after 2026-03-29 comes next on
2026-04-06) and drops a time a midnight change skips (Friday 00:00 in Cairo on
2026-04-24) instead of moving it forward: the job ran a fortnight apart and that week had
no report. ``WeeklyTrigger`` now finds each week's run itself.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.weekly_runs import report_config as _config
from tests.support.weekly_runs import report_runs as _fires
from tests.support.weekly_runs import reported_week as _reported


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


# zone, weekday, time, the run that went missing (UTC), the week it reports. Each case is
# checked over the three weeks around it: one run a week, no week left out.
SPRING_WEEKS = [
    # Monday 00:30 BST is Sunday 23:30 UTC: held to the end of the UTC week.
    ("Europe/London", "mon", "00:30", _utc(2026, 3, 30), "2026-W13"),
    ("America/New_York", "mon", "00:30", _utc(2026, 3, 9, 4, 30), "2026-W10"),
    ("America/St_Johns", "mon", "00:30", _utc(2026, 3, 9, 3, 0), "2026-W10"),
    # 30-minute change (02:00 -> 02:30); Monday 00:00 +11:00 is Sunday 13:00 UTC.
    ("Australia/Lord_Howe", "mon", "00:00", _utc(2026, 10, 5), "2026-W40"),
    # Midnight itself is skipped (00:00 -> 01:00): the run comes at 01:00 +03:00.
    ("Africa/Cairo", "fri", "00:00", _utc(2026, 4, 23, 22, 0), "2026-W16"),
]


@pytest.mark.parametrize(("zone", "weekday", "time", "missing", "week"), SPRING_WEEKS)
def test_the_week_after_a_spring_forward_night_has_its_run(
    tmp_path: Path, zone: str, weekday: str, time: str, missing: datetime, week: str
) -> None:
    config = _config(tmp_path, zone, weekday, time)
    fires = _fires(config, missing - timedelta(days=10), missing + timedelta(days=11))
    assert missing in fires, fires
    assert _reported(missing) == week
    assert len(fires) == 3, fires
    assert all(b - a < timedelta(days=8) for a, b in itertools.pairwise(fires)), fires


ZONES = [
    "UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Pacific/Kiritimati",
    "Pacific/Pago_Pago", "America/St_Johns", "Asia/Kathmandu",
]  # fmt: skip


@pytest.mark.parametrize("zone", ZONES)
def test_the_runs_over_the_year_boundary_report_week_53_once(tmp_path: Path, zone: str) -> None:
    """Mondays 08:00 local from 2026-12-21 to 2027-01-18: 2026-W53 (Monday 2026-12-28 to
    Sunday 2027-01-03) is reported once, between 2026-W52 and 2027-W01."""
    config = _config(tmp_path, zone, "mon", "08:00")
    fires = _fires(config, _utc(2026, 12, 20), _utc(2027, 1, 20))
    assert [_reported(f) for f in fires] == [
        "2026-W51", "2026-W52", "2026-W53", "2027-W01", "2027-W02",
    ]  # fmt: skip
