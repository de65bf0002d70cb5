"""The materiality floor (``changepoints.material``): a change that the tests prove but that
is small beside the series' range is dropped; one above the floor stays, and so do the
changes beside a dropped one."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.changepoints import detect, segment
from pipeline.analysis.changepoints.material import (
    FLOOR,
    change_size,
    material,
    material_spread,
    series_range,
)
from pipeline.analysis.changepoints.spread import spread_breaks


def _quiet_steps(seed: int, second_step: float) -> np.ndarray:
    """A quiet series (noise sd 0.05) with a big step of 10 at 100 and a second step of
    ``second_step`` at 200, 100 points apart: both are many noise sds high."""
    rng = np.random.default_rng(seed)
    level = np.r_[np.zeros(100), np.full(100, 10.0), np.full(100, 10.0 + second_step)]
    return level + rng.normal(0.0, 0.05, level.size)


@pytest.mark.parametrize("seed", range(3))
def test_a_proven_step_of_two_percent_of_the_range_is_not_reported(seed: int) -> None:
    x = _quiet_steps(seed, 0.2)  # 4 noise sds, 100 points each side: proven, but 2 %
    assert any(abs(b - 200) <= 2 for b in segment(x).breaks), "the tests should prove it"
    assert detect(x) == [100]


@pytest.mark.parametrize("seed", range(3))
def test_a_step_of_a_tenth_of_the_range_is_kept(seed: int) -> None:
    x = _quiet_steps(seed, 1.0)
    assert detect(x) == [100, 200]


def test_the_size_of_a_jump_is_proportional_to_it_and_near_its_height() -> None:
    t = np.arange(120, dtype=np.float64)
    step = (t >= 60).astype(np.float64)
    one, two = change_size(step, 0, 60, 120), change_size(2.0 * step, 0, 60, 120)
    assert two == pytest.approx(2.0 * one)
    assert 0.4 <= one <= 1.0


def test_dropping_a_change_re_measures_its_neighbours_in_the_widened_window() -> None:
    """A small step between two ramps: on its own window it is small, and once it is gone
    the slope change beside it is measured over the longer window, where it stays."""
    t = np.arange(300, dtype=np.float64)
    x = np.where(t < 100, 0.0, (t - 100) * 0.1) + 0.1 * (t >= 200)
    kept = material(x, [100, 200])
    assert kept == [100]
    assert change_size(x, 0, 100, 300) >= FLOOR * (np.percentile(x, 99) - np.percentile(x, 1))


def test_fixed_edges_bound_the_windows_and_are_never_returned() -> None:
    x = _quiet_steps(0, 0.2)
    assert material(x, [100, 200], fixed=(150,)) == [100]
    assert material(x, [], fixed=(150,)) == []


def _price(seed: int, late_volatility: float) -> np.ndarray:
    """A price that doubles over 600 days, its daily log-return noise 0.2 % and then
    ``late_volatility`` from day 300: a change of spread on the log scale."""
    rng = np.random.default_rng(seed)
    sd = np.r_[np.full(300, 0.002), np.full(300, late_volatility)]
    trend = np.log(100.0) + np.linspace(0.0, np.log(2.0), 600)
    return np.exp(trend + rng.normal(0.0, 1.0, 600) * sd)


@pytest.mark.parametrize("seed", range(3))
def test_a_volatility_change_invisible_on_the_price_is_not_reported(seed: int) -> None:
    """From 0.2 % to 0.6 %: the spread search finds it on the log scale, but the noise
    band of the price itself widens by about 1 % of its range."""
    x = _price(seed, 0.006)
    assert any(abs(b - 300) <= 10 for b in spread_breaks(x, segment(x).breaks, 5))
    assert detect(x) == []


@pytest.mark.parametrize("seed", range(3))
def test_a_volatility_change_that_shows_on_the_price_is_kept(seed: int) -> None:
    x = _price(seed, 0.03)
    assert [abs(b - 300) <= 5 for b in detect(x)] == [True]


def test_a_spread_change_too_small_to_see_goes_and_a_large_one_stays() -> None:
    rng = np.random.default_rng(0)
    sd = np.r_[np.full(200, 1.0), np.full(200, 1.02), np.full(200, 5.0)]
    x = rng.normal(0.0, 1.0, 600) * sd
    assert material_spread(x, [200, 400]) == [400]
    assert material_spread(x, []) == []


def _burst_beside_a_small_shift(seed: int) -> np.ndarray:
    """1,000 points of white noise (sd 1) with a burst of 8 points 40 sds tall at 300 (under
    1 % of the points, so the 1st-99th percentile range leaves it out) and a level shift of
    0.8 sd at 600: proven, a few percent of the percentile range, about 2 % of the chart."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, 1000) + 0.8 * (np.arange(1000) >= 600)
    x[300:308] += 40.0
    return x


@pytest.mark.parametrize("seed", range(3))
def test_a_burst_sets_the_chart_a_reader_sees_and_a_one_point_outlier_does_not(
    seed: int,
) -> None:
    x = _burst_beside_a_small_shift(seed)
    assert series_range(x) < 8.0 < 40.0 < series_range(x, extremes=True)
    spiked = x.copy()
    spiked[300:308] -= 40.0
    spiked[[100, 800]] += (40.0, -40.0)
    assert series_range(spiked, extremes=True) < 10.0


@pytest.mark.parametrize("seed", range(3))
def test_a_shift_too_small_to_see_beside_a_tall_burst_is_immaterial_to_a_reader(
    seed: int,
) -> None:
    """On the chart's height (the burst's) the shift is 2 %, under the floor; on the
    percentile range a monitor's floor keeps, it is well above it, and detect() reports it
    when reading a monitor's metric."""
    x = _burst_beside_a_small_shift(seed)
    assert material(x, [308, 600], span=series_range(x, extremes=True)) == [308]
    assert material(x, [308, 600], span=series_range(x)) == [308, 600]
    assert any(abs(b - 600) <= 10 for b in detect(x, monitor=True))


@pytest.mark.parametrize("seed", range(3))
def test_a_shift_beside_one_point_outliers_stays_for_a_reader(seed: int) -> None:
    """The same shift beside two one-point outliers of +-40 instead of the burst: a reader
    discounts those, so the chart's height is the noise band and the shift is reported."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, 1000) + 0.8 * (np.arange(1000) >= 600)
    x[[300, 800]] += (40.0, -40.0)
    assert [abs(b - 600) <= 10 for b in detect(x)] == [True]
