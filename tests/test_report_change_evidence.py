"""A change point is listed in a verdict's "this week" only when its own test supports it.

The demo's nova card read "Long-context TTFT p50 shifted +40 % on 2026-11-28 (change
point)": the search had put a break on the last hour (one hour of live probes), and the
stored test of that break gave p = 0.79. Here the stored analysis holds three change
points in the report's week: one the test supports (p = 0.001), one it does not (p = 0.79)
and an online alarm (no p-value; the monitor's false alarms are bounded by its ARL). The
warehouse is a real DuckDB file; ``now`` is pinned.
"""

from __future__ import annotations

import html as html_lib
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.report import Series, insert_analysis, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)


def _change(aid: str, metric: str, ctx: str, at: datetime, effect: float, **kw: object) -> dict:
    return {
        "analysis_id": aid, "provider": "alpha", "model": "alpha-model", "metric": metric,
        "context_class": ctx, "at": at, "level_before": 1000.0,
        "level_after": 1000.0 * (1 + effect), "effect": effect, "effect_lo": effect - 0.05,
        "effect_hi": effect + 0.05, "detector": "offline", "detected_at": None, **kw,
    }  # fmt: skip


def _verdict(page: str) -> str:
    card = page.split('data-provider="alpha"', 1)[1].split("</section>", 1)[0]
    plain = html_lib.unescape(re.sub(r"<[^>]+>", " ", card)).replace("\u00a0", " ")
    return re.sub(r"\s+", " ", plain)


def test_a_change_point_its_test_does_not_support_is_not_listed(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    series = [Series("alpha", "alpha-short", "short"), Series("alpha", "alpha-long", "long")]
    warehouse.insert_frame("probe_results", probe_frame(series, end=NOW, days=30), key="run_id")
    aid = insert_analysis(warehouse, ["alpha"], end=NOW, degraded=(NOW - timedelta(days=2), NOW))
    monday = datetime(2026, 11, 16, tzinfo=UTC)
    rows = pl.DataFrame(
        [
            _change(aid, "ttft_p50_ms", "long", NOW - timedelta(hours=1), 0.40, pvalue=0.79),
            _change(aid, "ttft_p95_ms", "short", monday + timedelta(hours=5), 0.30, pvalue=0.001),
            _change(
                aid, "output_tps_p50", "long", monday + timedelta(days=1), -0.20,
                pvalue=None, detector="online", detected_at=monday + timedelta(days=2),
            ),
        ],
        infer_schema_length=None,
    )  # fmt: skip
    warehouse.insert_frame("change_points", rows)
    page = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    verdict = _verdict(page)
    assert "Short-context TTFT p95 shifted +30 % on 2026-11-16 (change point)" in verdict, verdict
    assert "Long-context output speed shifted -20 % on 2026-11-17" in verdict, verdict
    assert "TTFT p50 shifted +40 %" not in verdict, verdict
