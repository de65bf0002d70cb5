"""The release cycle of a provider without a baseline says what its verdict says.

A new user's first report (a llama.cpp server probed for a few minutes) read "Not enough
data yet" in the verdict and "Stable for under a day" in the release-cycle table: the table
told the phase the analysis draws from a few hours, which the verdict refuses to tell.
The warehouse is a real DuckDB file analysed by the real analysis run; ``now`` is pinned.
"""

from __future__ import annotations

import html as html_lib
import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from pipeline.analysis.orchestrate import run_analysis
from pipeline.report import IsoWeek, render_report
from pipeline.report.charts import STAGE_COLOURS
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)


def _cycle_row(page: str, provider: str) -> str:
    table = page.split('id="cycle"', 1)[1].split("</table>", 1)[0]
    row = table.split(f"<td>{provider}</td>", 1)[1].split("</tr>", 1)[0]
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", row))).strip()


def test_a_provider_without_a_baseline_has_no_phase_in_the_cycle_table(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    young = probe_frame([Series("young", "young-short", "short")], end=NOW, days=0.5, seed=1)
    settled = probe_frame([Series("settled", "settled-short", "short")], end=NOW, days=20)
    warehouse.insert_frame("probe_results", pl.concat([young, settled]), key="run_id")
    run_analysis(warehouse)
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    verdict = page.split('data-provider="young"', 1)[1].split("</section>", 1)[0]
    assert "Not enough data yet" in verdict
    young_row = _cycle_row(page, "young")
    assert "not enough data yet" in young_row and "Stable" not in young_row, young_row
    assert "Stable for" in _cycle_row(page, "settled")  # a provider with a baseline is told


def _cycle_rows(page: str) -> list[str]:
    """The release-cycle chart's rows (one SVG axes each, in provider order)."""
    start = page.index('data-chart="cycle"')
    svg = page[start : page.index("</svg>", start)]
    return re.split(r'<g id="cycle-axes_\d+">', svg.split('<g id="cycle-legend_1">')[0])[1:]


def test_a_provider_without_a_baseline_has_no_stable_band_in_the_cycle_chart(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The analysis labels the 12 hours of 'young' stable (its longest segment stands in for
    a baseline); the chart drew that as a grey 'stable' band the verdict refuses to claim.
    Now its row is a dashed outline, and the caption says why."""
    young = probe_frame([Series("young", "young-short", "short")], end=NOW, days=0.5, seed=1)
    settled = probe_frame([Series("settled", "settled-short", "short")], end=NOW, days=20)
    warehouse.insert_frame("probe_results", pl.concat([young, settled]), key="run_id")
    run_analysis(warehouse)
    assert set(warehouse.query("SELECT DISTINCT provider, label FROM phases").rows()) == {
        ("young", "stable"),
        ("settled", "stable"),
    }  # what the analysis wrote: the premise of this test
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    settled_row, young_row = _cycle_rows(page)
    stable = f"fill: {STAGE_COLOURS['stable'].lower()}"
    assert stable in settled_row
    assert stable not in young_row, "a stable band for a provider without a baseline"
    assert "stroke-dasharray" in young_row  # the dashed outline over its probes
    caption = page.split('id="chart-cycle"', 1)[1].split("</figcaption>", 1)[0]
    assert "no baseline yet" in caption
    assert "young: 12 of the 72 hours with short-context answers" in caption, caption
    assert "settled:" not in caption


def test_a_provider_not_probed_this_week_says_so_in_the_cycle_table(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """Its verdict reads "No probes since ...": the table said "not enough data yet" of a
    provider with 60 days of history (before, its phase of May, as if it were now)."""
    gone = probe_frame(
        [Series("gone", "gone-short", "short")], end=datetime(2026, 6, 1, tzinfo=UTC), days=60
    )
    here = probe_frame([Series("here", "here-short", "short")], end=NOW, days=20)
    warehouse.insert_frame("probe_results", pl.concat([gone, here]), key="run_id")
    run_analysis(warehouse)
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    verdict = page.split('data-provider="gone"', 1)[1].split("</section>", 1)[0]
    assert "No probes since 2026-05-31" in verdict
    row = _cycle_row(page, "gone")
    assert "no probes since 2026-05-31" in row and "not enough data" not in row, row


def test_a_provider_without_a_baseline_is_not_picked(warehouse: Warehouse, tmp_path: Path) -> None:
    """'young' (12 hours of probes) is the fastest this week: the pick first said "not in
    a degradation phase", which its verdict ("Not enough data yet") cannot know, then
    picked it on 12 answers with "no baseline yet". A pick needs a baseline
    (``pipeline.report.picks``): settled is picked, and young is named as left out."""
    young = probe_frame([Series("young", "young-short", "short")], end=NOW, days=0.5, seed=1)
    young = young.with_columns(pl.col("ttft_ms") * 0.5)
    settled = probe_frame([Series("settled", "settled-short", "short")], end=NOW, days=20)
    warehouse.insert_frame("probe_results", pl.concat([young, settled]), key="run_id")
    run_analysis(warehouse)
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    picks = page.split('id="recommendations"', 1)[1].split('id="comparison"', 1)[0]
    short = re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", picks)))
    short = short.split("long context", 1)[0]
    assert "short context settled not in a degradation phase;" in short, short
    assert "Left out: young, no baseline yet (72 answered hours needed)." in short, short
