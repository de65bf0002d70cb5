"""Week-over-week lines: a test over days, and a false-alarm budget for the whole report.

The card printed "Short-context error rate 7.1 % → 9.3 %" for a provider whose two weeks
came from one distribution; then each card got a 5 % budget of its own, and 25
unchanged providers still showed about 0.6 false lines a week: a user with many
providers saw a false "latency up" most weeks. Lines are now chosen across the report
(Benjamini-Hochberg) with false-coverage-adjusted intervals (Benjamini-Yekutieli).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
from scipy import stats
from scipy.signal import lfilter

from pipeline.report import IsoWeek, render_report
from pipeline.report.data import load_report_data
from pipeline.report.week_moves import FDR, week_moves, welch
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)  # Friday noon of 2026-W47
SAME = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]
WEEK = IsoWeek(2026, 47)
WEEK_START = datetime(2026, 11, 16, tzinfo=UTC)
PROVIDERS = 25
SEEDS = 100


def test_welch_is_scipy_s_welch_test() -> None:
    """Guard: without a floor, the p-value and interval are scipy's Welch t-test."""
    rng = np.random.default_rng(3)
    before, after = rng.normal(0, 1, 7), rng.normal(0.8, 2, 5)
    mine = welch(before.tolist(), after.tolist())
    theirs = stats.ttest_ind(after, before, equal_var=False)
    ci = theirs.confidence_interval(0.99)
    assert mine.pvalue() == pytest.approx(theirs.pvalue)
    assert mine.interval(0.01) == pytest.approx((ci.low, ci.high))


def test_days_without_errors_are_not_certainty() -> None:
    """Guard: no error on last week's days and one a day this week have no spread at
    all, so a plain Welch test calls it certain (p = 0). Floored at the binomial spread
    of the pooled rate, it is a change of 4 points that 24 probes a day barely see."""
    before, after = [0.0] * 7, [1 / 24] * 5
    pooled = 5 / (24 * 12)
    floored = welch(before, after, floor_var=pooled * (1 - pooled) / 24)
    assert floored.pvalue() > 0.001


def _days(
    rng: np.random.Generator,
    *,
    provider: str = "p",
    shift: float = 0.0,
    error: float = 0.01,
    hourly_sd: float = 0.12,
    days_this_week: int = 7,
) -> pl.DataFrame:
    """Two weeks of hourly probes of one provider, aggregated per day as ``class_days``:
    TTFT lognormal around a daily cycle, with a level of its own each day and AR(1)
    noise from hour to hour (correlated probes), errors at a rate that varies by day.
    ``shift`` multiplies this week's TTFT by 1 + shift."""
    n_days = 7 + days_this_week
    hour = np.arange(24)
    cycle = 1 + 0.25 * np.sin((hour - 9) / 24 * 2 * np.pi)
    scale = np.where(np.arange(n_days) >= 7, 1 + shift, 1.0)[:, None]
    days = [WEEK_START + timedelta(days=d - 7) for d in range(n_days)]
    frames = []
    for cls, base in (("short", 400.0), ("long", 1500.0)):
        noise = lfilter([1.0], [1.0, -0.6], rng.normal(0, hourly_sd, n_days * 24))
        level = rng.normal(0, 0.05, n_days)[:, None]
        ttft = base * cycle * scale * np.exp(level + noise.reshape(n_days, 24))
        rate = error * np.exp(rng.normal(0, 0.3, n_days))[:, None]
        ok = rng.random((n_days, 24)) >= rate
        p50 = [float(np.median(t[k])) if k.any() else None for t, k in zip(ttft, ok, strict=True)]
        frames.append(
            pl.DataFrame(
                {
                    "provider": provider,
                    "context_class": cls,
                    "day": days,
                    "n": 24,
                    "n_ok": ok.sum(axis=1),
                    "ttft_p50": p50,
                }
            )
        )
    return pl.concat(frames)


def _report_days(rng: np.random.Generator, *, slowed: str | None = None) -> pl.DataFrame:
    names = [f"prov{i:02d}" for i in range(PROVIDERS)]
    return pl.concat([_days(rng, provider=p, shift=0.30 if p == slowed else 0.0) for p in names])


def test_25_unchanged_providers_show_a_false_line_in_at_most_5_percent_of_reports() -> None:
    """With a budget per card, about a third of such reports had a false line (13 of
    the first 40 of these seeds, through the old per-card code); across the report at
    5 %, at most about 5 of 100 do (9 allows for chance; 6 when this was written)."""
    rng = np.random.default_rng(20261123)
    false = [
        sum(len(x) for x in week_moves(_report_days(rng), week_start=WEEK_START).lines.values())
        for _ in range(SEEDS)
    ]
    assert sum(n > 0 for n in false) <= 9, false


