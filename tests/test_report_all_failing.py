"""Every provider failing at once is said once, above the verdicts, with its error classes.

The old report gave each provider its own "Failing now" card and nothing else: two cards
read as two outages, though the data cannot tell them from one fault on the probing side.
Real DuckDB files, ``render_report``, ``now`` pinned; no analysis is needed.
"""

from __future__ import annotations

import html as html_lib
import re
from datetime import timedelta
from pathlib import Path

import polars as pl

from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

WEEK = IsoWeek(2026, 47)
END = WEEK.end
OUTAGE = END - timedelta(days=2)  # Saturday 00:00


def _page(wh: Warehouse, tmp_path: Path, failing: list[str]) -> str:
    series = [Series(p, f"{p}-short", "short") for p in ("alpha", "beta")]
    frame = probe_frame(series, end=END, days=20, source="live", seed=4)
    down = (pl.col("started_at") >= OUTAGE) & pl.col("provider").is_in(failing)
    frame = frame.with_columns(
        error_class=pl.when(down).then(pl.lit("connection_error")).otherwise("error_class"),
        ttft_ms=pl.when(down).then(None).otherwise("ttft_ms"),
        score_strict=pl.when(down).then(None).otherwise("score_strict"),
    )
    wh.insert_frame("probe_results", frame, key="run_id")
    return render_report(wh, tmp_path, week=WEEK, now=END).read_text(encoding="utf-8")


def test_every_provider_failing_is_said_before_the_verdicts(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    page = _page(warehouse, tmp_path, ["alpha", "beta"])
    assert 'id="all-failing"' in page, "no word that every provider fails at once"
    banner = page.split('id="all-failing">', 1)[1].split("</div>", 1)[0]
    text = re.sub(r"\s+", " ", html_lib.unescape(banner))
    assert text.startswith(
        "Every provider has failed every probe since 2026-11-21 00:00 UTC (96 probes; "
        "errors since that day: connection_error 96)."
    ), text
    assert "probing side" in text
    assert page.index('id="all-failing"') < page.index('id="verdict"')


def test_one_provider_failing_is_its_own_verdict(warehouse: Warehouse, tmp_path: Path) -> None:
    page = _page(warehouse, tmp_path, ["alpha"])
    assert "Failing now" in page  # alpha's card tells it
    assert 'id="all-failing"' not in page
