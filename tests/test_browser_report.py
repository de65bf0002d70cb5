"""The weekly report opened in headless Chromium: offline, quiet, complete and inert."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.browser import PageVisit, visit
from tests.support.report import Series, insert_analysis, insert_hostile_rows, probe_frame

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)
CHARTS = {
    "ttft-0",
    "ttft-1",
    "ttft-2",
    "penalty",
    "errors",
    "accuracy",
    "headroom",
    "heatmap",
    "cycle",
}


def _report(tmp: Path, providers: list[tuple[str, float]], *, analysed: bool) -> Path:
    wh = Warehouse(tmp / "nerfwatch.duckdb")
    wh.migrate()
    if providers:
        series = [
            Series(p, f"{p}-{c}", c, base_ttft_ms=b)
            for p, b in providers
            for c in ("short", "long")
        ]
        degraded = (NOW - timedelta(days=30), NOW)
        frame = probe_frame(series, end=NOW, days=120, every_min=60, degraded=degraded)
        wh.insert_frame("probe_results", frame, key="run_id")
        insert_hostile_rows(wh, providers[0][0], NOW - timedelta(hours=2))
        if analysed:
            insert_analysis(wh, [p for p, _ in providers], end=NOW, degraded=degraded)
    return render_report(wh, tmp / "reports", week=WEEK, now=NOW)


def _assert_quiet(seen: PageVisit, path: Path) -> None:
    assert seen.requests == [path.resolve().as_uri()], "the report must not fetch anything"
    assert seen.console == [] and seen.errors == []


def _chart_boxes(page: Any) -> dict[str, float]:
    return page.eval_on_selector_all(
        "svg.chart",
        "els => Object.fromEntries(els.map(e => [e.dataset.chart, "
        "e.getBoundingClientRect().height]))",
    )


def test_full_report(browser: Any, tmp_path: Path) -> None:
    path = _report(tmp_path, [("alpha", 350), ("beta", 500), ("gamma", 420)], analysed=True)
    seen = visit(browser, path, screenshot="report-full.png")
    _assert_quiet(seen, path)
    page: Any = seen.page
    boxes = _chart_boxes(page)
    assert set(boxes) == CHARTS
    assert all(height > 80 for height in boxes.values()), boxes
    assert page.locator("#synthetic-banner").is_visible()
    first = page.locator("section.verdict").first
    assert first.get_attribute("data-provider") == "alpha"
    assert first.bounding_box()["y"] < 900, "the verdict must be on the first screen"
    page.screenshot(path=str(Path(__file__).parents[1] / "test-artifacts" / "report-top.png"))


def test_model_text_stays_inert(browser: Any, tmp_path: Path) -> None:
    path = _report(tmp_path, [("alpha", 350), ("beta", 500)], analysed=False)
    seen = visit(browser, path)
    _assert_quiet(seen, path)
    page: Any = seen.page
    assert page.evaluate("document.scripts.length") == 0
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("#examples b, #examples img, details b, details img").count() == 0
    page.locator("h2#examples + details > summary").click()
    texts = page.locator(".example-text").all_inner_texts()
    assert any("<script>window.__pwned = 1</script><b>bold</b>" in t for t in texts)
    assert any(t.startswith("upstream said <script>") for t in texts)


def test_empty_warehouse(browser: Any, tmp_path: Path) -> None:
    path = _report(tmp_path, [], analysed=False)
    seen = visit(browser, path, screenshot="report-empty.png")
    _assert_quiet(seen, path)
    page: Any = seen.page
    assert page.locator("#empty-note").is_visible()
    assert "nerfwatch demo" in page.locator("#empty-note").inner_text()
    index = visit(browser, path.parent / "index.html")
    assert index.console == [] and index.page.locator("a", has_text="2026-W47").count() == 1  # type: ignore[attr-defined]


def test_one_provider(browser: Any, tmp_path: Path) -> None:
    path = _report(tmp_path, [("solo", 400)], analysed=True)
    seen = visit(browser, path, screenshot="report-one-provider.png")
    _assert_quiet(seen, path)
    page: Any = seen.page
    assert {"ttft-0", "penalty", "accuracy", "heatmap", "cycle"} <= set(_chart_boxes(page))
    assert "Only solo is monitored" in page.locator("#recommendations + .recs").inner_text()


def test_report_of_simulated_history_with_real_analysis(browser: Any, tmp_path: Path) -> None:
    """The simulator's history generator and the real analysis feed the report."""
    from pipeline.analysis.orchestrate import run_analysis
    from probes.simulator import configure
    from probes.simulator.store import write_history

    wh = Warehouse(tmp_path / "nerfwatch.duckdb")
    wh.migrate()
    write_history(wh, configure(None), days=45, end=NOW)
    run_analysis(wh)
    path = render_report(wh, tmp_path / "reports", week=WEEK, now=NOW)
    seen = visit(browser, path, screenshot="report-simulated-history.png")
    _assert_quiet(seen, path)
    page: Any = seen.page
    charts = set(_chart_boxes(page))
    assert {"ttft-0", "ttft-1", "ttft-2", "penalty", "errors", "accuracy", "heatmap"} <= charts
    verdicts = page.locator("section.verdict .status").all_inner_texts()
    assert len(verdicts) == 3 and not any("Not analysed" in v for v in verdicts)
