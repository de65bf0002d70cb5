"""Re-placing confirmed changes (``changepoints.locate``): a kink found a few points off is
moved onto it; a step, or a position the data cannot reject, stays where it was."""

from __future__ import annotations

import numpy as np
import pytest

import pipeline.analysis.changepoints as changepoints
from pipeline.analysis.changepoints import detect
from pipeline.analysis.changepoints.locate import relocate

AT = 90


def _kink(seed: int, sd: float = 0.3, n: int = 200) -> np.ndarray:
    """A line whose slope rises by 0.1 per point at ``AT`` (continuous: no jump)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=float)
    return 0.02 * t + 0.1 * np.maximum(t - AT, 0.0) + rng.normal(0, sd, n)


def _step(seed: int, rho: float, n: int = 200) -> np.ndarray:
    """A jump of 2 noise sd at ``AT`` in AR(1) noise."""
    rng = np.random.default_rng(seed)
    e = rng.normal(0, 1, n)
    for i in range(1, n):
        e[i] += rho * e[i - 1]
    return np.r_[np.zeros(AT), np.full(n - AT, 2.0)] + e


@pytest.mark.parametrize("offset", [-8, -4, 4, 8])
def test_a_kink_found_a_few_points_off_is_moved_onto_it(offset: int) -> None:
    """Measured: 48-50 of 50 seeds land within 2 points of the kink."""
    landed = sum(abs(relocate(_kink(seed), [AT + offset], 5)[0] - AT) <= 2 for seed in range(20))
    assert landed >= 18


def test_a_kink_found_in_place_stays() -> None:
    """The position moves only when the data reject it at 5 %: measured 98 of 100 kept."""
    kept = sum(relocate(_kink(seed), [AT], 5) == [AT] for seed in range(100))
    assert kept >= 95


@pytest.mark.parametrize("rho", [0.0, 0.5])
@pytest.mark.parametrize("found_at", [AT, AT + 3])
def test_a_step_stays_where_the_search_put_it(rho: float, found_at: int) -> None:
    """A jump is the search's own least-squares position already; moving it under a
    curve's model in dependent noise would only add error. Measured 100 of 100 kept."""
    kept = sum(relocate(_step(seed, rho), [found_at], 5) == [found_at] for seed in range(100))
    assert kept >= 97


def test_a_change_with_a_neighbour_close_by_stays() -> None:
    """Two changes a few points apart bound a short transition (a ramp's two ends, as in
    the product's hourly latency): neither end is a lone kink, so neither moves; a fixed
    edge (a spread change) counts as a neighbour and is not returned."""
    rng = np.random.default_rng(0)
    t = np.arange(200.0)
    ramp = np.clip((t - 90) / 8, 0, 1) * 4 + rng.normal(0, 0.3, 200)
    assert relocate(ramp, [92, 100], 5) == [92, 100]
    assert relocate(_kink(0), [AT + 8], 5, fixed=(AT + 3,)) == [AT + 8]


def _bump(seed: int) -> np.ndarray:
    """Up by 3 at 20, rising to 6, back down over five points from 31: a daily error rate
    during a short incident."""
    rng = np.random.default_rng(seed)
    level = np.r_[np.zeros(20), np.linspace(3, 6, 11), np.linspace(2.5, 0, 5), np.zeros(9)]
    return level + rng.normal(0, 1.0, 45)


def test_a_step_into_a_bump_stays_when_its_fall_was_not_confirmed() -> None:
    """Only the rise is confirmed, so the window holds the fall too. A quadratic plus a kink
    draws the bump and would move the rise to its top; against a line, a jump wins, so
    the rise stays. Measured: 100 of 100 kept; 80 (19 moved > 5 points) when the
    quadratic alone judged kink against jump."""
    kept = sum(relocate(_bump(seed), [20], 5) == [20] for seed in range(100))
    assert kept >= 97


def test_the_product_error_rate_step_stays_on_its_day() -> None:
    """The planted history of the orchestration test (errors x4 from day 20, daily error
    rate standardised as detect() sees it): the step is not moved to day 28. The fall back
    at day 35, where the planted episode ends, is found too since the level pass runs
    beside confirmed changes (the smooth-curve test through days 20-44 let it go)."""
    before = [0.5, -1.0, -1.4, 0.9, 1.0, -0.5, -0.5, -0.5, 0.5, -0.5, 0.0, -0.5, -0.5, 1.0]
    before += [-1.4, -1.0, -1.0, -1.4, -1.0, 0.0]
    during = [3.8, 4.3, 1.9, 2.9, 5.2, 1.0, 2.9, 3.8, 5.7, 5.2, 6.2, 1.4, 2.4, 3.3, 1.9]
    after = [0.0, -1.9, -1.0, -0.5, -0.5, -0.5, 0.5, 0.0, 0.0, -1.9]
    x = np.array([*before, *during, *after])
    assert relocate(x, [20], 5) == [20]
    assert detect(x) == [20, 35]


def test_detect_places_kinks_within_two_points(monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end, over 40 seeds: one change within 2 points of the kink 34 times; 7 times
    with the search's positions kept (relocation switched off, below)."""

    def alone_near(values: np.ndarray) -> bool:
        found = detect(values)
        return len(found) == 1 and abs(found[0] - AT) <= 2

    assert sum(alone_near(_kink(seed)) for seed in range(40)) >= 30
    monkeypatch.setattr(changepoints, "relocate", lambda x, breaks, *_: sorted(breaks))
    assert sum(alone_near(_kink(seed)) for seed in range(40)) <= 15
