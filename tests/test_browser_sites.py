"""The report's probe-site tables in headless Chromium: offline and quiet, readable at
phone width (a sites table scrolls inside its box, never the page) and on a wide screen,
with the scope sentence above each provider's sites."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from pipeline.analysis.orchestrate import run_analysis
from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.browser import visit
from tests.support.planted import START
from tests.support.planted_sites import SITES, three_site_history

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOW = START + timedelta(days=33)

_SITE_TABLES = """() => [...document.querySelectorAll("table.sites")].map(t => {
  const box = t.parentElement;
  return {table: t.scrollWidth, box: box.clientWidth, rows: t.tBodies[0].rows.length,
          overflow: getComputedStyle(box).overflowX,
          right: box.getBoundingClientRect().right};
})"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("sites")
    wh = Warehouse(tmp / "nerfwatch.duckdb")
    wh.insert_frame("probe_results", three_site_history())
    run_analysis(wh)
    return render_report(wh, tmp / "reports", week=IsoWeek.containing(NOW), now=NOW)


@pytest.mark.parametrize("width", [390, 1400])
def test_sites_side_by_side_in_a_browser(browser: Any, report: Path, width: int) -> None:
    seen = visit(browser, report, width=width)
    page: Any = seen.page
    assert seen.requests == [report.resolve().as_uri()], "the report must not fetch anything"
    assert seen.console == [] and seen.errors == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    sentences = page.locator("p.site-scope").all_inner_texts()
    assert sentences[0].startswith("nova: slower from frankfurt only"), sentences
    assert sentences[1].startswith("sable: slower at every site"), sentences
    tables = page.evaluate(_SITE_TABLES)
    assert [t["rows"] for t in tables] == [len(SITES)] * 2, tables
    for t in tables:
        fits = t["table"] <= t["box"]
        assert fits or t["overflow"] in ("auto", "scroll"), f"sites table cut off: {t}"
        assert fits or width < 1400, f"a sites table needs scrolling on a wide screen: {t}"
        assert t["right"] <= width, t
    assert page.locator("h2#sites").is_visible()
