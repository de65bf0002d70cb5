"""How a change is judged depends on the reading (``changepoints.reading``): a series read
once may follow a growth curve, which its null holds; a monitor's metric is held to the
polynomial drift, Bonferroni and the AR(1) model, as the product was measured with."""

from __future__ import annotations

import numpy as np

from pipeline.analysis.changepoints import confirm, detect
from pipeline.analysis.changepoints.reading import SERIES, monitored


def _noisy(curve: np.ndarray, seed: int, sd: float) -> np.ndarray:
    return curve + sd * np.random.default_rng(seed).standard_normal(curve.size)


def test_a_series_read_once_holds_growth_in_its_null() -> None:
    """On 120 points of a saturating curve the null is the line plus an exponential (three
    columns, the last not a power of time); a monitor's null is a polynomial."""
    t = np.linspace(0.0, 1.0, 120)
    y = _noisy(1.0 - np.exp(-1.8 * t), 1, 0.002)
    growth = confirm.change_designs(y, (60,))[0]
    drift = confirm.change_designs(y, (60,), monitored().growth_null)[0]
    ts = (np.arange(120.0) - 60) / 120
    assert growth.shape[1] == 3
    assert not np.allclose(growth, np.vander(ts, 3, increasing=True))
    assert np.allclose(drift, np.vander(ts, drift.shape[1], increasing=True))


def test_the_growth_null_does_not_hold_a_kink() -> None:
    """Its rates are slow (at most e^2 steeper at one end), so a sharp bend still tests as a
    change: a hinge at 60 of 120 points in light noise, 10 seeds, found once (placed
    within 10 points: a kink's position is less sharp than a jump's)."""
    t = np.arange(120.0)
    for seed in range(10):
        y = _noisy(np.maximum(t - 60.0, 0.0) * 0.05, seed, 0.1)
        assert confirm.step_pvalue(y, 0, 60, 120) < 1e-6, seed
        found = detect(y)
        assert len(found) == 1 and abs(found[0] - 60) <= 10, (seed, found)


def test_a_monitor_reads_at_its_stream_level_unless_told() -> None:
    assert monitored().alpha(10_000) == 0.01
    assert monitored(0.001).alpha(10) == 0.001
    assert SERIES.alpha(400) == 1 / 400
