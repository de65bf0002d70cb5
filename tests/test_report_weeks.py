"""Which week a report covers, on every day of the week, and reports of little data.

The clock is pinned in every test: ``now`` runs through the seven days of one week, so
the suite says the same thing on a Monday as on a Sunday.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pipeline.analysis.orchestrate import run_analysis
from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

MONDAY = datetime(2026, 11, 16, 8, tzinfo=UTC)  # W47 starts 2026-11-16
WEEKDAYS = [MONDAY + timedelta(days=d) for d in range(7)]
SERIES = [Series("alpha", "alpha-short", "short"), Series("alpha", "alpha-long", "long")]


def _probes(wh: Warehouse, *, end: datetime, hours: float, every_min: float = 10.0) -> int:
    frame = probe_frame(SERIES, end=end, days=hours / 24, every_min=every_min, source="live")
    wh.insert_frame("probe_results", frame, key="run_id")
    return frame.height


def _html(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("now", WEEKDAYS, ids=[d.strftime("%a") for d in WEEKDAYS])
def test_a_warehouse_started_this_morning_gets_a_report_of_its_probes(
    warehouse: Warehouse, tmp_path: Path, now: datetime
) -> None:
    """A user who starts on any weekday, analyses and reports sees their probes.

    On a Monday the default week is the one that just ended; when that week has no
    probes the report covers the current week instead of an empty page (or a crash).
    """
    _probes(warehouse, end=now, hours=6)
    run_analysis(warehouse)
    path = render_report(warehouse, tmp_path, now=now)
    html = _html(path)
    assert path.name == IsoWeek.containing(now).filename
    assert 'id="empty-note"' not in html
    assert "No probes were recorded in this week." not in html


@pytest.mark.parametrize("now", WEEKDAYS, ids=[d.strftime("%a") for d in WEEKDAYS])
def test_a_one_day_old_warehouse_renders_on_every_weekday(
    warehouse: Warehouse, tmp_path: Path, now: datetime
) -> None:
    """24 h of probes: on a Monday morning they straddle the week boundary."""
    _probes(warehouse, end=now, hours=24)
    run_analysis(warehouse)
    path = render_report(warehouse, tmp_path, now=now)
    expected = IsoWeek.containing(now - timedelta(hours=24))  # the week just ended on Mondays
    assert path.name == expected.filename
    assert 'id="empty-note"' not in _html(path)


def test_an_empty_week_before_the_first_probe_says_where_the_probes_are(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The Monday crash: analysis phases exist, but the week asked for has no probes."""
    now = WEEKDAYS[2]
    _probes(warehouse, end=now, hours=30)
    run_analysis(warehouse)
    html = _html(render_report(warehouse, tmp_path, week=IsoWeek(2026, 45), now=now))
    assert 'id="empty-note"' in html
    assert "nerfwatch report --week 2026-W47" in html


def test_a_week_with_one_probe(warehouse: Warehouse, tmp_path: Path) -> None:
    now = WEEKDAYS[3]
    frame = probe_frame(SERIES[:1], end=now, days=1 / 24, every_min=60, source="live")
    assert frame.height == 1
    warehouse.insert_frame("probe_results", frame, key="run_id")
    run_analysis(warehouse)
    html = _html(render_report(warehouse, tmp_path, now=now))
    assert 'id="empty-note"' not in html and "alpha" in html
