"""The traffic pick: only a provider a reader could act on, and no pick when two tie.

Real DuckDB warehouses, rendered by the real report; ``now`` is pinned. No analysis run:
the pick's rule about answers, baselines and intervals does not need one, and the pick
must then not claim its provider is "not in a degradation phase".
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from pipeline.report import IsoWeek, render_report
from pipeline.report.picks import MIN_PICK_ANSWERS
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame
from tests.test_report_odd_weeks import _recommendations

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)


def _short(provider: str, ttft_ms: float) -> Series:
    return Series(provider, f"{provider}-short", "short", base_ttft_ms=ttft_ms)


def _page(wh: Warehouse, tmp_path: Path, frame: pl.DataFrame) -> str:
    wh.insert_frame("probe_results", frame, key="run_id")
    return _recommendations(
        render_report(wh, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    ).split("long context", 1)[0]


def test_two_providers_tied_within_their_intervals_get_no_pick(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """alpha and beta draw their TTFTs from one distribution: the old pick named
    whichever median came out lower by chance."""
    frame = probe_frame([_short("alpha", 400.0), _short("beta", 400.0)], end=NOW, days=20)
    short = _page(warehouse, tmp_path, frame)
    assert (
        "short context No clear pick alpha, beta are not analysed yet, so whether they are "
        "degraded is unknown" in short
    ), short
    assert "tied within the 95 % intervals" in short, short
    medians = re.findall(r"(alpha|beta) (\d+) ms \(95 % CI (\d+) ms–(\d+) ms, \d+ answers\)", short)
    assert len(medians) == 2, short
    (_, _, lo_a, hi_a), (_, _, lo_b, hi_b) = medians
    assert int(lo_b) <= int(hi_a) and int(lo_a) <= int(hi_b), medians  # the overlap told


def test_a_clear_pick_shows_its_margin(warehouse: Warehouse, tmp_path: Path) -> None:
    """alpha is 40 % faster: it is picked, with both medians and their intervals."""
    frame = probe_frame([_short("alpha", 300.0), _short("beta", 500.0)], end=NOW, days=20)
    short = _page(warehouse, tmp_path, frame)
    # no analysis run: whether it is degraded is unknown (it read "not in a degradation phase")
    assert "short context alpha not analysed yet, so whether it is degraded is unknown;" in short
    assert re.search(
        r"TTFT p50 \d+ ms \(95 % CI \d+ ms–\d+ ms, \d+ answers\) this week, clear of the "
        r"next fastest, beta \d+ ms \(95 % CI",
        short,
    ), short


def test_a_few_fast_answers_this_week_are_no_pick(warehouse: Warehouse, tmp_path: Path) -> None:
    """quick has a month of history (a baseline) but answered only 12 probes this week,
    fast ones: too few to rest a pick on; steady is picked and quick is named."""
    frame = probe_frame([_short("quick", 200.0), _short("steady", 500.0)], end=NOW, days=30)
    recent = (pl.col("provider") == "quick") & (pl.col("started_at") >= WEEK.start)
    kept = frame.filter(recent).gather_every(9)  # 12 answers, spread over the week
    frame = pl.concat([frame.filter(~recent), kept])
    short = _page(warehouse, tmp_path, frame)
    assert "short context steady " in short, short
    assert re.search(rf"Left out: quick, \d+ answers this week, under {MIN_PICK_ANSWERS}\.", short)
