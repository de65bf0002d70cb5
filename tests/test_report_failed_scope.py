"""A card's failure count and the table's week figure say which stretch each counts.

The card of a degradation sized by its failures read "1,234 of 5,678 probes failed
(22 %)" over the whole phase, beside the table's "Availability 97 %" for the week: two
"failed" figures, for two stretches, side by side and unlabelled."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline.report import IsoWeek, render_report
from pipeline.report.severity import SeverityBasis, describe
from pipeline.warehouse import Warehouse
from tests.support.report import Series, insert_analysis, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)
ONSET = NOW - timedelta(days=30)


def test_the_card_s_failure_count_names_the_phase() -> None:
    phase = {
        "label": "degraded",
        "stage": "major_degradation",
        "signals": ["error_rate"],
        "start_at": ONSET,
        "severity": None,
        "severity_lo": None,
        "severity_hi": None,
    }
    basis = SeverityBasis("ttft_short", 1000, 900, 100, 10, since=ONSET)
    text = describe(phase, basis)
    assert "900 of 1,000 probes failed since the phase began 2026-10-21 (90\u00a0%)" in text, text


def test_the_table_says_its_share_is_the_week_s(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path / "nerfwatch.duckdb")
    wh.migrate()
    series = [Series("alpha", f"alpha-{c}", c) for c in ("short", "long")]
    wh.insert_frame("probe_results", probe_frame(series, end=NOW, days=10), key="run_id")
    insert_analysis(wh, ["alpha"], end=NOW, degraded=(ONSET, NOW))
    html = render_report(wh, tmp_path / "out", week=WEEK, now=NOW).read_text("utf-8")
    table = html[html.index('id="comparison"') : html.index("</table>")]
    assert "Answered this week" in table and "Availability" not in table
    caption = html[html.index("</table>") :]
    assert re.search(r"share of this week's attempts that succeeded", caption)
