"""An accuracy panel whose every day has fewer than ``MIN_SCORED`` scored answers says so.

alpha runs one short probe an hour (24 scored answers a day, under 30), beta two (48).
alpha's panel was an empty axis with no word why; it now holds the count and the week's
total, and the caption says the same in text. Real DuckDB file, real report path, pinned
``now``.
"""

from __future__ import annotations

import html as html_lib
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from pipeline.report import IsoWeek, render_report
from pipeline.report.build import timeline
from pipeline.report.data import load_report_data
from pipeline.report.grid_charts import MIN_SCORED, accuracy_figure
from pipeline.warehouse import Warehouse
from tests.support.browser import ARTIFACTS, visit
from tests.support.report import Series, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)


def _fill(wh: Warehouse) -> None:
    series = [
        Series("alpha", "alpha-short", "short"),
        Series("beta", "beta-short", "short"),
        Series("beta", "beta-long", "long"),
    ]
    wh.insert_frame("probe_results", probe_frame(series, end=NOW, days=20), key="run_id")


def _week_counts(wh: Warehouse, provider: str) -> tuple[int, int]:
    row = wh.query(
        "SELECT count(correct) AS n, count(*) FILTER (WHERE correct) AS k FROM probes "
        "WHERE provider = ? AND started_at >= ? AND started_at < ?",
        [provider, WEEK.start, NOW],
    ).row(0, named=True)
    return int(row["k"]), int(row["n"])


def _caption(page: str) -> str:
    part = page.split('id="chart-accuracy"', 1)[1].split("</figcaption>", 1)[0]
    text = html_lib.unescape(re.sub(r"<[^>]+>", " ", part.split("<figcaption>", 1)[1]))
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ")).strip()


def test_a_panel_without_a_chartable_day_says_what_it_holds(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    _fill(warehouse)
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    correct, scored = _week_counts(warehouse, "alpha")
    assert 0 < scored < 7 * 24, scored
    caption = _caption(page)
    assert re.search(
        rf"alpha: \d+ scored answers over the charted days, fewer than {MIN_SCORED} on every "
        rf"day, so none is charted; week total: {correct} of {scored} correct\.",
        caption,
    ), caption
    assert "beta:" not in caption, caption  # 48 a day: charted as a rate


def test_the_empty_panel_draws_words_not_an_axis(warehouse: Warehouse) -> None:
    _fill(warehouse)
    data = load_report_data(warehouse, WEEK, now=NOW)
    fig = accuracy_figure(data.accuracy_daily, ["alpha", "beta"], timeline=timeline(data))
    assert fig is not None
    alpha, beta = fig.axes[0], fig.axes[2]  # rows of (accuracy, flags)
    words = [t.get_text() for t in alpha.texts]
    assert len(words) == 1 and "too few to chart" in words[0], words
    correct, scored = _week_counts(warehouse, "alpha")
    assert f"week total: {correct} of {scored} correct" in words[0], words
    FigureCanvasAgg(fig).draw()  # tick labels exist once drawn
    assert not alpha.lines and not any(t.get_visible() for t in alpha.get_yticklabels())
    assert any(t.get_visible() and t.get_text() for t in beta.get_yticklabels())
    assert beta.lines and not beta.texts  # a chartable provider keeps its line, no words
    # the flag rate counts every response, so a thin accuracy keeps its flag line
    assert fig.axes[1].lines and fig.axes[3].lines
    low, _ = fig.axes[1].get_ylim()
    assert low < 0  # a rate of 0 is drawn above the axis line, not hidden on it


@pytest.mark.browser
def test_screenshot_of_the_panel(browser: Any, warehouse: Warehouse, tmp_path: Path) -> None:
    """The panel as a reader sees it (test-artifacts/report-thin-accuracy.png)."""
    _fill(warehouse)
    path = render_report(warehouse, tmp_path, week=WEEK, now=NOW)
    seen = visit(browser, path)
    chart = seen.page.locator("#chart-accuracy")  # type: ignore[attr-defined]
    chart.screenshot(path=str(ARTIFACTS / "report-thin-accuracy.png"))
    assert not seen.errors, seen.errors


@pytest.mark.parametrize("per_day", [MIN_SCORED - 1, MIN_SCORED])
def test_the_threshold_is_the_tables(per_day: int) -> None:
    """29 a day is words, 30 a day is a chart: the table's own threshold."""
    from pipeline.report.thin_accuracy import thin_accuracy

    days = pl.datetime_range(WEEK.start, NOW, "1d", eager=True, time_zone="UTC")
    frame = pl.DataFrame(
        {"provider": "alpha", "day": days, "n_scored": per_day, "n_correct": per_day - 1}
    )
    found = thin_accuracy(frame, ["alpha"], (WEEK.start, WEEK.end))
    assert ("alpha" in found) is (per_day < MIN_SCORED), found
