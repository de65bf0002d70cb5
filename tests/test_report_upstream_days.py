"""The upstream-mix words count days with probes against the window they fall in.

The analysis counts only the days with calls in each window, and wrote "(48 calls on the
last 1 days)" for a router probed on one day of the three-day window: a reader takes that
for the last day of steady probing, or, with "3", for three days of calls. The report
says both numbers. Real path: a DuckDB file, ``run_analysis``, ``render_report``, ``now``
pinned (``tests.test_upstream_mix``).
"""

from __future__ import annotations

import html as html_lib
import re
from datetime import timedelta
from pathlib import Path

from pipeline.report.upstream_words import served_by
from pipeline.warehouse import Warehouse
from tests.test_report_odd_weeks import _render as render
from tests.test_report_odd_weeks import _verdict as verdict
from tests.test_upstream_mix import END, SPLIT, WEEK
from tests.test_upstream_mix import _router as router

LABEL = "Response metadata changed (model name, token counts)"


def _hover(page: str, provider: str) -> list[str]:
    card = page.split(f'data-provider="{provider}"', 1)[1].split("</section>", 1)[0]
    return [html_lib.unescape(t) for t in re.findall(r'<li title="([^"]*)"', card)]


def test_one_day_with_probes_in_the_recent_window_is_said_so(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The router was not probed on the first two days of the recent window, nor on three
    baseline days; a new model name makes the sign fire with the mix's words in it."""
    router(warehouse, (0.2, 0.95), renamed="router-model-2")
    for lo, days in ((SPLIT, 2), (SPLIT - timedelta(days=20), 3)):
        warehouse.execute(
            "DELETE FROM probe_results WHERE started_at >= ? AND started_at < ?",
            [lo, lo + timedelta(days=days)],
        )
    page = render(warehouse, tmp_path, WEEK, END)
    card = verdict(page, "router")
    recent = "(48 calls on 1 day with probes in the last 3)"
    before = "(1,200 calls on 25 days with probes in the 28 before)"
    assert f"{before} \u2192 Together 90 %, DeepInfra 10 % {recent}" in card, card
    assert "on the last 1 days" not in card
    (detail,) = [t for t in _hover(page, "router") if "served by" in t]
    assert recent in detail and before in detail and "days)" not in detail, detail
    assert "(windows:" not in card and "(windows:" not in detail, (card, detail)


def test_whole_windows_say_each_day() -> None:
    detail = (
        "upstream_provider served by A 80 % (1,344 calls on 28 days) -> B 95 % "
        "(144 calls on the last 3 days), 70 % of calls moved (p=0.001)"
    )
    row = {
        "window_start": END - timedelta(days=3),
        "window_end": END,
        "baseline_start": END - timedelta(days=31),
        "baseline_end": END - timedelta(days=3),
    }
    assert served_by(detail, row) == (
        "served by A 80 % (1,344 calls on each of the 28 days before) \u2192 B 95 % "
        "(144 calls on each of the last 3 days), 70 % of calls moved"
    )


def test_the_windows_the_detail_states_are_read_from_it() -> None:
    """The analysis states its windows (37c8283); a row without bounds still gets them,
    and the clause itself is not shown twice."""
    detail = (
        "upstream_provider served by A 80 % (400 calls on 10 days) -> B 95 % "
        "(48 calls on the last 1 days), 70 % of calls moved (windows: the last 3 days "
        "against the 28 before) (p=0.001)"
    )
    assert served_by(detail, {}) == (
        "served by A 80 % (400 calls on 10 days with probes in the 28 before) \u2192 B 95 % "
        "(48 calls on 1 day with probes in the last 3), 70 % of calls moved"
    )
