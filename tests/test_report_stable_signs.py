"""A stable phase with a warning sign firing: the card must not read green "Stable"."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from pipeline.report import render_report
from pipeline.warehouse import Warehouse
from tests.support.report import Series, insert_analysis, probe_frame
from tests.test_report_render import NOW, WEEK

SERIES = [
    Series(p, f"{p}-short", "short", base_ttft_ms=b) for p, b in (("alpha", 350.0), ("beta", 500.0))
]


def _card(html: str, provider: str) -> str:
    found = re.search(
        rf'<section class="verdict (\w+)" data-provider="{provider}">(.*?)</section>', html, re.S
    )
    assert found, html
    return f"{found[1]} {found[2]}"


@pytest.mark.parametrize(
    ("signs", "tone", "status"),
    [
        ([], "ok", '<div class="status">Stable</div>'),
        (["dumber_answers"], "warn", "Stable phase, but 1 warning sign firing"),
        (
            ["dumber_answers", "more_busy_errors"],
            "warn",
            "Stable phase, but 2 warning signs firing",
        ),
        # context, not a symptom: the vendor said nothing (of a change there is none)
        (["no_official_word"], "ok", '<div class="status">Stable</div>'),
    ],
)
def test_a_stable_card_with_a_sign_firing_says_so(
    warehouse: Warehouse, tmp_path: Path, signs: list[str], tone: str, status: str
) -> None:
    degraded = (NOW - timedelta(days=30), NOW)
    frame = probe_frame(SERIES, end=NOW, days=60, every_min=60, degraded=degraded)
    warehouse.insert_frame("probe_results", frame, key="run_id")
    insert_analysis(warehouse, ["alpha", "beta"], end=NOW, degraded=degraded)
    aid = warehouse.query("SELECT max(analysis_id) AS id FROM analysis_runs")["id"][0]
    rows = [
        {
            "analysis_id": aid, "provider": "beta", "model": "beta-short", "sign": sign,
            "effect": -0.2, "effect_lo": -0.3, "effect_hi": -0.1, "pvalue": 1e-4,
            "qvalue": 1e-3, "fires": True, "persistent": False, "test": "test",
        }
        for sign in signs
    ]  # fmt: skip
    if rows:  # keyed by sign: only alpha's long_context_slower is stored already
        warehouse.insert_rows("warning_signs", rows, key="sign")
    html = render_report(warehouse, tmp_path, week=WEEK, now=NOW).read_text(encoding="utf-8")
    card = _card(html, "beta")
    assert card.startswith(tone + " "), card
    assert status in card, card
