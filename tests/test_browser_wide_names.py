"""Provider names in Chinese or Japanese stay inside their charts and do not overlap.

Chart layout measures text in DejaVu Sans, which has no CJK glyphs; the browser draws a
CJK character about one em wide, nearly twice a Latin letter. Names were fitted by
counting characters, so a CJK name ran past the chart's edge (a row label) or into the
next panel (a heatmap title). Measured in headless Chromium on a real report.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.browser import visit
from tests.support.report import Series, probe_frame

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WEEK = IsoWeek(2026, 47)
NAMES = [
    "通义千问大模型开放平台企业版华东二区备用专线",
    "ディープシーク推論サービス東京リージョン専用線",  # the middle heatmap panel
    "alpha",
]

# Every <text> of every chart: its box, and the chart's, in CSS pixels.
_TEXTS = """() => [...document.querySelectorAll("svg.chart")].flatMap(svg => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll("text")].map(t => {
    const r = t.getBoundingClientRect();
    return {chart: svg.dataset.chart, text: t.textContent, left: r.left, right: r.right,
            top: r.top, bottom: r.bottom, box_left: box.left, box_right: box.right};
  });
})"""


# How wide the browser draws a CJK character, in em: about 1 with a CJK font.
_CJK_EM = """() => {
  const probe = document.createElement("span");
  probe.style.cssText = "font: 100px 'DejaVu Sans', Verdana, sans-serif; position: absolute";
  probe.textContent = "通";
  document.body.append(probe);
  const em = probe.getBoundingClientRect().width / 100;
  probe.remove();
  return em;
}"""


def _texts(browser: Any, report: Path) -> list[dict[str, Any]]:
    """The charts' texts, once the machine has a CJK font (without one the browser
    draws narrow boxes and no name can overflow)."""
    page = visit(browser, report).page
    em = page.evaluate(_CJK_EM)  # type: ignore[attr-defined]
    if em < 0.9:
        message = f"no CJK font (a CJK character is {em:.2f} em): apt-get install "
        message += "fonts-wqy-microhei"
        if os.environ.get("CI"):
            pytest.fail(message)  # in CI the bootstrap installs it: missing is a failure
        pytest.skip(message)
    return page.evaluate(_TEXTS)  # type: ignore[attr-defined,no-any-return]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wide-names")
    wh = Warehouse(tmp / "nerfwatch.duckdb")
    wh.migrate()
    series = [Series(p, f"p{i}-{c}", c) for i, p in enumerate(NAMES) for c in ("short", "long")]
    wh.insert_frame("probe_results", probe_frame(series, end=NOW, days=21), key="run_id")
    return render_report(wh, tmp / "reports", week=WEEK, now=NOW)


def _named(texts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The texts that show a provider's name, whole or cut."""
    return [t for t in texts if any(n[:4] in t["text"] for n in NAMES[:2])]


def test_wide_names_stay_inside_their_charts(browser: Any, report: Path) -> None:
    named = _named(_texts(browser, report))
    assert named, "no chart shows the CJK names"
    out = [t for t in named if t["left"] < t["box_left"] - 1 or t["right"] > t["box_right"] + 1]
    assert not out, out


def test_heatmap_titles_do_not_overlap(browser: Any, report: Path) -> None:
    texts = visit(browser, report).page.evaluate(_TEXTS)  # type: ignore[attr-defined]
    titles = sorted((t for t in _named(texts) if t["chart"] == "heatmap"), key=lambda t: t["left"])
    assert len(titles) == 2, titles
    a, b = titles
    same_row = a["top"] < b["bottom"] and b["top"] < a["bottom"]
    assert not same_row or a["right"] <= b["left"], (a, b)
