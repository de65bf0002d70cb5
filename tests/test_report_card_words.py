"""A card's lines say what their numbers measure, in words a two-minute reader knows."""

from __future__ import annotations

from typing import Any

from pipeline.report.verdicts import _sign_effect


def _drift_row(effect: float, lo: float | None, hi: float | None) -> dict[str, Any]:
    return {
        "sign": "fixed_answers_changed",
        "effect": effect,
        "effect_lo": lo,
        "effect_hi": hi,
        "detail": "",
    }


def test_first_token_drift_reads_as_answers_in_100() -> None:
    """It read 'first-token distance +0.35 over the expected (95 % range +0.28 to +0.42)':
    a distance in no unit a reader knows. TV is the share of answers that would have to
    change, so the line says how many answers in 100, and keeps TV for the section above."""
    text = _sign_effect(_drift_row(0.35, 0.28, 0.42))
    assert text.startswith("35 in 100 more first answer tokens"), text
    assert "than sampling alone explains" in text
    assert "range +28 to +42 in 100" in text
    assert "TV +0.35 over the expected" in text
    assert "distance" not in text


def test_fewer_is_said_as_fewer() -> None:
    text = _sign_effect(_drift_row(-0.12, -0.2, -0.04))
    assert text.startswith("12 in 100 fewer"), text
    assert "range -20 to -4 in 100" in text


def test_window_tv_alone_reads_as_answers_in_100() -> None:
    text = _sign_effect(_drift_row(0.23, None, None))
    assert text == (
        "23 in 100 answers to fixed questions would have to change to match the earlier "
        "window (TV 0.23)"
    )
