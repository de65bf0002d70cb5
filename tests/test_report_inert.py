"""Bidirectional controls in model text reach the report inert and visible."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline.report import IsoWeek, render_report
from pipeline.report.inert import BIDI_CONTROLS, inert
from pipeline.warehouse import Warehouse

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
SPOOF = "answer: \u202e4202 ,yaM\u202c and \u2067isolated\u2069 \u200f"


def test_inert_marks_every_control() -> None:
    assert inert(SPOOF) == (
        "answer: [U+202E]4202 ,yaM[U+202C] and [U+2067]isolated[U+2069] [U+200F]"
    )
    assert inert("plain عربى text") == "plain عربى text"  # right-to-left script is fine


def test_a_spoofing_answer_is_shown_with_visible_markers(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    base = {"provider": "alpha", "model": "m", "probe": "p", "task_family": "arithmetic",
            "context_class": "short", "source": "live"}  # fmt: skip
    rows = [
        {**base, "run_id": str(uuid.uuid4()), "started_at": NOW - timedelta(hours=1),
         "error_class": "ok", "ttft_ms": 300.0, "score_strict": "wrong", "response_text": SPOOF},
        {**base, "run_id": str(uuid.uuid4()), "started_at": NOW - timedelta(hours=2),
         "error_class": "server_error", "error_detail": "busy \u202egnihtemos\u202c"},
    ]  # fmt: skip
    warehouse.insert_rows("probe_results", rows, key="run_id")
    html = render_report(warehouse, tmp_path, week=IsoWeek(2026, 47), now=NOW).read_text("utf-8")
    assert BIDI_CONTROLS.search(html) is None
    assert "[U+202E]4202 ,yaM[U+202C]" in html and "busy [U+202E]gnihtemos" in html
