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
from pipeline.report.heatmap import MIN_CELL_PROBES, heatmap_figure
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

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
    """The tooltip is text we put into the SVG ourselves, so it escapes the name."""
    frame = probe_frame([Series("a<b>&c", "x-short", "short")], end=NOW, days=3, every_min=60)
    warehouse.insert_frame("probe_results", frame, key="run_id")
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    figure = _heatmap(page)
    assert "<title>a&lt;b&gt;&amp;c, " in figure, figure[-1500:]
    assert "<b>&c" not in page


def test_a_long_name_is_cut_to_fit_its_panel() -> None:
    """A 70-character name ran across the next panel's title."""
    long = "a-very-long-provider-name-for-the-eu-west-region-enterprise-tier-backup"
    cells = [(d, h) for d in range(7) for h in range(24)]
    how = pl.DataFrame(
        {
            "provider": [p for p in (long, "b") for _ in cells],
            "dow": [d for _ in range(2) for d, _h in cells],
            "hod": [h for _ in range(2) for _d, h in cells],
            "n": [20] * (2 * len(cells)),
            "ttft": [400.0] * (2 * len(cells)),
        }
    )
    drawn = heatmap_figure(how, [long, "b"])
    assert drawn is not None
    titles = [ax.get_title() for ax in drawn[0].axes[:2]]
    assert titles == [long[:35] + "…", "b"], titles
