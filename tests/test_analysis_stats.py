"""Seasonality, online CUSUM and effect helpers on constructed data with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.changepoints import detect
from pipeline.analysis.effects import (
    benjamini_hochberg,
    day_dispersion,
    fisher_one_sided,
    mann_whitney_one_sided,
    piecewise_dispersion,
    rate_ratio_ci,
    relative_shift_ci,
)
from pipeline.analysis.online import arl0, cusum_threshold, online_alarms
from pipeline.analysis.seasonality import decompose, hour_of_week

MONDAY = np.datetime64("2026-01-05T00", "h")


def _hours(n: int) -> np.ndarray:
    return MONDAY + np.arange(n)


def _rhythm(n: int, amp: float, rng: np.random.Generator, noise: float = 0.05) -> np.ndarray:
    t = np.arange(n)
    hod, dow = t % 24, (t // 24) % 7
    return 6 + amp * np.sin(2 * np.pi * (hod - 9) / 24) + 0.1 * (dow < 5) + rng.normal(0, noise, n)


def test_hour_of_week_starts_monday_midnight_utc() -> None:
    hours = np.array(["2026-01-05T00", "2026-01-05T13", "2026-01-11T23"], dtype="datetime64[h]")
    assert hour_of_week(hours).tolist() == [0, 13, 167]


def test_mstl_with_three_weeks_finds_the_rhythm_and_removes_it() -> None:
    rng = np.random.default_rng(1)
    n = 24 * 28
    y = _rhythm(n, 0.3, rng)
    s = decompose(_hours(n), y)
    assert s.method == "mstl" and s.significant
    assert 14 in s.peak_hours or 15 in s.peak_hours
    assert s.peak_to_trough == pytest.approx(np.exp(0.6 + 0.1), rel=0.25)
    assert np.nanstd(s.adjusted) < 0.5 * np.std(y)


def test_method_depends_on_data_length() -> None:
    rng = np.random.default_rng(2)
    assert decompose(_hours(24 * 7), _rhythm(24 * 7, 0.3, rng)).method == "stl"
    assert decompose(_hours(48), _rhythm(48, 0.3, rng)).method == "none"


def test_no_rhythm_leaves_series_unchanged() -> None:
    rng = np.random.default_rng(3)
    y = 6 + rng.normal(0, 0.1, 24 * 30)
    s = decompose(_hours(y.size), y)
    assert not s.significant
    assert np.array_equal(s.adjusted, y)


def test_gaps_stay_missing_after_adjustment() -> None:
    rng = np.random.default_rng(4)
    y = _rhythm(24 * 30, 0.3, rng)
    y[100:130] = np.nan
    s = decompose(_hours(y.size), y)
    assert np.isnan(s.adjusted[100:130]).all()
    assert np.isfinite(s.adjusted[:100]).all()


def test_step_survives_deseasonalisation() -> None:
    rng = np.random.default_rng(5)
    y = _rhythm(24 * 42, 0.3, rng)
    y[24 * 30 :] += np.log(1.3)
    s = decompose(_hours(y.size), y)
    adj = s.adjusted
    shift = np.median(adj[24 * 30 :]) - np.median(adj[: 24 * 30])
    assert shift == pytest.approx(np.log(1.3), abs=0.05)


@pytest.mark.parametrize("seed", range(5))
def test_weekend_dip_is_removed_as_rhythm_not_found_as_steps(seed: int) -> None:
    # A weekday/weekend level difference is two level shifts a week to a step finder; it
    # must go out with the rhythm, leaving only the real step for change detection.
    rng = np.random.default_rng(seed)
    n = 24 * 40
    y = _rhythm(n, 0.3, rng, noise=0.03) + 0.02 * (((np.arange(n) // 24) % 7) < 5)
    y[24 * 30 :] += np.log(1.3)
    s = decompose(_hours(n), y)
    breaks = detect(s.adjusted)
    assert len(breaks) == 1 and abs(breaks[0] - 24 * 30) <= 3


def test_siegmund_arl_matches_the_textbook_value() -> None:
    # Montgomery, Statistical Quality Control: k = 0.5, h = 4 gives ARL0 ~ 336.
    assert arl0(4.0, 0.5) == pytest.approx(336, rel=0.02)
    assert cusum_threshold(336, 0.5) == pytest.approx(4.0, abs=0.02)


@pytest.mark.parametrize(
    ("target", "k", "why"),
    [(2.0, 0.5, "between 2.09 and"), (1e90, 0.5, "between 2.09 and"), (336, -1.0, "k must")],
)
def test_an_unreachable_cusum_target_is_refused_in_one_line(
    target: float, k: float, why: str
) -> None:
    with pytest.raises(ValueError, match=why) as raised:
        cusum_threshold(target, k)
    assert "\n" not in str(raised.value) and "cusum_threshold" in str(raised.value)


def test_a_steep_cusum_reference_value_still_has_a_threshold() -> None:
    """k = 2: the ARL at the search's upper end overflows to inf, silently."""
    h = cusum_threshold(2160, 2.0)
    assert arl0(h, 2.0) == pytest.approx(2160, rel=1e-6)


