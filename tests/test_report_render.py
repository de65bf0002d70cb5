"""The weekly report rendered from real DuckDB warehouses (no browser: see test_browser_*)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.config import Config, ReportConfig, WarehouseConfig
from pipeline.report import (
    IsoWeek,
    default_week,
    parse_week,
    render_report,
    render_weekly,
    report_link,
)
from pipeline.warehouse import Warehouse
from tests.support.report import (
    HOSTILE_TEXT,
    Series,
    insert_analysis,
    insert_hostile_rows,
    probe_frame,
)

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)
SERIES = [
    Series(p, f"{p}-{c}", c, base_ttft_ms=b)
    for p, b in (("alpha", 350.0), ("beta", 500.0))
    for c in ("short", "long")
]


def _fill(wh: Warehouse, series: list[Series], *, analysed: bool) -> None:
    degraded = (NOW - timedelta(days=30), NOW)
    frame = probe_frame(series, end=NOW, days=60, every_min=60, degraded=degraded)
    wh.insert_frame("probe_results", frame, key="run_id")
    if analysed:
        providers = sorted({s.provider for s in series})
        insert_analysis(wh, providers, end=NOW, degraded=degraded)


def _charts(html: str) -> set[str]:
    return set(re.findall(r'data-chart="([^"]+)"', html))


def test_full_report_has_every_block(warehouse: Warehouse, tmp_path: Path) -> None:
    _fill(warehouse, SERIES, analysed=True)
    path = render_report(warehouse, tmp_path / "out", week=WEEK, now=NOW)
    html = path.read_text(encoding="utf-8")
    assert path.name == "nerfwatch-2026-W47.html"
    assert 'id="synthetic-banner"' in html
    assert _charts(html) == {
        "ttft-0", "ttft-1", "penalty", "errors", "accuracy", "headroom", "heatmap", "cycle"
    }  # fmt: skip
    assert "Long-context issues" in html and "Long context got slower" in html
    # The severity says which TTFT it measures: long context for long-context issues.
    assert "long-context TTFT +38\u00a0% (95 % CI +30\u00a0% to +47\u00a0%)" in html
    assert "1 of 1 degradation onset(s) (100\u00a0%)" in html
    assert "alpha and other degraded on overlapping days (Jaccard 0.62" in html
    assert html.index('id="verdict"') < html.index('id="comparison"') < html.index('id="latency"')
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org", "")
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert 'href="nerfwatch-2026-W47.html"' in index


def test_model_text_is_escaped(warehouse: Warehouse, tmp_path: Path) -> None:
    _fill(warehouse, SERIES[:2], analysed=False)
    insert_hostile_rows(warehouse, "alpha", NOW - timedelta(hours=2))
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert HOSTILE_TEXT not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in html
    assert "upstream said &lt;script&gt;" in html


def test_empty_warehouse_gives_a_useful_page(warehouse: Warehouse, tmp_path: Path) -> None:
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert 'id="empty-note"' in html and "nerfwatch demo" in html
    assert "No probes were recorded in this week." in html
    assert "synthetic-banner" not in html and not _charts(html)


def test_without_analysis_the_report_says_so(warehouse: Warehouse, tmp_path: Path) -> None:
    _fill(warehouse, SERIES, analysed=False)
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert html.count("Not analysed yet") == 2
    assert "No finished analysis run" in html
    assert {"ttft-0", "ttft-1", "penalty", "errors", "accuracy"} <= _charts(html)
    assert "cycle" not in _charts(html)


def test_one_provider(warehouse: Warehouse, tmp_path: Path) -> None:
    _fill(warehouse, SERIES[:2], analysed=True)
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert "Only alpha is monitored" in html
    assert {"ttft-0", "heatmap", "accuracy"} <= _charts(html)


def test_daemon_gap_and_budget_skips_are_reported(warehouse: Warehouse, tmp_path: Path) -> None:
    frame = probe_frame(SERIES[:1], end=NOW, days=5, every_min=30, source="live")
    gap = (NOW - timedelta(hours=30), NOW - timedelta(hours=24))
    frame = frame.filter((frame["started_at"] < gap[0]) | (frame["started_at"] >= gap[1]))
    warehouse.insert_frame("probe_results", frame, key="run_id")
    skipped = {"provider": "alpha", "model": "m", "probe": "p", "task_family": "arithmetic",
               "run_status": "skipped", "skip_reason": "budget",
               "started_at": NOW - timedelta(minutes=5)}  # fmt: skip
    warehouse.insert_rows("probe_results", [{**skipped, "run_id": "r1"}], key="run_id")
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert "the daemon was probably down" in html
    assert "1 run(s) skipped or aborted (budget): alpha 1." in html
    assert "synthetic-banner" not in html


def test_verdict_dates_a_degradation_from_its_first_stage(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """Long-context issues that turned into a major degradation: one episode, two dates."""
    _fill(warehouse, SERIES, analysed=False)
    onset, escalated = NOW - timedelta(days=30), NOW - timedelta(days=4)
    insert_analysis(warehouse, ["alpha", "beta"], end=NOW, degraded=(onset, NOW),
                    escalated_at=escalated)  # fmt: skip
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert "Major degradation" in html
    # one "since" and where the episode began: "; degraded since" was a second "since"
    assert (
        "since 2026-11-16 (4 days), the latest stage of a degradation that began "
        "2026-10-21 (30 days ago)" in html
    )
    assert html.count("the latest stage of") == 1  # beta is stable: one date only
    assert "short-context TTFT +38\u00a0%" in html
    assert "Major degradation for 4 days (degraded for 30 days)" in html  # the release-cycle table


def test_a_forecast_without_a_window_says_why(warehouse: Warehouse, tmp_path: Path) -> None:
    _fill(warehouse, SERIES, analysed=True)
    why = "no forecast: example-4 was released 2026-11-10, after this degradation began"
    warehouse.execute(
        "UPDATE release_forecasts SET window_lo = NULL, window_hi = NULL, basis = ?", [why]
    )
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    assert f">{why}</td>" in html


def test_weeks() -> None:
    assert parse_week("2026-W47") == IsoWeek(2026, 47)
    assert WEEK.start == datetime(2026, 11, 16, tzinfo=UTC)
    assert default_week(datetime(2026, 11, 23, 8, tzinfo=UTC)) == WEEK  # Monday: last week
    assert default_week(datetime(2026, 11, 20, 8, tzinfo=UTC)) == WEEK
    for bad in ("2026-47", "2026-W54", "W47"):
        with pytest.raises(ValueError, match="week"):
            parse_week(bad)


def test_render_weekly_and_link(tmp_path: Path) -> None:
    config = Config(
        path=None,
        warehouse=WarehouseConfig(path=tmp_path / "w.duckdb", spool_dir=tmp_path / "spool"),
        providers=(),
        probes=(),
        report=ReportConfig(out_dir=tmp_path / "reports", link_base_url="https://r.example/nw/"),
    )
    path = render_weekly(config, WEEK)
    assert path == tmp_path / "reports" / "nerfwatch-2026-W47.html" and path.exists()
    assert report_link(config, path) == "https://r.example/nw/nerfwatch-2026-W47.html"


def test_cli(warehouse: Warehouse, tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["report", "--db", str(warehouse.path), "--out", str(tmp_path), "--week", "2026-W47"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(tmp_path / "nerfwatch-2026-W47.html")
    bad = runner.invoke(app, ["report", "--db", str(warehouse.path), "--week", "2026-47"])
    assert bad.exit_code == 2 and "--week" in bad.output


def test_index_lists_every_week_newest_first(warehouse: Warehouse, tmp_path: Path) -> None:
    _fill(warehouse, SERIES[:2], analysed=False)
    for week in (IsoWeek(2026, 45), WEEK, IsoWeek(2026, 46)):
        render_report(warehouse, tmp_path, week=week, now=NOW)
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'href="(nerfwatch-[^"]+)"', index)
    assert links == [f"nerfwatch-2026-W{n}.html" for n in (47, 46, 45)]
