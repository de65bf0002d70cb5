"""Probe schedules across daylight-saving nights: no run lost, none doubled.

Probe jobs are planned in UTC (``make_trigger``: an anchored UTC interval, a UTC cron; the
bridge's scheduler is UTC), so a machine whose local zone skips or repeats an hour runs
them at their usual real-time spacing. Driven by APScheduler's own engine on a pinned
clock, with the process's local zone (``TZ``) set to the zone under test, the job options
the bridge uses, and the triggers it builds. These pass on the old code too: they pin
behaviour that a local-zone trigger (``make_trigger``'s ``timezone``) would break.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import time_machine

from pipeline.config import ProbeConfig
from pipeline.daemon.schedule import JobSpec, make_trigger, misfire_grace_s
from tests.support.daemon import make_config
from tests.support.stepped_scheduler import SteppedScheduler, run_until

# The hour around each change, in UTC: Berlin 01:00 UTC both times, New York 07:00 UTC in
# March (02:00 EST) and 06:00 UTC in November (02:00 EDT).
NIGHTS = [
    ("Europe/Berlin", datetime(2026, 3, 29, 1, 0, tzinfo=UTC)),
    ("Europe/Berlin", datetime(2026, 10, 25, 1, 0, tzinfo=UTC)),
    ("America/New_York", datetime(2026, 3, 8, 7, 0, tzinfo=UTC)),
    ("America/New_York", datetime(2026, 11, 1, 6, 0, tzinfo=UTC)),
]
WINDOW = timedelta(hours=6)  # three hours either side of the change


@pytest.fixture
def local_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield
    monkeypatch.undo()
    time.tzset()


def _spec(tmp_path: Path, every_s: float | None, cron: str | None) -> JobSpec:
    config = make_config(tmp_path)
    probe = ProbeConfig("p", "arithmetic", 200, every_s, cron, ("alpha",))
    return JobSpec("alpha/p", config.provider("alpha"), probe)


def _runs(spec: JobSpec, start: datetime) -> list[datetime]:
    fired: list[datetime] = []
    with time_machine.travel(start, tick=False) as clock:
        scheduler = SteppedScheduler(timezone=UTC)
        trigger = make_trigger(spec)
        scheduler.add_job(
            lambda: fired.append(datetime.now(UTC)),
            trigger,
            id=spec.key,
            misfire_grace_time=misfire_grace_s(trigger),
            coalesce=True,
            max_instances=1,
        )
        run_until(scheduler, clock, start + WINDOW)
        scheduler.shutdown()
    return fired


@pytest.mark.usefixtures("local_zone")
@pytest.mark.parametrize(("zone", "change"), NIGHTS)
@pytest.mark.parametrize(
    ("every_s", "cron", "count", "gap_s"),
    [
        (600.0, None, 36, 600.0),  # an interval
        (None, "*/15 * * * *", 24, 900.0),  # a cron through the changing hour
        (None, "30 * * * *", 6, 3600.0),  # hourly at half past, the hour that repeats
    ],
)
def test_a_probe_schedule_runs_at_its_spacing_through_the_night(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    zone: str,
    change: datetime,
    every_s: float | None,
    cron: str | None,
    count: int,
    gap_s: float,
) -> None:
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    fired = _runs(_spec(tmp_path, every_s, cron), change - WINDOW / 2)
    assert len(fired) == count, fired
    gaps = {(b - a).total_seconds() for a, b in itertools.pairwise(fired)}
    assert gaps == {gap_s}, fired
