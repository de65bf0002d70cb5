"""The level pass (``changepoints.level``): a step between two flat stretches that the
smooth-curve test lets go is added, beside confirmed changes too; curves, wander and
dependent noise get nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import signal, stats

from pipeline.analysis.changepoints import _candidates, detect, merge_weakest
from pipeline.analysis.changepoints.level import level_pvalue, level_shifts
from pipeline.analysis.changepoints.noise import robust_scale, winsorize

DATA = Path(__file__).resolve().parent / "data" / "changepoints"


def _late_drop(seed: int, n: int = 77, at: int = 55) -> np.ndarray:
    """Counts that fall late in a short series, as youth homicides did after an
    intervention: Poisson 3.5 a month, then 1.3."""
    rng = np.random.default_rng(seed)
    return np.r_[rng.poisson(3.5, at), rng.poisson(1.3, n - at)].astype(float)


def test_a_late_drop_in_a_short_count_series_is_found() -> None:
    """Over 40 seeds the drop is found, alone and within 5 months, 24 times (3 times with
    the smooth-curve test alone): a power figure, not a certainty, at 22 months after."""
    found_alone = 0
    for seed in range(40):
        found = detect(_late_drop(seed))
        found_alone += len(found) == 1 and abs(found[0] - 55) <= 5
    assert found_alone >= 20


def test_the_smooth_curve_test_alone_misses_the_boston_drop() -> None:
    """Why the pass exists: on the documented series the confirmation finds nothing (a
    quadratic through 77 noisy months absorbs the drop); the level pass adds it."""
    item = json.loads((DATA / "historical.json").read_text())["boston_youth_homicides"]
    x = np.asarray(item["values"], dtype=float)
    assert abs(detect(x)[0] - item["cps"][0]) <= 5
    z = (x - np.median(x)) / np.std(x)
    assert merge_weakest(z, [55]) == []
    assert level_shifts(z, [55], 5) == [55]


def _fall_then_rise(seed: int) -> np.ndarray:
    """Three levels in white noise (sd 1), as the US real interest rate moved: flat, a fall
    of 1.5 at 47, then a rise of 3.5 at 79 (103 points)."""
    rng = np.random.default_rng(seed)
    return np.r_[np.zeros(47), np.full(32, -1.5), np.full(24, 2.0)] + rng.normal(0, 1, 103)


def test_a_step_beside_a_confirmed_change_is_found() -> None:
    """The confirmation keeps the large rise at 79; the fall at 47 is tested in [0, 79)
    against a line, which absorbs most of a step that splits the window 47/32. The level
    pass runs between confirmed changes too, so both are found (within 3 points) in 29
    of 40 seeds; with the pass only where nothing was confirmed, 6 of 40."""
    both = 0
    for seed in range(40):
        found = detect(_fall_then_rise(seed))
        both += any(abs(c - 47) <= 3 for c in found) and any(abs(c - 79) <= 3 for c in found)
    assert both >= 24


@pytest.mark.parametrize(("n", "rho"), [(60, 0.0), (150, 0.0), (400, 0.3)])
def test_a_lone_step_gets_no_level_shift_beside_it(n: int, rho: float) -> None:
    """Beside a clear confirmed step, the stretches on either side are searched again:
    over 100 series (white or AR(0.3) noise) at most a few get a break anywhere else."""
    rng = np.random.default_rng(n)
    extra = 0
    for _ in range(100):
        e = signal.lfilter([1.0], [1.0, -rho], rng.normal(0, 1, n))  # AR(1)
        x = np.r_[np.zeros(n // 3), np.full(n - n // 3, 4.0)] + e
        extra += any(abs(c - n // 3) > 3 for c in detect(x))
    assert extra <= 4


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_a_trend_on_either_side_leaves_the_stretch_to_the_curve_test(seed: int) -> None:
    """A step followed by a gentle rise: two levels still beat a smooth curve and the
    residuals are not autocorrelated, but the slope after the step is significant, so the
    level model does not hold (the jump-and-hinge test of the confirmation decides)."""
    rng = np.random.default_rng(seed)
    t = np.arange(80.0)
    flat = np.r_[np.zeros(40), np.full(40, 2.0)] + rng.normal(0, 0.5, 80)
    sloped = flat + np.where(t >= 40, 0.03 * (t - 40), 0.0)
    assert level_pvalue(flat, 0, 40, 80) < 1e-6
    assert level_pvalue(sloped, 0, 40, 80) == 1.0


def test_a_random_walk_excursion_is_not_a_step() -> None:
    """Two stretches of a random walk can look flat around a big move; what is left around
    the two levels still wanders (lag-1 autocorrelation), so the pass adds nothing."""
    for seed in range(40):
        x = np.cumsum(np.random.default_rng(seed).normal(0, 1, 300))
        z = winsorize((x - np.median(x)) / robust_scale(x), 1.0)
        candidates, _ = _candidates(z, 5)
        assert level_shifts(z, candidates, 5) == [], seed


@pytest.mark.parametrize(("seed", "k"), [(1, 69), (2, 68), (4, 57)])
def test_a_gentle_curve_is_not_two_levels(seed: int, k: int) -> None:
    """The start of cubic growth in noise: each side looks flat (no significant slope) and
    a jump at ``k`` beyond a constant is significant even after Bonferroni, but a smooth
    curve explains the stretch better than two levels (BIC), so nothing is added."""
    rng = np.random.default_rng(seed)
    x = 2.0 * np.linspace(0.0, 1.0, 97) ** 3 + rng.normal(0, 1, 97)
    jump = np.r_[np.zeros(k), np.ones(97 - k)]
    rss_levels = float(np.sum((x - np.polyval(np.polyfit(jump, x, 1), jump)) ** 2))
    f = (np.sum((x - x.mean()) ** 2) - rss_levels) / (rss_levels / 95)
    assert stats.f.sf(f, 1, 95) * 97 < 0.01  # the plain level test would have fired
    assert level_pvalue(x, 0, k, 97) == 1.0
    assert detect(x) == []


@pytest.mark.parametrize("n", [20, 80, 300])
def test_noise_alone_rarely_gets_a_level_shift(n: int) -> None:
    """The pass adds a second test at 1 % per change: over 100 white-noise series a few
    false alarms at most."""
    rng = np.random.default_rng(n)
    fired = sum(bool(detect(rng.normal(0, 1, n))) for _ in range(100))
    assert fired <= 4
