"""Week-over-week lines: an interval over days, and a line only when it excludes no change.

The card printed "Short-context error rate 7.1 % → 9.3 %" for a provider whose two weeks
came from one distribution (hourly probes, one error in a hundred): the footer called the
lines descriptive, but a reader takes them as changes. Most of 25 unchanged providers
had such a line.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from pipeline.report import IsoWeek, render_report
from pipeline.report.week_moves import _rank_k, shift_interval, week_moves
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)  # Friday noon of 2026-W47
SAME = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]
WEEK = IsoWeek(2026, 47)
SEEDS = 100


def test_the_interval_is_moses_from_the_exact_mann_whitney_table() -> None:
    """7 days against 7 at 95 %: the tables reject for U <= 8 (P = 0.0189), so the
    interval runs from the 9th to the 41st of the 49 sorted differences."""
    assert _rank_k(7, 7, 0.05) == 9
    before = [float(i) for i in range(7)]
    after = [10.0 * i for i in range(7)]
    diffs = sorted(a - b for a in after for b in before)
    shift = shift_interval(before, after, alpha=0.05)
    assert shift is not None and (shift.lo, shift.hi) == (diffs[8], diffs[40])
    assert shift.estimate == diffs[24]


def test_three_days_cannot_show_a_move() -> None:
    """A week three days old: no arrangement of 3 days against 7 is rare enough at the
    card's level (1 in 120 > 0.625 %), so there is no interval and no line."""
    assert shift_interval([1.0] * 7, [5.0, 6.0, 7.0], alpha=0.05 / 4) is None


def _days(
    rng: np.random.Generator, *, shift: float = 0.0, error: float = 0.01, hourly_sd: float = 0.12
) -> pl.DataFrame:
    """Two weeks of hourly probes of one provider, aggregated per day as ``class_days``:
    TTFT lognormal around a daily cycle, with a level of its own each day and AR(1)
    noise from hour to hour (correlated probes), errors at a rate that varies by day.
    ``shift`` multiplies this week's TTFT by 1 + shift."""
    start = datetime(2026, 11, 9, tzinfo=UTC)
    rows = []
    for cls, base in (("short", 400.0), ("long", 1500.0)):
        noise = 0.0
        for d in range(14):
            day_level = rng.normal(0, 0.05)
            rate = error * math.exp(rng.normal(0, 0.3))
            ttfts, ok = [], 0
            for h in range(24):
                noise = 0.6 * noise + rng.normal(0, hourly_sd)
                cycle = 1 + 0.25 * math.sin((h - 9) / 24 * 2 * math.pi)
                scale = 1 + shift if d >= 7 else 1.0
                if rng.random() >= rate:
                    ok += 1
                    ttfts.append(base * cycle * scale * math.exp(day_level + noise))
            day = start + timedelta(days=d)
            rows.append((cls, day, 24, ok, float(np.median(ttfts)) if ttfts else None))
    return pl.DataFrame(
        rows, schema=["context_class", "day", "n", "n_ok", "ttft_p50"], orient="row"
    )


def test_no_change_shows_no_line_in_95_of_100_weeks() -> None:
    rng = np.random.default_rng(20261123)
    week_start = datetime(2026, 11, 16, tzinfo=UTC)
    noisy = [week_moves(_days(rng), week_start=week_start) for _ in range(SEEDS)]
    alarms = [lines for lines in noisy if lines]
    assert len(alarms) <= 5, alarms[:3]


def test_a_30_percent_slowdown_is_mentioned_with_its_interval() -> None:
    """Power, under this noise (a daily median's log wobbles by about 0.07 from day to
    day): 58 of 60 weeks found it when this was written; with twice the hourly noise,
    43 of 60. Each found line's interval holds the true +30 %."""
    rng = np.random.default_rng(7)
    week_start = datetime(2026, 11, 16, tzinfo=UTC)
    found = 0
    for _ in range(20):
        lines = week_moves(_days(rng, shift=0.30), week_start=week_start)
        short = [x for x in lines if x.startswith("Short-context daily TTFT p50")]
        found += bool(short)
        for line in short:
            ci = re.search(r"95\u00a0% joint CI \+(\d+)\u00a0% to \+(\d+)\u00a0%", line)
            assert ci and int(ci[1]) <= 30 <= int(ci[2]) + 5, line
    assert found >= 18, found


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real warehouse: six providers alike over 30 days of hourly probes (slow, with
    8 % errors, the same in both weeks; the old card had a line for five of them), and
    'slowed' whose last week ran 20 % slower (60 % on long context). (Its errors, 1.5 %
    to 8 % on 24 probes a day, are too few per day for the test over days to tell.)"""
    tmp = tmp_path_factory.mktemp("moves")
    wh = Warehouse(tmp / "nerfwatch.duckdb")
    wh.migrate()
    same = [Series(p, f"{p}-{c}", c) for p in SAME for c in ("short", "long")]
    slowed = [Series("slowed", f"slowed-{c}", c) for c in ("short", "long")]
    frames = [
        probe_frame(same, end=NOW, days=30, degraded=(NOW - timedelta(days=30), NOW)),
        probe_frame(slowed, end=NOW, days=30, degraded=(WEEK.start, NOW), seed=1),
    ]
    wh.insert_frame("probe_results", pl.concat(frames), key="run_id")
    return render_report(wh, tmp / "out", week=WEEK, now=NOW).read_text("utf-8")


def _this_week(page: str, provider: str) -> str:
    card = page.split(f'data-provider="{provider}"', 1)[1].split("</section>", 1)[0]
    return card.split("This week", 1)[1]


def test_unchanged_providers_have_no_moved_line(page: str) -> None:
    for provider in SAME:
        week = _this_week(page, provider)
        assert "No notable change this week." in week, (provider, week)


def test_a_slowed_provider_s_lines_carry_their_interval(page: str) -> None:
    """Its +60 % on long context is told with its interval. (Its +20 % on short context,
    over the 5 days so far against 7, is within what days vary by at the card's level.)"""
    week = _this_week(page, "slowed")
    assert re.search(r"Long-context daily TTFT p50 [^<]* \(\+\d+\u00a0% vs last week, 95", week)
