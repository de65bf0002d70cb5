"""An outage under way at the end of the data is said first on the card, whatever the
phases (which need days to form) call the stretch, and the failing provider is not where
traffic is sent. Real DuckDB file, real analysis run, pinned ``now``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from pipeline.analysis.orchestrate import run_analysis
from pipeline.report import render_report
from pipeline.report.failing_now import failing_now
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame
from tests.test_report_odd_weeks import _FAILED, NOW, WEEK, _text


def _card(page: str, provider: str) -> tuple[str, str]:
    """(class attribute, text) of a provider's verdict card."""
    head, rest = page.split(f'data-provider="{provider}"', 1)
    classes = head.rsplit("<section", 1)[1]
    return classes, _text(rest.split("</section>", 1)[0])


def test_the_last_hours_all_failed_is_said_first_and_not_recommended(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """alpha, the faster of two stable providers, failed every probe of its last 18 hours.
    Probed hourly, its card read "Stable since 2026-09-21 ... high confidence" (the
    stretch is too short for a phase of its own); now the failures come first, whatever
    the phases say, and the card is coloured as bad."""
    series = [
        Series("alpha", "alpha-short", "short", base_ttft_ms=300.0),
        Series("alpha", "alpha-long", "long", base_ttft_ms=300.0),
        Series("beta", "beta-short", "short", base_ttft_ms=500.0),
        Series("beta", "beta-long", "long", base_ttft_ms=500.0),
    ]
    frame = probe_frame(series, end=NOW, days=60)
    down = (pl.col("provider") == "alpha") & (pl.col("started_at") >= NOW - timedelta(hours=18))
    rows = pl.concat([frame.filter(~down), frame.filter(down).with_columns(**_FAILED)])
    warehouse.insert_frame("probe_results", rows, key="run_id")
    run_analysis(warehouse)
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")

    classes, alpha = _card(page, "alpha")
    assert "bad" in classes, classes
    assert "alpha alpha-model Failing now All " in alpha, alpha
    assert " phase since 2026-" in alpha, alpha
    failing = re.search(r"All (\d+) probes since (\S+ \S+) UTC failed \((\d+)", alpha)
    assert failing, alpha
    assert int(failing[1]) == frame.filter(down).height and failing[3] == "18", alpha
    assert failing[2] == "2026-11-19 18:00", alpha
    assert "Failing now" not in _card(page, "beta")[1] and "All " not in _card(page, "beta")[1]
    picks = _text(page.split('id="recommendations"', 1)[1].split('id="comparison"', 1)[0])
    assert picks.count("beta not in a degradation phase") == 2, picks


def _hours(*rows: tuple[int, int, int]) -> pl.DataFrame:
    start = datetime(2026, 11, 20, tzinfo=UTC)
    return pl.DataFrame(
        {
            "hour": [start + timedelta(hours=h) for h, _, _ in rows],
            "n": [n for _, n, _ in rows],
            "n_ok": [ok for _, _, ok in rows],
        }
    )


def test_one_bad_hour_or_two_lost_probes_are_no_outage() -> None:
    assert failing_now(_hours((0, 3, 3), (1, 3, 3), (2, 3, 0))) is None  # one hour
    assert failing_now(_hours((0, 3, 3), (3, 1, 0), (6, 1, 0))) is None  # two probes


def test_hours_without_probes_neither_break_nor_count_in_the_run() -> None:
    found = failing_now(_hours((0, 2, 2), (1, 2, 0), (2, 0, 0), (5, 2, 0)))
    assert found is not None
    assert (found.hours, found.probes) == (2, 4)
    assert found.since.hour == 1 and found.until.hour == 5 and found.last_answer.hour == 0
    never = failing_now(_hours((0, 2, 0), (1, 2, 0)))
    assert never is not None and never.last_answer is None
    assert "none has answered" in never.words()
