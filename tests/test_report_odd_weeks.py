"""Reports of odd but possible weeks: nothing succeeded, answers without a TTFT, a week
the data has left behind, a past week seen through a later analysis, a year boundary, one
answer in a week, a rise in the last hours of a partial day.

Warehouses are real DuckDB files analysed by the real analysis run; every test pins the
report's ``now``.
"""

from __future__ import annotations

import html as html_lib
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from pipeline.analysis.orchestrate import run_analysis
from pipeline.report import IsoWeek, render_report
from pipeline.report.data import load_report_data
from pipeline.report.grid_charts import MIN_SCORED, accuracy_figure
from pipeline.report.severity import MIN_SEVERITY_HOURS
from pipeline.report.timeline import Timeline
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)


def _both(provider: str) -> list[Series]:
    return [
        Series(provider, f"{provider}-short", "short"),
        Series(provider, f"{provider}-long", "long"),
    ]


def _text(fragment: str) -> str:
    plain = html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).replace("\u00a0", " ")
    return re.sub(r"\s+", " ", plain).strip()


def _verdict(page: str, provider: str) -> str:
    return _text(page.split(f'data-provider="{provider}"', 1)[1].split("</section>", 1)[0])


def _recommendations(page: str) -> str:
    return _text(page.split('id="recommendations"', 1)[1].split('id="comparison"', 1)[0])


def _render(wh: Warehouse, tmp_path: Path, week: IsoWeek, now: datetime) -> str:
    run_analysis(wh)
    return render_report(wh, tmp_path, week=week, now=now).read_text(encoding="utf-8")


