"""The hour-of-week heatmap colours only hours with enough answers for a median.

Real DuckDB warehouse, the report's own query; ``now`` is pinned.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

from pipeline.report import IsoWeek, render_report
from pipeline.report.data import load_report_data
from pipeline.report.heatmap import MIN_CELL_PROBES, cells_for, heatmap_figure
from pipeline.warehouse import Warehouse
from tests.support.report import Series, heatmap_cells, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)
TUESDAY, TWO_PM = 1, 14


def _one_slow_answer_on_tuesday_at_two(wh: Warehouse) -> None:
    """Four weeks of alpha every 10 minutes (about 24 answers an hour of the week), except
    Tuesdays 14:00-15:00 UTC: one answer there, five times slower than usual."""
    frame = probe_frame([Series("alpha", "alpha-short", "short")], end=NOW, days=28, every_min=10)
    frame = frame.filter(pl.col("error_class") == "ok").with_row_index()
    at = pl.col("started_at")
    cell = (at.dt.weekday() == TUESDAY + 1) & (at.dt.hour() == TWO_PM)
    kept = frame.filter(cell)["index"][0]
    rows = frame.filter(~cell | (pl.col("index") == kept)).with_columns(
        ttft_ms=pl.when(pl.col("index") == kept).then(2000.0).otherwise(pl.col("ttft_ms"))
    )
    wh.insert_frame("probe_results", rows.drop("index"), key="run_id")


def _heatmap(page: str) -> str:
    return page.split('data-chart="heatmap"', 1)[1].split("</figure>", 1)[0]


def test_an_hour_of_one_answer_is_hatched_not_coloured(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """That one slow answer was drawn at the top of the red scale, like a rush hour."""
    _one_slow_answer_on_tuesday_at_two(warehouse)
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    figure = _heatmap(page)
    assert "<title>alpha, Tue 14h UTC: 1 answer, too few</title>" in figure, figure[-2000:]
    assert len(re.findall(r"<title>", figure)) == 1  # every other hour has enough answers
    assert f"fewer than {MIN_CELL_PROBES} answers are hatched grey" in figure

    data = load_report_data(warehouse, WEEK, now=NOW)
    drawn = heatmap_figure(data.hour_of_week, ["alpha"])
    assert drawn is not None
    colours = drawn[0].axes[0].collections[0].get_array()
    assert colours is not None
    cells = np.ma.masked_invalid(colours).reshape(7, 24)
    assert cells.mask[TUESDAY, TWO_PM], cells[TUESDAY]
    assert cells.count() == 7 * 24 - 1  # every other hour is coloured
    assert float(cells.max()) < 1.6, cells.max()  # no hour of many answers is near 2x


def test_a_provider_name_in_a_tooltip_is_escaped(warehouse: Warehouse, tmp_path: Path) -> None:
    """The tooltip is text we put into the SVG ourselves, so it escapes the name. (One
    day of hourly probes: even the widest cells, 6 hours, are thin and get a tooltip.)"""
    frame = probe_frame([Series("a<b>&c", "x-short", "short")], end=NOW, days=1, every_min=60)
    warehouse.insert_frame("probe_results", frame, key="run_id")
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    figure = _heatmap(page)
    assert "<title>a&lt;b&gt;&amp;c, " in figure, figure[-1500:]
    assert "<b>&c" not in page


def test_a_long_name_is_cut_to_fit_its_panel() -> None:
    """A 70-character name ran across the next panel's title."""
    long = "a-very-long-provider-name-for-the-eu-west-region-enterprise-tier-backup"
    answers = [(p, d, h) for p in (long, "b") for d in range(7) for h in range(24)] * 20
    how = pl.DataFrame(answers, schema=["provider", "dow", "hod"], orient="row").with_columns(
        ttft=pl.lit(400.0)
    )
    drawn = heatmap_figure(heatmap_cells(how), [long, "b"])
    assert drawn is not None
    titles = [ax.get_title() for ax in drawn[0].axes[:2]]
    assert titles == [long[:35] + "…", "b"], titles


def _hourly(wh: Warehouse, tmp_path: Path, days: int) -> str:
    """alpha probed once an hour for ``days`` (short and long context), rendered."""
    series = [Series("alpha", f"alpha-{c}", c) for c in ("short", "long")]
    wh.insert_frame("probe_results", probe_frame(series, end=NOW, days=days), key="run_id")
    page = render_report(wh, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    return _heatmap(page)


def test_hourly_probing_over_28_days_fills_three_hour_blocks(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """Hourly probes put 4 answers in an hour of the week: all 168 cells were hatched. In
    blocks of 3 hours a cell holds about 12, and the chart says what a cell is."""
    figure = _hourly(warehouse, tmp_path, 28)
    assert "A cell is 3 hours of one weekday over the last four weeks" in figure, figure[-800:]
    assert len(re.findall(r"<title>", figure)) <= 0.1 * 56, figure[-1500:]
    data = load_report_data(warehouse, WEEK, now=NOW)
    drawn = heatmap_figure(data.hour_of_week, ["alpha"])
    assert drawn is not None
    colours = np.ma.masked_invalid(drawn[0].axes[0].collections[0].get_array())
    assert colours.count() >= 0.9 * 7 * 8, colours


def test_hourly_probing_over_7_days_pools_the_weekdays(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """One week of hourly probes: one answer an hour of the week, 7 an hour of the day;
    two-hour blocks of the day, every day pooled, hold 14."""
    figure = _hourly(warehouse, tmp_path, 7)
    assert "A cell is 2 hours of the day, all days of the last four weeks pooled" in figure
    assert "hours are pooled" in figure
    data = load_report_data(warehouse, WEEK, now=NOW)
    drawn = heatmap_figure(data.hour_of_week, ["alpha"])
    assert drawn is not None and drawn[2].pool_days and drawn[2].hours == 2
    colours = np.ma.masked_invalid(drawn[0].axes[0].collections[0].get_array())
    assert colours.count() == 12, colours


def test_cells_are_counted_per_provider() -> None:
    """25 providers of 4 answers an hour of the week are 100 answers an hour together,
    but each panel's cells hold 4: the cells are widened to 3-hour blocks (12)."""
    answers = [(f"p{i}", d, h) for i in range(25) for d in range(7) for h in range(24)] * 4
    how = pl.DataFrame(answers, schema=["provider", "dow", "hod"], orient="row")
    assert cells_for(heatmap_cells(how.with_columns(ttft=pl.lit(400.0)))).hours == 3
