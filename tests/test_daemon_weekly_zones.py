"""When the weekly job runs and which week it reports, in every kind of zone and across
daylight-saving nights, with APScheduler's real triggers and engine on a pinned clock.

The report is about ISO weeks in UTC. In a zone ahead of UTC the configured Monday
morning came before the UTC week ended, and the job reported the week before: a week
late (Tokyo, Kiritimati). It now waits until the UTC week has ended. A weekly time inside
the hour a fall-back night repeats ran the job twice; it now runs once.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import time_machine

from pipeline.daemon.report_job import JOB_ID, add_report_job
from tests.support.stepped_scheduler import SteppedScheduler
from tests.support.weekly_runs import report_config as _config
from tests.support.weekly_runs import report_runs as _fires
from tests.support.weekly_runs import reported_week as _reported

MONDAY = datetime(2026, 1, 19, tzinfo=UTC)  # the start of 2026-W04 in UTC
WEDNESDAY = MONDAY + timedelta(days=2)


def _local_week_just_ended(fire: datetime, zone: str) -> str:
    local_day: date = fire.astimezone(ZoneInfo(zone)).date()
    monday = local_day - timedelta(days=local_day.weekday())
    year, week, _ = (monday - timedelta(days=1)).isocalendar()
    return f"{year}-W{week:02d}"


@pytest.mark.parametrize(
    ("zone", "runs_at", "week"),
    [
        ("UTC", datetime(2026, 1, 26, 8, 0, tzinfo=UTC), "2026-W04"),
        ("America/Los_Angeles", datetime(2026, 1, 26, 16, 0, tzinfo=UTC), "2026-W04"),
        ("Pacific/Pago_Pago", datetime(2026, 1, 26, 19, 0, tzinfo=UTC), "2026-W04"),
        # Monday 08:00 there is Sunday 23:00 / 18:00 UTC: the run waits for Monday 00:00
        # UTC (09:00 / 14:00 local). The old code ran then and rendered 2026-W03, the
        # week before the one the user's Monday closed.
        ("Asia/Tokyo", datetime(2026, 1, 26, 0, 0, tzinfo=UTC), "2026-W04"),
        ("Pacific/Kiritimati", datetime(2026, 1, 26, 0, 0, tzinfo=UTC), "2026-W04"),
    ],
)
def test_the_weekly_job_reports_the_users_week_just_ended(
    tmp_path: Path, zone: str, runs_at: datetime, week: str
) -> None:
    (fired, *_) = _fires(_config(tmp_path, zone), WEDNESDAY, WEDNESDAY + timedelta(days=7))
    assert fired == runs_at
    assert _reported(fired) == week == _local_week_just_ended(fired, zone)


@pytest.mark.parametrize(
    "zone",
    ["UTC", "Asia/Tokyo", "America/Los_Angeles", "Pacific/Kiritimati", "Pacific/Pago_Pago",
     "Australia/Sydney", "Europe/Berlin"],
)  # fmt: skip
def test_a_year_of_weekly_runs_each_reports_the_local_week_just_ended_once(
    tmp_path: Path, zone: str
) -> None:
    """Fifty-two Mondays, through both daylight-saving changes where the zone has them:
    one run a week, never more than the zone's lead on UTC after 08:00 local."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    fires = _fires(_config(tmp_path, zone), start, start + timedelta(days=364))
    assert len(fires) == 52
    weeks = [_reported(f) for f in fires]
    assert weeks == [_local_week_just_ended(f, zone) for f in fires]
    assert len(set(weeks)) == 52
    for fire in fires:
        local = fire.astimezone(ZoneInfo(zone))
        lead = local.utcoffset() or timedelta(0)
        assert local.weekday() == 0
        late = local.replace(tzinfo=None) - local.replace(hour=8, minute=0, tzinfo=None)
        assert timedelta(0) <= late <= max(lead - timedelta(hours=8), timedelta(0)), fire


