"""Reports of odd but possible weeks: nothing succeeded, answers without a TTFT, a week
the data has left behind, a past week seen through a later analysis, a year boundary.

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
