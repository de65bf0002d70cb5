"""A change in a series with a cycle must show in the means of whole cycles too."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.changepoints import detect
from pipeline.analysis.changepoints.cycle_means import in_cycle_means
from pipeline.analysis.changepoints.reading import SERIES, monitored
from pipeline.analysis.periodicity import remove_cycle

HOURS = 960


def daily_peaks(seed: int) -> np.ndarray:
    """40 days of a daily peak whose height and width change from one day to the next (as
    a load does), a slow drift and noise: the cycle is real, but no fixed profile fits it."""
    rng = np.random.default_rng(seed)
    t = np.arange(HOURS)
    height = rng.lognormal(0.0, 0.4, HOURS // 24)[t // 24]
    width = rng.uniform(2.0, 5.0, HOURS // 24)[t // 24]
    peak = 10.0 * height * np.exp(-0.5 * ((t % 24 - 14) / width) ** 2)
    return peak + np.cumsum(rng.normal(0.0, 0.05, HOURS)) + rng.normal(0.0, 0.5, HOURS)


@pytest.mark.parametrize("seed", [51, 135, 163])
def test_a_cycle_that_varies_from_day_to_day_is_no_change(seed: int) -> None:
    """What the fixed profile leaves passed the AR(1) test somewhere in these series (at
    hours 184, 82 and 96 before whole-cycle means); the means of whole days do not move."""
    x = daily_peaks(seed)
    cycle = remove_cycle(x)[1]
    assert cycle is not None and cycle.period == 24
    assert detect(x) == []


@pytest.mark.parametrize("seed", [51, 135, 163])
def test_a_step_beside_such_a_cycle_is_still_found(seed: int) -> None:
    x = daily_peaks(seed) + np.where(
        np.arange(HOURS) >= 480, 10.0, 0.0
    )  # the peaks: 10 x lognormal
    found = detect(x)
    assert any(abs(c - 480) <= 5 for c in found), found


def test_whole_cycle_means_keep_a_step_and_drop_a_changed_swing() -> None:
    rng = np.random.default_rng(0)
    t = np.arange(720)
    step = rng.normal(0.0, 1.0, 720) + np.where(t >= 360, 3.0, 0.0)
    assert in_cycle_means(step, [360], (), 24, SERIES) == [360]
    swing = rng.normal(0.0, 1.0, 720) + np.where(t >= 360, 6.0, 0.0) * np.sin(2 * np.pi * t / 24)
    assert in_cycle_means(swing, [360], (), 24, SERIES) == []


def test_too_few_cycles_to_test_keep_the_change() -> None:
    """One whole cycle before it: no verdict, and no verdict is not evidence against."""
    x = np.random.default_rng(1).normal(0.0, 1.0, 720)
    assert in_cycle_means(x, [30], (), 24, SERIES) == [30]


def test_a_monitor_reads_its_changes_without_whole_cycle_means() -> None:
    assert SERIES.whole_cycles and not monitored().whole_cycles
