"""Chart text is SVG <text> the browser draws, so any script in a name shows.

matplotlib's one font (DejaVu Sans) has no CJK glyphs: with text drawn as glyph paths a
provider named 通义千问 came out as four empty boxes, and the page could not fix it."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
NAME = "通义千问"
WEEK = IsoWeek(2026, 47)


def test_a_cjk_provider_name_is_chart_text_not_glyph_paths(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path / "nerfwatch.duckdb")
    wh.migrate()
    series = [Series(NAME, f"{NAME}-{c}", c) for c in ("short", "long")]
    wh.insert_frame("probe_results", probe_frame(series, end=NOW, days=3), key="run_id")
    # filterwarnings=error: a "Glyph missing from font" warning would fail the render
    html = render_report(wh, tmp_path / "out", week=WEEK, now=NOW).read_text("utf-8")
    charts = re.findall(r'<svg class="chart".*?</svg>', html, flags=re.S)
    assert charts
    texts = [re.findall(r"<text[^>]*>([^<]*)</text>", svg) for svg in charts]
    named = [t for t in texts if NAME in t]
    assert named, "no chart carries the provider's name as text"
    styles = re.findall(r'<text style="([^"]*)"', "".join(charts))
    assert styles and all("sans-serif" in s for s in styles), styles[:3]
    assert not any("<use" in svg and "DejaVuSans-" in svg for svg in charts)