def test_successes_without_a_ttft_are_no_fastest_provider(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """alpha's answers this week carried no TTFT (the heatmap divided None by its
    median and the report crashed); it must not be picked as "the fastest" either."""
    frame = probe_frame(_both("alpha") + _both("beta"), end=NOW, days=60)
    blind = (pl.col("provider") == "alpha") & (pl.col("started_at") >= NOW - timedelta(days=30))
    warehouse.insert_frame("probe_results", frame.filter(~blind), key="run_id")
    no_ttft = frame.filter(blind).with_columns(ttft_ms=pl.lit(None, pl.Float64))
    warehouse.insert_frame("probe_results", no_ttft, key="run_id")
    page = _render(warehouse, tmp_path, WEEK, NOW)
    picks = _recommendations(page)
    assert "TTFT p50 –" not in picks, picks
    assert picks.count("beta not in a degradation phase") == 2, picks


def test_a_week_where_every_probe_failed_says_so(warehouse: Warehouse, tmp_path: Path) -> None:
    """Every probe of every provider failed, with every error class: no pick, and no
    "-103 more probes" asked of providers that ran 108 each."""
    classes = ["timeout_connect", "rate_limited", "overloaded", "server_error", "auth", "empty"]
    frame = probe_frame(_both("alpha") + _both("beta"), end=NOW, days=10)
    failed = frame.with_columns(
        error_class=pl.Series([classes[i % len(classes)] for i in range(frame.height)]),
        ttft_ms=pl.lit(None, pl.Float64),
        total_ms=pl.lit(None, pl.Float64),
        output_tokens_per_s=pl.lit(None, pl.Float64),
        score_strict=pl.lit(None, pl.Utf8),
    )
    warehouse.insert_frame("probe_results", failed, key="run_id")
    page = _render(warehouse, tmp_path, WEEK, NOW)
    picks = _recommendations(page)
    assert not re.search(r"-\d+ more", picks), picks
    assert "No provider answered a short-context probe" in picks, picks
    assert "alpha 0 of 108, beta 0 of 108" in picks, picks


def test_a_rate_that_rose_from_zero_reads_as_two_levels(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """No timeouts for 50 days, then every probe timed out: the change point's rate ratio
    rests on a zero-count correction (it read "+52709 %"); the report gives the levels."""
    frame = probe_frame(_both("alpha"), end=NOW, days=60)
    late = pl.col("started_at") >= WEEK.start
    timed_out = frame.filter(late).with_columns(
        error_class=pl.lit("timeout_first_token"),
        ttft_ms=pl.lit(None, pl.Float64),
        total_ms=pl.lit(None, pl.Float64),
        output_tokens_per_s=pl.lit(None, pl.Float64),
        score_strict=pl.lit(None, pl.Utf8),
    )
    warehouse.insert_frame("probe_results", pl.concat([frame.filter(~late), timed_out]))
    verdict = _verdict(_render(warehouse, tmp_path, WEEK, NOW), "alpha")
    assert "timeout rate went from 0.0 % to 100.0 %" in verdict, verdict
    assert not re.search(r"timeout.rate shifted", verdict), verdict


def test_a_past_week_at_the_year_end_is_judged_as_it_was(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """2026-W53 (Monday 2026-12-28 to Sunday 2027-01-03) rendered three weeks later, after
    an analysis that found a degradation from 2027-01-09: the week's verdict and its
    list of changes are about the week, not about what came after it."""
    week = IsoWeek(2026, 53)
    now = week.end + timedelta(days=20)
    degraded = (week.end + timedelta(days=5), now)
    frame = probe_frame(_both("alpha"), end=now, days=60, degraded=degraded)
    warehouse.insert_frame("probe_results", frame, key="run_id")
    page = _render(warehouse, tmp_path, week, now)
    verdict = _verdict(page, "alpha")
    assert "alpha-model Stable since" in verdict, verdict
    assert "Warning signs firing" not in verdict, verdict  # their window is 2027-01-20 on
    later = [d for d in re.findall(r"\d{4}-\d{2}-\d{2}", verdict) if d >= "2027-01-04"]
    assert not later, verdict


def test_a_provider_not_probed_for_months_gets_no_verdict(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The probes stopped on 2026-06-01: "Stable since April (232 days), high confidence"
    was a claim about November resting on nothing after May."""
    last = datetime(2026, 6, 1, tzinfo=UTC)
    frame = probe_frame(_both("alpha"), end=last, days=60)
    warehouse.insert_frame("probe_results", frame, key="run_id")
    verdict = _verdict(_render(warehouse, tmp_path, WEEK, NOW), "alpha")
    assert "No probes since 2026-05-31" in verdict, verdict
    assert "confidence" not in verdict and "Stable since" not in verdict, verdict


def test_probes_older_than_a_year_are_pointed_to(warehouse: Warehouse, tmp_path: Path) -> None:
    """A warehouse whose probes all lie more than a year before the week is not empty."""
    frame = probe_frame(_both("alpha"), end=datetime(2025, 6, 1, tzinfo=UTC), days=10)
    warehouse.insert_frame("probe_results", frame, key="run_id")
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    note = _text(page.split('id="empty-note"', 1)[1].split("</div>", 1)[0])
    assert "No probes recorded yet" not in note, note
    assert "nerfwatch report --week 2025-W22" in note, note


_FAILED = {
    "error_class": pl.lit("overloaded"),
    "ttft_ms": pl.lit(None, pl.Float64),
    "total_ms": pl.lit(None, pl.Float64),
    "output_tokens_per_s": pl.lit(None, pl.Float64),
    "score_strict": pl.lit(None, pl.Utf8),
}


def _one_answer_this_week(wh: Warehouse) -> None:
    """60 days of alpha and beta; from Monday every alpha probe failed but one, a
    short-context answer that was right."""
    frame = probe_frame(_both("alpha") + _both("beta"), end=NOW, days=60).with_row_index()
    outage = (pl.col("provider") == "alpha") & (pl.col("started_at") >= WEEK.start)
    kept = frame.filter(
        outage & (pl.col("context_class") == "short") & (pl.col("error_class") == "ok")
    )
    answer = pl.col("index") == kept["index"][0]
    failed = frame.filter(outage & ~answer).with_columns(**_FAILED)
    right = frame.filter(answer).with_columns(score_strict=pl.lit("correct"))
    rows = pl.concat([frame.filter(~outage), failed, right]).drop("index")
    wh.insert_frame("probe_results", rows, key="run_id")


def test_one_scored_answer_is_a_count_not_a_rate(warehouse: Warehouse, tmp_path: Path) -> None:
    """ "100.0 % (20.7–100.0)" was a rate and a 95 % interval from one answer, beside a
    TTFT "p50 / p95" of that answer twice. The table gives the count and the median; the
    accuracy chart leaves the day out, also of the axis it shares with beta (the answer's
    Wilson band reached down to 20.7 % and took the axis with it)."""
    _one_answer_this_week(warehouse)
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    table = _text(page.split('id="comparison"', 1)[1].split("</table>", 1)[0])
    alpha = table.split(" alpha ", 1)[1].split(" beta ", 1)[0]
    assert "1 of 1 correct (too few to judge)" in alpha and "100.0 %" not in alpha, table
    assert re.search(r"beta .* \d+\.\d % \(\d+\.\d–\d+\.\d\)", table), table  # 200 scored
    assert f"fewer than {MIN_SCORED} scored answers are left out" in _text(page)
    # The one answer's TTFT is its median; a p95 of one answer would only repeat it.
    assert re.search(r"\d+ ms / \S \(1 answer, too few for a p95\)", alpha), alpha
    latency = r"[\d.]+ m?s / [\d.]+ m?s"
    assert re.search(rf"beta \d+ [\d.]+ % {latency} {latency} ", table), table
    data = load_report_data(warehouse, WEEK, now=NOW)
    window = Timeline.for_week((WEEK.start, WEEK.end), now=NOW, first_data=None)
    fig = accuracy_figure(data.accuracy_daily, ["alpha", "beta"], timeline=window)
    assert fig is not None and fig.axes[0].get_ylim()[0] >= 70, fig.axes[0].get_ylim()


def test_an_outage_is_sized_by_its_failures_not_its_few_answers(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The same outage analysed: a major degradation whose TTFT severity rested on the
    13 answers of its phase (12 from the healthy hours before the failures, one after),
    printed as "short-context TTFT +10 % (95 % CI +9 % to +12 %)" beside a week-over-week
    TTFT line from the one answer. The verdict now says how many probes failed and that
    the answers are too few to size a latency change. (Since the phase is dated at the
    failures' start, ``changepoints.edges``, its one answer leaves the analysis nothing to
    size at all; the failures are still told.)"""
    _one_answer_this_week(warehouse)
    verdict = _verdict(_render(warehouse, tmp_path, WEEK, NOW), "alpha")
    assert "Major degradation" in verdict, verdict
    failed = re.search(r"(\d+) of (\d+) probes failed", verdict)
    assert failed and int(failed[1]) >= 0.85 * int(failed[2]), verdict
    hours = re.search(r"TTFT change not sized: answers in only (\d+) hours", verdict)
    assert hours and int(hours[1]) < MIN_SEVERITY_HOURS, verdict
    assert not re.search(r"TTFT [+-]\d+ %", verdict), verdict
    assert "severity 95 % CI" not in verdict and "TTFT p50" not in verdict, verdict
    assert re.search(r"(moderate|high) confidence", verdict), verdict  # sized by failures


def _rise_on_the_last_day(wh: Warehouse, end: datetime) -> None:
    """60 days of alpha up to ``end``; busy errors on every probe from 2026-11-20 00:00."""
    frame = probe_frame(_both("alpha"), end=end, days=60)
    rise = pl.col("started_at") >= datetime(2026, 11, 20, tzinfo=UTC)
    failed = frame.filter(rise).with_columns(**_FAILED)
    wh.insert_frame("probe_results", pl.concat([frame.filter(~rise), failed]), key="run_id")


def test_a_rate_change_resting_on_a_partial_day_is_provisional(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The data end at noon of the day the busy errors began: a daily rate of 12 hours,
    counted as a whole day, is what the change point rests on. It is dated on that day
    (not at the search's limit four days earlier: ``changepoints.edges``) and marked
    provisional, with the hours; those 12 hours were probed and failed, which is said
    too (``last_day``: they are the outage, not missing data)."""
    _rise_on_the_last_day(warehouse, NOW)
    verdict = _verdict(_render(warehouse, tmp_path, WEEK, NOW), "alpha")
    assert re.search(
        r"busy-error rate went from [^(]+ on 2026-11-20 \(change point, provisional: last day "
        r"2026-11-20 partial: data end at 12:00 UTC, 12 of 24 hours; probes ran and failed "
        r"in all 12 probed hours\)",
        verdict,
    ), verdict


def test_a_rate_change_on_whole_days_is_not_provisional(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The same rise with its day complete (the data end at midnight)."""
    end = datetime(2026, 11, 21, tzinfo=UTC)
    _rise_on_the_last_day(warehouse, end)
    verdict = _verdict(_render(warehouse, tmp_path, WEEK, end), "alpha")
    assert re.search(r"busy-error rate went from .* \(change point\)", verdict), verdict
    assert "provisional" not in verdict, verdict