# Sundays with a daylight-saving change, and a weekly time inside the hour it skips or
# repeats: Berlin moves 02:00 -> 03:00 and 03:00 -> 02:00, New York 02:00 -> 03:00 and
# 02:00 -> 01:00.
DST_NIGHTS = [  # zone, weekly time, the Sunday, its one run (UTC)
    ("Europe/Berlin", "02:30", datetime(2026, 3, 29, tzinfo=UTC), datetime(2026, 3, 29, 1, 30)),
    ("Europe/Berlin", "02:30", datetime(2026, 10, 25, tzinfo=UTC), datetime(2026, 10, 25, 0, 30)),
    ("America/New_York", "02:30", datetime(2026, 3, 8, tzinfo=UTC), datetime(2026, 3, 8, 7, 30)),
    ("America/New_York", "01:30", datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 1, 5, 30)),
]  # fmt: skip


@pytest.mark.parametrize(("zone", "time", "sunday", "run"), DST_NIGHTS)
def test_a_weekly_time_in_a_skipped_or_repeated_hour_runs_once(
    tmp_path: Path, zone: str, time: str, sunday: datetime, run: datetime
) -> None:
    """Spring forward: the missing 02:30 runs once, at 03:30 by the wall clock (APScheduler
    moves a missing time forward). Fall back: the old code ran at both 02:30s (01:30s)."""
    config = _config(tmp_path, zone, weekday="sun", time=time)
    fires = _fires(config, sunday - timedelta(days=1), sunday + timedelta(days=1))
    assert fires == [run.replace(tzinfo=UTC)]


def test_the_schedule_notes_when_it_waits_for_the_utc_week(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The old code warned at start that every report would be a week late; now it says
    when the job runs instead, and warns of nothing."""
    with caplog.at_level("INFO", logger="nerfwatch.daemon"):
        add_report_job(SteppedScheduler(), _config(tmp_path, "Asia/Tokyo"), print, now=MONDAY)
    (line,) = [r for r in caplog.records if r.name == "nerfwatch.daemon"]
    assert line.levelname == "INFO"
    assert line.getMessage() == (
        "report: mon 08:00 Asia/Tokyo is Sun 23:00 UTC, before the UTC week ends; the job"
        " runs at Mon 09:00 Asia/Tokyo (Mon 00:00 UTC), when the week it reports has ended"
    )


def test_the_job_id_is_the_weekly_report(tmp_path: Path) -> None:
    scheduler = SteppedScheduler(timezone=UTC)
    add_report_job(scheduler, _config(tmp_path, "UTC"), print, now=MONDAY)
    assert [job.id for job in scheduler.get_jobs()] == [JOB_ID]


@pytest.mark.parametrize(
    ("asleep", "week"), [(timedelta(hours=9), "2026-W04"), (timedelta(days=15), "2026-W06")]
)
def test_a_suspend_over_the_reports_hour_runs_it_once_on_resume(
    tmp_path: Path, asleep: timedelta, week: str
) -> None:
    """The machine sleeps from Monday 07:00 UTC, an hour before the report. The old job
    allowed an hour's lateness, so after nine hours it was dropped as a misfire: no report
    that week. Now it runs once on resume, however many report times passed."""
    fired: list[datetime] = []
    before = datetime(2026, 1, 26, 7, 0, tzinfo=UTC)
    with time_machine.travel(before, tick=False) as clock:
        scheduler = SteppedScheduler(timezone=UTC)
        add_report_job(scheduler, _config(tmp_path, "UTC"), lambda: fired.append(datetime.now(UTC)))
        scheduler.start()
        assert scheduler.step() == 3600  # asleep now, for the scheduler's whole wait
        clock.move_to(before + asleep)
        scheduler.step()
        scheduler.step()
        scheduler.shutdown()
    assert fired == [before + asleep]
    assert _reported(fired[0]) == week  # the last week ended by then