def test_a_30_percent_slowdown_in_one_of_25_providers_is_shown_in_most_reports() -> None:
    """Power: the daily median's log wobbles by about 0.07 from day to day, so +30 %
    (0.26 on a log scale) stands out even at the report's level. Each shown line's
    interval holds the true +30 %."""
    rng = np.random.default_rng(7)
    found = 0
    for _ in range(20):
        moves = week_moves(_report_days(rng, slowed="prov03"), week_start=WEEK_START)
        short = [x for x in moves.lines.get("prov03", []) if x.startswith("Short-context daily")]
        found += bool(short)
        for line in short:
            ci = re.search(r"adjusted 95\u00a0% CI \+(\d+)\u00a0% to \+(\d+)\u00a0%", line)
            assert ci and int(ci[1]) <= 30 <= int(ci[2]), line
    assert found >= 16, found


def test_too_few_days_are_said_not_compared() -> None:
    """Monday and Tuesday of a new week: no test, and the card says so rather than
    implying no change."""
    moves = week_moves(_days(np.random.default_rng(1), days_this_week=2), week_start=WEEK_START)
    assert moves.lines == {}
    assert any("not compared with last week: 2 days this week" in n for n in moves.notes["p"])


def test_thin_error_rates_say_what_they_could_not_see() -> None:
    """24 probes a day at 1 % errors: a change of a few points cannot be told from
    noise, so the card says how big a change it could have seen."""
    moves = week_moves(_days(np.random.default_rng(2)), week_start=WEEK_START)
    note = " ".join(moves.notes["p"])
    assert re.search(r"too few probes a day to show a change smaller than about \d+ points", note)


def test_the_budget_is_the_report_s() -> None:
    """Guard: every provider's TTFT comparisons count against one budget; an error rate
    at 24 probes a day mostly cannot show a change of 2 points even at 5 %, so it is
    not tested (which spends no budget on it) and its card says so."""
    moves = week_moves(_report_days(np.random.default_rng(5)), week_start=WEEK_START)
    assert PROVIDERS * 2 <= moves.tested < PROVIDERS * 4 and FDR == 0.05
    assert any("Error rate vs last week" in " ".join(n) for n in moves.notes.values())


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """A real warehouse: six providers alike over 30 days of hourly probes (slow, with
    8 % errors, the same in both weeks; the first card had a line for five of them), and
    'slowed' whose last week ran 20 % slower (60 % on long context), 1.5 % errors to 8 %."""
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
    return wh


@pytest.fixture(scope="module")
def page(warehouse: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("moves-out")
    return render_report(warehouse, out, week=WEEK, now=NOW).read_text("utf-8")


def _this_week(page: str, provider: str) -> str:
    card = page.split(f'data-provider="{provider}"', 1)[1].split("</section>", 1)[0]
    return card.split("This week", 1)[1]


def test_unchanged_providers_have_no_moved_line(page: str) -> None:
    for provider in SAME:
        week = _this_week(page, provider)
        assert "No notable change this week." in week, (provider, week)


def test_a_slowed_provider_s_lines_carry_their_interval(page: str) -> None:
    """Its +60 % on long context is told with its adjusted interval. (Its +20 % on short
    context, over the 5 days so far against 7, is within what days vary by at the
    report's level.)"""
    week = _this_week(page, "slowed")
    assert re.search(
        r"Long-context daily TTFT p50 [^<]* \(\+\d+\u00a0% vs last week, adjusted 95", week
    ), week


def test_the_footer_says_what_is_controlled(page: str) -> None:
    footer = page.split("<footer>", 1)[1]
    assert "at most 5 % of the lines shown are false alarms" in footer
    assert re.search(r"This week \d+ comparisons across the report were tested", footer)


def test_many_unchanged_providers_in_a_real_warehouse_stay_within_the_rate(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """25 unchanged providers in one real file, read week by week the report's way:
    eight weekly reports; at 5 % a report, more than two with a false line would
    be rare (1 in 170). A budget per card gave about 0.6 false lines a report."""
    wh = Warehouse(tmp_path_factory.mktemp("many") / "nerfwatch.duckdb")
    wh.migrate()
    names = [f"prov{i:02d}" for i in range(PROVIDERS)]
    series = [Series(p, f"{p}-{c}", c) for p in names for c in ("short", "long")]
    end = IsoWeek(2026, 47).end
    wh.insert_frame("probe_results", probe_frame(series, end=end, days=63, seed=11), key="run_id")
    false = []
    for w in range(40, 48):
        week = IsoWeek(2026, w)
        data = load_report_data(wh, week, now=week.end)
        moves = week_moves(data.class_days, week_start=week.start)
        assert moves.tested >= PROVIDERS * 2, moves.summary()
        false.append(sum(len(x) for x in moves.lines.values()))
    assert sum(n > 0 for n in false) <= 2, false


def test_weeks_of_nothing_but_errors_have_nothing_to_test() -> None:
    """Guard: every probe of both weeks failed, so every day's rate is 1 with no spread
    (the comparison divided by a zero spread)."""
    days = _days(np.random.default_rng(4), error=1e9)
    assert days["n_ok"].sum() == 0
    moves = week_moves(days, week_start=WEEK_START)
    assert moves.tested == 0 and moves.lines == {}
