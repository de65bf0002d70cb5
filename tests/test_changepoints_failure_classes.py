"""detect() on the failure classes of issue #19, each on a seeded constructed series:
smooth curves, spread changes beside level changes, a crash on a trend, a trend inside a
spread regime, and the cost of confirmation (counted, not timed)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.changepoints import confirm, detect
from pipeline.analysis.changepoints.reading import SERIES, Reading
from pipeline.analysis.changepoints.spread import spread_breaks


def _near(found: list[int], truth: list[int], margin: int = 5) -> bool:
    return len(found) == len(truth) and all(
        abs(f - t) <= margin for f, t in zip(found, truth, strict=True)
    )


@pytest.mark.parametrize("seed", range(3))
def test_smooth_curves_have_no_change_points(seed: int) -> None:
    """Growth that saturates (logistic) and growth that accelerates (exponential): over the
    whole series a quadratic fits them poorly and a hinge better, but the bend is gradual
    (confirm.is_gradual), so it is merged."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, 300)
    logistic = 10.0 / (1.0 + np.exp(-10.0 * (t - 0.5))) + rng.normal(0, 0.3, t.size)
    exponential = np.exp(3.0 * t) + rng.normal(0, 0.3, t.size)
    assert detect(logistic) == []
    assert detect(exponential) == []


@pytest.mark.parametrize("seed", range(3))
def test_the_ends_of_a_linear_ramp_are_still_change_points(seed: int) -> None:
    """A gradual bend is merged, but a ramp between two plateaus bends abruptly at its ends:
    those kinks are change points (the transition test must not take the ramp for a bend)."""
    rng = np.random.default_rng(110 + seed)
    t = np.arange(300.0)
    x = 20.0 * np.clip((t - 100) / 80, 0.0, 1.0) + rng.normal(0, 0.5, t.size)
    assert _near(detect(x), [100, 180])


@pytest.mark.parametrize("seed", range(3))
def test_a_fall_a_few_points_wide_is_kept(seed: int) -> None:
    """A level drop spread over 4 points on a trend is a transition, but a brief one beside
    the regimes around it: still a change point."""
    rng = np.random.default_rng(110 + seed)
    t = np.arange(300.0)
    x = 100 + 0.05 * t - 8.0 * np.clip((t - 149) / 4, 0.0, 1.0) + rng.normal(0, 0.5, t.size)
    found = detect(x)
    assert any(abs(f - 151) <= 5 for f in found), found


def test_a_level_shift_is_kept_beside_a_spread_change() -> None:
    rng = np.random.default_rng(21)
    noise = np.r_[rng.normal(0, 1, 250), rng.normal(0, 4, 250)]
    level = np.r_[np.zeros(120), np.full(380, 4.0)]
    assert _near(detect(level + noise), [120, 250], margin=8)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_crash_on_a_rising_price_is_found(seed: int) -> None:
    rng = np.random.default_rng(30 + seed)
    n, crash = 400, 260
    t = np.arange(n)
    fall = np.clip((t - crash + 1) / 3.0, 0.0, 1.0) * 0.35  # -35 % over three days
    log_price = 1.2 * t / n + np.log1p(-fall) + np.cumsum(rng.normal(0, 0.01, n))
    assert _near(detect(100.0 * np.exp(log_price)), [crash])


@pytest.mark.parametrize("seed", range(3))
def test_noise_in_proportion_to_a_growing_level_is_not_a_spread_change(seed: int) -> None:
    """A price that grows 4.5-fold with 5 % noise: its spread grows with it, unchanged on
    the log scale (the crash test's seed 1 had a false spread change for this reason)."""
    rng = np.random.default_rng(70 + seed)
    t = np.arange(400)
    x = 100.0 * np.exp(1.5 * t / 400) * (1.0 + 0.05 * rng.normal(size=t.size))
    assert spread_breaks(x, [], 5) == []


def test_counts_whose_mean_grows_or_steps_have_no_spread_change() -> None:
    """Poisson counts: the spread grows as the square root of the level, unchanged on the
    square-root scale. Over 40 seeds, a mean rising from 1 to 40 had a false spread change
    14 times on the additive scale, and a step from 2 to 12 had one beside it 7 times."""
    rising = [np.random.default_rng(s).poisson(np.linspace(1, 40, 150)) for s in range(40)]
    levels = np.r_[np.full(60, 2.0), np.full(60, 12.0)]
    steps = [np.random.default_rng(s).poisson(levels) for s in range(40)]
    assert all(spread_breaks(x.astype(float), [], 5) == [] for x in rising)
    assert all(spread_breaks(x.astype(float), [60], 5) == [] for x in steps)


def test_overdispersed_counts_are_a_spread_change() -> None:
    """A count whose mean stays at 10 while its variance goes from 10 (Poisson) to 60
    (negative binomial): a real spread change, found within 15 points in most seeds."""
    r = 10.0**2 / (60.0 - 10.0)
    found = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        x = np.r_[rng.poisson(10.0, 150), rng.negative_binomial(r, r / (r + 10.0), 150)]
        found += any(abs(c - 150) <= 15 for c in spread_breaks(x.astype(float), [], 5))
    assert found >= 24


