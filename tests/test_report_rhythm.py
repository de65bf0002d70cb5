"""The hour-of-week line states the rhythm's size with the uncertainty the data carry.

A provider probed for 4 days read "x4.30" for a planted x1.67 rhythm, with no interval
(the max over min of 168 noisy hour-of-week medians). The analysis now fits a smoothed
rhythm and resamples whole days for a 95 % interval, stored only from a week of data on
(a7b34d9); the report prints the interval, or says there is none. The warehouse's daily
rhythm is 1 + 0.25 sin(...) (``tests.support.report``): peak over trough 1.25 / 0.75.
Real DuckDB file, real analysis run, ``now`` pinned.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.analysis.orchestrate import run_analysis
from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
PLANTED = 1.25 / 0.75


def _rhythm_line(wh: Warehouse, tmp_path: Path, days: float) -> str:
    frame = probe_frame([Series("alpha", "alpha-short", "short")], end=NOW, days=days)
    wh.insert_frame("probe_results", frame, key="run_id")
    run_analysis(wh)
    page = render_report(wh, tmp_path, week=IsoWeek(2026, 47), now=NOW).read_text("utf-8")
    found = re.search(r"Significant rhythm[^<]*", page)
    assert found, "no rhythm line"
    return html.unescape(found[0]).replace("\u00a0", " ")


def test_a_month_of_probes_gives_the_ratio_with_an_interval_that_holds_it(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    line = _rhythm_line(warehouse, tmp_path, 30)
    size = re.search(r"×(\d+\.\d+), 95 % interval \(conservative\) ×(\d+\.\d+)–×(\d+\.\d+)\)", line)
    assert size, line
    ratio, lo, hi = (float(v) for v in size.groups())
    assert lo <= ratio <= hi and lo <= PLANTED <= hi, line


@pytest.mark.parametrize("days", [4, 5])
def test_under_a_week_says_there_is_no_interval(
    warehouse: Warehouse, tmp_path: Path, days: int
) -> None:
    line = _rhythm_line(warehouse, tmp_path, days)
    size = re.search(r"×(\d+\.\d+); under a week of data, no interval\)", line)
    assert size, line
    assert float(size[1]) < 2.5, line  # the old max/min read x3.9-x6.6 at 4 days
