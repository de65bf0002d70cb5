"""The confirmation's level (``confirm.merge_weakest``): ``1/n`` per change by default, so
a series read once gets a bounded number of false changes however long it is; a monitor
reads at a fixed level (``STREAM_LEVEL``) because it counts false alarms per day, and pays
for the search's choice of position by Bonferroni (``reading``)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.changepoints import detect, merge_weakest
from pipeline.analysis.changepoints.confirm import step_pvalue
from pipeline.analysis.changepoints.reading import Reading, monitored


def _step(seed: int, n: int, size: float) -> np.ndarray:
    """White noise with a step of ``size`` standard deviations halfway."""
    noise = np.random.default_rng(seed).standard_normal(n)
    return noise + size * (np.arange(n) >= n // 2)


def test_a_short_series_is_tested_at_one_over_its_length() -> None:
    """A 0.8-sd step in 40 points whose corrected p lies between 1 % and 1/40: proven at
    1/40 = 2.5 %, not at 1 %."""
    x = _step(34, 40, 0.8)
    assert 0.01 < step_pvalue(x, 0, 20, x.size) < 1 / 40
    assert detect(x) == [20]
    assert detect(x, level=0.01) == []


def test_a_long_series_is_tested_more_strictly() -> None:
    """A small step in 1,000 points whose corrected p lies between 1/1000 and 1 % is kept
    at 1 % and merged at the default."""
    x = _step(0, 1000, 0.38)
    assert 1e-3 < step_pvalue(x, 0, 500, x.size) < 0.01
    assert merge_weakest(x, [500]) == []
    assert merge_weakest(x, [500], Reading(0.01)) == [500]


def test_an_explicit_level_is_used_as_given() -> None:
    """The level is the caller's when given: any level above the step's p keeps it."""
    x = _step(0, 1000, 0.38)
    p = step_pvalue(x, 0, 500, x.size)
    assert merge_weakest(x, [500], Reading(p * 1.01)) == [500]
    assert merge_weakest(x, [500], Reading(p * 0.99)) == []


def test_a_monitor_pays_for_every_position_of_the_search() -> None:
    """A monitor's reading corrects the search's choice by Bonferroni over all positions, a
    series read once by the effective count (fewer): the same step is held to more."""
    x = _step(0, 1000, 0.38)
    once, monitor = step_pvalue(x, 0, 500, x.size), step_pvalue(x, 0, 500, x.size, monitored())
    assert once < 0.01 < monitor
    assert merge_weakest(x, [500], monitored()) == []
    assert detect(_step(34, 40, 0.8), monitor=True) == []  # the monitor's level is 1 %


@pytest.mark.parametrize("level", [0.0, 1.0, -0.01, 1.5])
def test_a_level_outside_zero_to_one_is_refused_with_a_clear_error(level: float) -> None:
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        detect(np.arange(50.0), level=level)
