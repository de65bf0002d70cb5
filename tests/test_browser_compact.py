"""25 providers fit the verdict in about one screen and a half at 1200 px wide.

Every provider had a full card, stable or not: 25 took about four screens, most of them
saying "Stable ... No notable change this week". Stable providers with nothing firing
and nothing new are now one line each; full cards are for the ones to look at. Measured
in headless Chromium on a real report.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.browser import visit
from tests.support.report import Series, insert_analysis, probe_frame

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)
SCREEN = 900  # CSS px of a laptop screen's height
NAMES = [f"prov{i:02d}" for i in range(25)]

_HEIGHT = """() => {
  const top = document.querySelector("h2#verdict").getBoundingClientRect().top;
  const last = [...document.querySelectorAll("section.verdict")].pop().getBoundingClientRect();
  return {verdict: last.bottom - top, cards: document.querySelectorAll("section.verdict").length,
          quiet: document.querySelectorAll(".quiet-list section.verdict").length};
}"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("compact")
    wh = Warehouse(tmp / "nerfwatch.duckdb")
    wh.migrate()
    degraded = (NOW - timedelta(days=10), NOW)

    def series(names: list[str]) -> list[Series]:
        return [Series(p, f"{p}-{c}", c) for p in names for c in ("short", "long")]

    frames = [
        probe_frame(series(NAMES[:1]), end=NOW, days=21, degraded=degraded),
        probe_frame(series(NAMES[1:]), end=NOW, days=21, seed=1),
    ]
    wh.insert_frame("probe_results", pl.concat(frames), key="run_id")
    insert_analysis(wh, NAMES, end=NOW, degraded=degraded)
    return render_report(wh, tmp / "reports", week=WEEK, now=NOW)


def test_25_providers_fit_in_about_two_screens(browser: Any, report: Path, tmp_path: Path) -> None:
    seen = visit(browser, report, screenshot=tmp_path / "compact.png", width=1200)
    assert seen.console == [] and seen.errors == []
    measured = seen.page.evaluate(_HEIGHT)  # type: ignore[attr-defined]
    assert measured["cards"] == 25, measured
    assert measured["quiet"] >= 20, measured  # the stable ones are lines
    assert measured["verdict"] <= 1.5 * SCREEN, measured
    assert "prov00" in seen.page.locator(".verdicts").inner_text()  # type: ignore[attr-defined]
