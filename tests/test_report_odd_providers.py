"""Odd providers: one whose every probe has failed since it was added, and names with
markup, quotes and characters outside ASCII. Real DuckDB warehouse analysed by the real
analysis run; ``now`` is pinned.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from pipeline.analysis.orchestrate import run_analysis
from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame
from tests.test_report_odd_weeks import _FAILED, _text

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)
HOSTILE = '<b>x</b>"&-ünï-Ω'


def test_a_provider_that_never_answered_is_not_asked_for_more_probes(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """Its card read "Failing now ... Not enough data yet phase" and "it needs at least 72
    more short-context probe(s)": 240 failed probes already, and more failures would not
    make a baseline. The name with markup is escaped on its card and in the table."""
    down = probe_frame([Series("down", "down-short", "short")], end=NOW, days=10, seed=2)
    odd = probe_frame([Series(HOSTILE, "odd-short", "short")], end=NOW, days=10, seed=3)
    frame = pl.concat([down.with_columns(**_FAILED), odd])
    warehouse.insert_frame("probe_results", frame, key="run_id")
    run_analysis(warehouse)
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    card = _text(page.split('data-provider="down"', 1)[1].split("</section>", 1)[0])
    assert "Failing now" in card, card
    assert "Not enough data yet phase" not in card and " phase" not in card, card
    assert "None of its 240 probes so far has answered a short-context probe" in card, card
    assert "more short-context probe" not in card, card

    assert 'data-provider="&lt;b&gt;x&lt;/b&gt;&#34;&amp;-ünï-Ω"' in page
    assert "<b>x</b>" not in page
    row = re.search(r"<tr><td>&lt;b&gt;x&lt;/b&gt;&#34;&amp;-ünï-Ω</td>", page)
    assert row, "the comparison table's row of the odd name"
