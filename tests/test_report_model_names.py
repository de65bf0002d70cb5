"""A provider whose model name changed mid-week: its card says so, since the header shows
the newest name only and the week's figures pool both. Real DuckDB warehouse; ``now`` is
pinned.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame
from tests.test_report_odd_weeks import _verdict

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)
SWITCH = WEEK.start + timedelta(days=2, hours=10)  # Wednesday 10:00 UTC


def _render(wh: Warehouse, tmp_path: Path, frame: pl.DataFrame) -> str:
    wh.insert_frame("probe_results", frame, key="run_id")
    return render_report(wh, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")


def test_a_rename_on_wednesday_is_on_the_card(warehouse: Warehouse, tmp_path: Path) -> None:
    """The card read "acme acme-2 ... No notable change this week", over figures that were
    half acme-1's."""
    frame = probe_frame([Series("acme", "acme-short", "short")], end=NOW, days=20)
    model = (
        pl.when(pl.col("started_at") < SWITCH).then(pl.lit("acme-1")).otherwise(pl.lit("acme-2"))
    )
    card = _verdict(_render(warehouse, tmp_path, frame.with_columns(model=model)), "acme")
    assert card.startswith("> acme acme-2 "), card  # the newest name in the header
    assert ("Model name changed this week: acme-1 from 2026-11-16 00:") in card, card
    assert "to 2026-11-18 09:" in card and "(58 probes); acme-2 from 2026-11-18 10:" in card, card
    assert "This week's figures mix them." in card, card


def test_names_in_turn_are_not_called_a_change(warehouse: Warehouse, tmp_path: Path) -> None:
    """An alias that routes to two models by turns: no date of a change to give."""
    frame = probe_frame([Series("mix", "mix-short", "short")], end=NOW, days=20)
    model = (
        pl.when(pl.col("started_at").dt.hour() % 2 == 0)
        .then(pl.lit("m-a"))
        .otherwise(pl.lit("m-b"))
    )
    card = _verdict(_render(warehouse, tmp_path, frame.with_columns(model=model)), "mix")
    assert "Answered under 2 model names in turn this week: m-a (" in card, card
    assert "Model name changed" not in card, card
