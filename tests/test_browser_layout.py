"""The weekly report is readable at phone width (390 px) and on a wide screen (1400 px).

A realistic report (three providers, 120 days, an analysed degradation, a forecast)
opened in headless Chromium at each width: the page itself never scrolls sideways, a
table wider than its box scrolls inside that box, and charts are drawn at a scale where
their labels can be read. Full-page screenshots go to the test's tmp dir.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.browser import visit
from tests.support.report import Series, insert_analysis, insert_hostile_rows, probe_frame

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)
MIN_CHART_PX = 320
WIDE = 1400  # from here on, every table must fit without scrolling
# The smallest chart text is 7 pt in a figure measured in points: drawn at less than
# 0.85 of its natural size it falls under 6 px and cannot be read.
MIN_CHART_SCALE = 0.85

_TABLES = """() => [...document.querySelectorAll("table")].map(t => {
  const box = t.parentElement;
  return {table: t.scrollWidth, box: box.clientWidth,
          overflow: getComputedStyle(box).overflowX,
          right: box.getBoundingClientRect().right};
})"""

_CHARTS = """() => [...document.querySelectorAll("svg.chart")].map(s => {
  const r = s.getBoundingClientRect();
  return {key: s.dataset.chart, width: r.width, scale: r.width / s.viewBox.baseVal.width};
})"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("layout")
    wh = Warehouse(tmp / "nerfwatch.duckdb")
    wh.migrate()
    providers = [("alpha", 350.0), ("beta", 500.0), ("gamma", 420.0)]
    series = [
        Series(p, f"{p}-{c}", c, base_ttft_ms=b) for p, b in providers for c in ("short", "long")
    ]
    degraded = (NOW - timedelta(days=30), NOW)
    frame = probe_frame(series, end=NOW, days=120, every_min=60, degraded=degraded)
    wh.insert_frame("probe_results", frame, key="run_id")
    insert_hostile_rows(wh, "alpha", NOW - timedelta(hours=2))
    insert_analysis(wh, [p for p, _ in providers], end=NOW, degraded=degraded)
    return render_report(wh, tmp / "reports", week=WEEK, now=NOW)


@pytest.mark.parametrize("width", [390, 1400])
def test_readable_at_width(browser: Any, report: Path, tmp_path: Path, width: int) -> None:
    shot = tmp_path / f"report-{width}px.png"
    seen = visit(browser, report, screenshot=shot, width=width)
    page: Any = seen.page
    page.locator("h2#examples + details > summary").click()  # open the examples table too
    assert shot.stat().st_size > 0
    assert seen.console == [] and seen.errors == []

    page_width = page.evaluate("document.documentElement.scrollWidth")
    assert page_width <= width, f"the page scrolls sideways at {width} px ({page_width} px)"

    tables = page.evaluate(_TABLES)
    assert len(tables) >= 3, tables  # comparison, release cycle, examples
    for t in tables:
        fits = t["table"] <= t["box"]
        assert fits or t["overflow"] in ("auto", "scroll"), f"table cut off at {width} px: {t}"
        assert fits or width < WIDE, f"a table needs scrolling on a wide screen: {t}"
        assert t["right"] <= width, f"table box runs off the screen at {width} px: {t}"

    charts = page.evaluate(_CHARTS)
    assert {c["key"] for c in charts} >= {"ttft-0", "errors", "accuracy", "cycle"}
    for c in charts:
        assert c["width"] >= MIN_CHART_PX, f"chart too narrow at {width} px: {c}"
        assert c["scale"] >= MIN_CHART_SCALE, f"chart text too small at {width} px: {c}"


def test_release_cycle_columns_reachable_at_phone_width(browser: Any, report: Path) -> None:
    """The "Now" and "Next release window" columns can be scrolled into view."""
    page: Any = visit(browser, report, width=390).page
    box = page.locator("#cycle + .table-scroll")
    assert box.count() == 1, "the release-cycle table has no scroll box"
    box.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    frame = box.bounding_box()
    for header in ("Now", "Next release window"):
        cell = box.locator("th", has_text=header).first.bounding_box()
        assert cell is not None and frame is not None
        assert cell["x"] >= frame["x"] - 1, header
        assert cell["x"] + cell["width"] <= frame["x"] + frame["width"] + 1, header
