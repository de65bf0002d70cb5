"""The online detector's stored levels: a chance alarm's 'after' level is not the handful
of hours that set it off (a changeless series read -27 % in a report)."""

from __future__ import annotations

import math
from datetime import UTC, timedelta

import numpy as np

from pipeline.analysis.metric_rows import change_rows
from pipeline.analysis.rows import ResultRows

MONDAY = np.datetime64("2026-01-05T00", "h")


def _online_rows(adjusted: np.ndarray) -> list[dict[str, object]]:
    c = ResultRows({})
    hours = MONDAY + np.arange(adjusted.size)
    change_rows(c, ("p", "m", "long"), "ttft_p50_ms", hours, adjusted, seed=0)
    return [r for r in c.rows.get("change_points", []) if r["detector"] == "online"]


def test_a_passing_dip_is_not_stored_as_a_lasting_shift() -> None:
    """Ten hours 30 % low in a changeless series: the CUSUM alarms (as it should on such a
    run), but the level after is the next week's, about the old one, not the dip's 30 %."""
    rng = np.random.default_rng(12)
    x = np.log(1400) + rng.normal(0, 0.1, 24 * 40)
    x[700:710] += math.log(0.7)
    rows = _online_rows(x)
    start = (MONDAY + 690).astype(object).replace(tzinfo=UTC)
    dip = [r for r in rows if start <= r["at"] <= start + timedelta(hours=20)]  # type: ignore[operator]
    assert len(dip) == 1, rows
    assert abs(float(dip[0]["effect"])) < 0.05, dip  # the old 'after' (start..alarm): -30 %
    assert abs(float(dip[0]["level_after"]) / 1400 - 1) < 0.05, dip


def test_a_lasting_step_keeps_its_size() -> None:
    rng = np.random.default_rng(13)
    x = np.log(1400) + rng.normal(0, 0.1, 24 * 40)
    x[700:] += math.log(1.3)
    rows = [r for r in _online_rows(x) if float(r["effect"]) > 0]  # type: ignore[arg-type]
    assert rows, "no alarm on a +30 % step"
    assert 0.22 < float(rows[0]["effect"]) < 0.38, rows  # type: ignore[arg-type]