def test_an_outbreak_in_a_short_count_series_is_found() -> None:
    """30 points: 12 near-silent counts (Poisson 0.5), then an outbreak (mean 25, variance
    150). With no spread search below 40 points, the level test pooled the two noise levels
    and missed the start in 8 of 40 seeds; with it, 39 of 40 are found within 2 points."""
    found = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        r = 25.0**2 / (150.0 - 25.0)
        outbreak = rng.negative_binomial(r, r / (r + 25.0), 18)
        x = np.r_[rng.poisson(0.5, 12), outbreak].astype(float)
        found += any(abs(c - 12) <= 2 for c in detect(x))
    assert found >= 36


def test_a_short_decay_with_proportional_noise_has_no_spread_change() -> None:
    """36 points decaying e-fold every 10 with 20 % noise: read on its own scale (too short
    for the scale model), its spread shrinks smoothly with the level. Binary segmentation
    splits it anyway; the step check beyond a line refuses the split (32 of 40 seeds had a
    spread change without it, 1 with it)."""
    t = np.arange(36)
    falsely = 0
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        y = 1000.0 * np.exp(-0.1 * t) * np.exp(0.2 * rng.standard_normal(t.size))
        falsely += spread_breaks(y, [], 3) != []
    assert falsely <= 4


@pytest.mark.parametrize("seed", range(3))
def test_spread_changes_on_positive_series_are_still_found(seed: int) -> None:
    """Additive noise far from zero (sd 1 -> 4 around 100), and proportional noise whose
    coefficient of variation changes (2 % -> 8 % on a growing level)."""
    rng = np.random.default_rng(80 + seed)
    t = np.arange(400)
    additive = 100.0 + np.where(t < 200, 1.0, 4.0) * rng.normal(size=t.size)
    cv = np.where(t < 200, 0.02, 0.08)
    proportional = 100.0 * np.exp(1.5 * t / 400) * (1.0 + cv * rng.normal(size=t.size))
    assert _near(spread_breaks(additive, [], 5), [200], margin=15)
    assert _near(spread_breaks(proportional, [], 5), [200], margin=15)


def test_a_trend_in_a_noisy_regime_is_not_cut_into_steps() -> None:
    rng = np.random.default_rng(40)
    t = np.arange(600)
    x = 0.02 * t + np.r_[rng.normal(0, 0.5, 300), rng.normal(0, 2.0, 300)]
    assert _near(detect(x), [300], margin=10)


def test_a_slope_change_is_a_change_point() -> None:
    """A mild kink (the slope sextuples at 180 of 300, noise 0.3) is reported once, within
    8 points, in at least 28 of 40 seeds (32 now; the misses are placed 10 to 18 points
    late, or once a chance jump nearby is kept instead). One seed was pinned up to the
    twenty-fourth session, and a change of the test's null moved that seed alone."""
    found = 0
    for seed in range(40, 80):
        rng = np.random.default_rng(seed)
        t = np.arange(300, dtype=float)
        x = 0.01 * t + 0.05 * np.maximum(t - 180, 0.0) + rng.normal(0, 0.3, t.size)
        found += _near(detect(x), [180], margin=8)
    assert found >= 28


def test_confirmation_tests_each_candidate_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bottom-up merging re-tests only the neighbours of a merged candidate: at most
    3 tests per candidate, not one per remaining candidate per round."""
    calls = 0
    original = confirm.step_pvalue

    def counted(x: np.ndarray, a: int, tau: int, b: int, reading: Reading = SERIES) -> float:
        nonlocal calls
        calls += 1
        return original(x, a, tau, b, reading)

    monkeypatch.setattr(confirm, "step_pvalue", counted)
    rng = np.random.default_rng(60)
    x = np.cumsum(rng.normal(size=2000))  # a random walk: many candidates, all rejected
    candidates = list(range(20, 2000, 20))
    assert confirm.merge_weakest(x / x.std(), candidates) == []
    assert calls <= 3 * len(candidates)


def test_a_change_whose_first_window_is_too_short_to_test_is_not_merged_first() -> None:
    """A window of 6 points between two chance candidates leaves too few degrees of freedom
    for the test: that is no verdict, not no evidence. So the candidate waits until its
    window has been widened by merging candidates that were tested and showed nothing, and
    a drop of 8 noise sizes is kept in all 20 seeds. (When it tied with those at p = 1, the
    heap took it first, being leftmost, and 6 of the 20 lost it.)"""
    kept = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        x = np.concatenate([np.zeros(6), np.full(4, 3.0), np.full(29, -8.0)])
        x += rng.normal(size=39)
        assert np.isnan(confirm.step_pvalue(x, 6, 10, 12))
        kept += 10 in confirm.merge_weakest(x, [6, 10, 12, 20, 27])
    assert kept == 20
