"""The cycle-null benchmark counts what it says: no cycle in white noise, every planted one."""

from __future__ import annotations

import numpy as np

from benchmarks.bench_cycle_null import NOISES, false_cycles, phase_test_share, screen_share


def test_white_noise_gives_no_cycle_and_a_quiet_phase_test() -> None:
    assert false_cycles(NOISES["white"], 300, series=50, seed=1) == []
    assert phase_test_share(NOISES["white"], 300, 12, series=50, seed=2) <= 0.02


def test_a_planted_cycle_is_counted_every_time() -> None:
    profile = 3.0 * np.sin(2 * np.pi * np.arange(12) / 12)

    def cyclic(rng: np.random.Generator, n: int) -> np.ndarray:
        return profile[np.arange(n) % 12] + rng.normal(size=n)

    assert false_cycles(cyclic, 300, series=20, seed=3) == [12] * 20
    assert phase_test_share(cyclic, 300, 12, series=20, seed=4) == 1.0
    assert screen_share(cyclic, 300, series=20, seed=5) == 1.0


def test_only_the_raw_phase_test_rejects_on_a_random_walk() -> None:
    """The benchmark's two columns measure different tests: on a random walk the test on
    raw values rejects in about a fifth of series at period 168, the prewhitened one near
    its level."""
    walk = NOISES["random walk"]
    assert phase_test_share(walk, 700, 168, series=200, seed=6, prewhiten=False) >= 0.08
    assert phase_test_share(walk, 700, 168, series=200, seed=6) <= 0.02
