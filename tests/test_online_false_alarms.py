"""The online detector: a chance alarm's stored 'after' level is not the handful of hours
that set it off (a changeless series read -27 % in a report); heavy-tailed changeless series
alarm about as often as the target says; a planted step is still found within hours."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from scipy.stats import norm

from pipeline.analysis.metric_rows import ONLINE_ARL0_HOURS, ONLINE_K, change_rows
from pipeline.analysis.online import online_alarms, winsor_level
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


def _changeless(per_hour: int, rng: np.random.Generator, days: int = 40) -> np.ndarray:
    """Hourly median log TTFT without a change: sd 0.25 a probe, 1 % Pareto(1.5) tails and
    0.2 % 10x outliers (the tails of measured latency; benchmarks/bench_online_false_alarms)."""
    n = days * 24 * per_hour
    y = np.log(1400) + rng.normal(0, 0.25, n)
    tail = rng.random(n) < 0.01
    y[tail] += np.log(rng.pareto(1.5, tail.sum()) + 1)
    y[rng.random(n) < 0.002] += np.log(10)
    return np.asarray(np.median(y.reshape(-1, per_hour), axis=1))


def test_heavy_tailed_changeless_series_alarm_near_their_target() -> None:
    """One probe an hour: the old chart (normal-theory threshold, raw residuals) alarmed 6.7x
    its target on these seeded series (296 alarms for 44 expected; a 10x outlier crossed it
    alone); now 50. Bound: 1.6x the target's count. (At 12 probes/h the excess came with the
    deseasonalising, too slow to test here: benchmarks/bench_online_false_alarms.py.)"""
    rng = np.random.default_rng(2027)
    alarms = monitored = 0
    for _ in range(150):
        y = _changeless(1, rng)
        base = min(24 * 28, max(24 * 7, y.size // 3))  # change_rows' baseline
        got = online_alarms(y, baseline_n=base, target_arl0=ONLINE_ARL0_HOURS, k=ONLINE_K)
        alarms += len(got)
        monitored += y.size - base
    expected = monitored / ONLINE_ARL0_HOURS
    assert alarms <= 1.6 * expected, (alarms, expected)


def test_a_planted_step_is_still_found_within_hours() -> None:
    """+30 % step in hourly medians of 12 probes (about 3 residual sd): every seed alarms
    upward within 6 h, half within 2 h (the old chart: median 1 h here)."""
    delays = []
    for seed in range(12):
        y = _changeless(12, np.random.default_rng(seed))
        y[720:] += math.log(1.3)
        late = [r for r in _online_rows(y) if r["detected_at"] >= _at(720)]  # type: ignore[operator]
        assert late and float(late[0]["effect"]) > 0.2, (seed, late)  # type: ignore[arg-type]
        delays.append((late[0]["detected_at"] - _at(720)) / timedelta(hours=1))  # type: ignore[operator]
    assert max(delays) <= 6 and float(np.median(delays)) <= 2, delays


def _at(hour: int) -> datetime:
    return (MONDAY + hour).astype(object).replace(tzinfo=UTC)  # type: ignore[no-any-return]


def test_a_normal_residual_is_winsorised_once_per_hundred_run_lengths() -> None:
    c = winsor_level(2160)
    assert 2 * norm.sf(c) * 2160 == pytest.approx(0.01)
    assert 4.5 < c < 4.7