def test_an_empty_cusum_baseline_is_refused_rather_than_looping() -> None:
    with pytest.raises(ValueError, match="baseline_n must be at least 10"):
        online_alarms(np.zeros(50), baseline_n=0)


def test_cusum_false_alarm_rate_is_calibrated() -> None:
    """200 series, each with its own baseline: one long series rests on one draw of the
    baseline's scale, which alone moved its mean gap by 2x. Measured 1.35x the target (the
    threshold is never below normal theory, and re-learning leaves 48 values unwatched);
    the old chart (a fixed 48-value level, the normal-theory threshold) read 0.90x."""
    rng = np.random.default_rng(6)
    target = 500
    alarms = monitored = 0
    for _ in range(200):
        x = rng.normal(size=5000)
        alarms += len(online_alarms(x, baseline_n=500, target_arl0=target))
        monitored += x.size - 500
    assert 1.0 * target < monitored / alarms < 1.6 * target


def test_cusum_detects_a_shift_quickly() -> None:
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(size=1000), rng.normal(2.0, 1.0, 500)])
    alarms = online_alarms(x, baseline_n=500, target_arl0=100_000)
    first = [a for a in alarms if a.index >= 1000]
    assert first and first[0].index - 1000 < 24 and first[0].direction == 1
    assert abs(first[0].start - 1000) <= 5
    assert not [a for a in alarms if a.index < 1000]


def test_benjamini_hochberg_known_values() -> None:
    q = benjamini_hochberg([0.01, 0.04, 0.03, float("nan"), 0.5])
    assert q[0] == pytest.approx(0.04)
    assert q[1] == pytest.approx(0.04 * 4 / 3)
    assert q[2] == pytest.approx(0.04 * 4 / 3)
    assert np.isnan(q[3]) and q[4] == pytest.approx(0.5)


def test_exact_and_rank_tests_point_the_right_way() -> None:
    assert fisher_one_sided(10, 1000, 40, 1000) < 1e-4
    assert fisher_one_sided(40, 1000, 10, 1000) > 0.99
    eff, lo, hi = rate_ratio_ci(10, 1000, 40, 1000)
    assert lo < 3.0 < hi and eff == pytest.approx(40.5 / 10.5 - 1, rel=1e-6)
    rng = np.random.default_rng(8)
    a, b = rng.normal(0, 1, 200), rng.normal(0.5, 1, 200)
    assert mann_whitney_one_sided(a, b) < 0.01 < mann_whitney_one_sided(b, a)


def test_relative_shift_ci_covers_the_planted_change() -> None:
    rng = np.random.default_rng(9)
    before = rng.normal(np.log(500), 0.1, 600)
    after = rng.normal(np.log(650), 0.1, 600)
    eff, lo, hi = relative_shift_ci(before, after)
    assert lo < 0.3 < hi and eff == pytest.approx(0.3, abs=0.03)


def test_day_dispersion_is_one_for_binomial_counts_and_large_for_bursts() -> None:
    rng = np.random.default_rng(3)
    trials = np.full(28, 1000)
    binomial = [day_dispersion(rng.binomial(trials, 0.02), trials) for _ in range(200)]
    assert 1.0 <= float(np.mean(binomial)) < 1.3
    bursts = rng.binomial(trials, 0.02 * rng.lognormal(0, 0.5, 28))
    assert day_dispersion(bursts, trials) > 3.0
    assert day_dispersion(np.zeros(28, dtype=int), trials) == 1.0
    assert day_dispersion(np.array([5, 9]), np.array([100, 100])) == 1.0  # too few days


def test_piecewise_dispersion_measures_days_around_their_own_segment() -> None:
    """A real step in a binomial rate is no overdispersion of the fitted change-point model
    (the pooled day_dispersion reads it as one); with one segment both are the same."""
    rng = np.random.default_rng(4)
    trials = np.full(40, 1000)
    counts = rng.binomial(trials, np.where(np.arange(40) < 20, 0.02, 0.06))
    assert day_dispersion(counts, trials) > 5.0
    assert 1.0 <= piecewise_dispersion(counts, trials, [0, 20, 40]) < 1.8
    assert piecewise_dispersion(counts, trials, [0, 40]) == day_dispersion(counts, trials)
    quiet = np.concatenate([np.zeros(20, dtype=int), counts[20:]])  # a segment without events
    assert piecewise_dispersion(quiet, trials, [0, 20, 40]) < 1.8
