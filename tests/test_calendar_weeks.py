"""ISO week 53 of 2026, the year boundary and 29 February 2028, where weeks and release
windows are counted. Guards: these pass on the code they were written against, and pin
what a calendar slip (a "2027-W53", a "W00", a lead time a day short) would break.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from pipeline.analysis.release_cycles import forecast_release, lead_times
from pipeline.report import IsoWeek, default_week, parse_week

W53 = IsoWeek(2026, 53)


def test_week_53_runs_from_the_last_monday_of_2026_to_the_first_sunday_of_2027() -> None:
    assert W53.start == datetime(2026, 12, 28, tzinfo=UTC)
    assert W53.end == datetime(2027, 1, 4, tzinfo=UTC)
    assert IsoWeek.containing(datetime(2027, 1, 3, 23, 59, tzinfo=UTC)) == W53
    assert IsoWeek.containing(datetime(2027, 1, 4, tzinfo=UTC)) == IsoWeek(2027, 1)
    assert IsoWeek(2027, 1).previous() == W53
    assert W53.previous() == IsoWeek(2026, 52)


@pytest.mark.parametrize(
    ("now", "label"),
    [
        (datetime(2027, 1, 4, 6, tzinfo=UTC), "2026-W53"),  # Monday: the week just ended
        (datetime(2027, 1, 1, 12, tzinfo=UTC), "2026-W53"),  # New Year's Day, mid-week
        (datetime(2026, 12, 28, 6, tzinfo=UTC), "2026-W52"),
        (datetime(2027, 1, 11, 6, tzinfo=UTC), "2027-W01"),
        (datetime(2028, 2, 29, 12, tzinfo=UTC), "2028-W09"),  # a Tuesday
    ],
)
def test_the_default_week_keeps_the_iso_year(now: datetime, label: str) -> None:
    assert default_week(now).label == label


def test_week_files_of_the_year_boundary_are_distinct_and_sort_in_order() -> None:
    weeks = [IsoWeek(2026, 52), W53, IsoWeek(2027, 1)]
    assert [w.filename for w in weeks] == [
        "nerfwatch-2026-W52.html", "nerfwatch-2026-W53.html", "nerfwatch-2027-W01.html",
    ]  # fmt: skip
    assert sorted(w.label for w in weeks) == [w.label for w in weeks]


@pytest.mark.parametrize("bad", ["2027-W53", "2026-W00"])
def test_a_week_the_calendar_lacks_is_refused_by_name(bad: str) -> None:
    with pytest.raises(ValueError, match=f"week '{bad}' does not exist"):
        parse_week(bad)
    assert parse_week("2026-W53") == W53


def test_lead_times_count_the_days_across_new_year_and_29_february() -> None:
    onsets = [datetime(2026, 12, 20, tzinfo=UTC), datetime(2028, 2, 20, tzinfo=UTC)]
    releases = [date(2027, 1, 9), date(2028, 3, 1)]
    assert [lead for _, _, lead in lead_times(onsets, releases)] == [20.0, 10.0]


def test_a_forecast_window_crosses_the_year_boundary() -> None:
    onset = datetime(2026, 12, 20, tzinfo=UTC)
    forecast = forecast_release(onset, [10.0, 20.0, 30.0], cluster_p=0.01)
    assert forecast.expected == date(2027, 1, 9)
    # half width t(0.9, 2) * 10 * sqrt(1 + 1/3) = 21.8 d; each end is the day it falls on
    assert (forecast.lo, forecast.hi) == (date(2026, 12, 18), date(2027, 1, 30))
    assert forecast.conclusive
    one = forecast_release(datetime(2028, 2, 19, tzinfo=UTC), [10.0], cluster_p=0.5)
    assert one.expected == date(2028, 2, 29)
    assert (one.lo, one.hi) == (one.expected - timedelta(days=30), date(2028, 3, 30))
