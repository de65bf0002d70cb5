"""A recovery is not called a new degradation on a chance wobble, nor a plateau a recovery."""

from __future__ import annotations

import itertools

import numpy as np

from pipeline.analysis.phases import ProviderSeries, _compare, _label

START = np.datetime64("2026-01-05T00", "h")
PER_HOUR = 60
# hour ranges: baseline, degradation, recovery, a three-day stretch of it, more recovery
EDGES = [0, 240, 480, 648, 720, 960]


def _series(seed: int, ttft: list[float], errors: list[float]) -> ProviderSeries:
    """Hourly log TTFT (multiplier per range, noise sd 0.08) and busy errors (rate per
    range) on the ranges of ``EDGES``."""
    rng = np.random.default_rng(seed)
    sizes = np.diff(EDGES)
    level = np.repeat(np.log(ttft), sizes)
    rate = np.repeat(errors, sizes)
    short = np.log(400) + level + rng.normal(0, 0.08, level.size)
    trials = np.full(level.size, PER_HOUR, dtype=np.int64)
    failed = rng.binomial(PER_HOUR, rate)
    return ProviderSeries(
        hours=START + np.arange(level.size), short=short,
        long=short + np.log(4) + rng.normal(0, 0.08, level.size), n=trials, n_errors=failed,
        n_scored=trials - failed, n_correct=trials - failed,
        n_flagged=rng.binomial(PER_HOUR, np.full(level.size, 0.01)),
    )  # fmt: skip


def _labels(s: ProviderSeries) -> list[str]:
    ranges = list(itertools.pairwise(EDGES))
    segments = [_compare(s, r, ranges[0]) for r in ranges[1:]]
    return [seg.label for seg in _label(segments, s)]


def test_a_recovery_stays_a_recovery_through_a_stretch_of_chance_errors() -> None:
    """Recovery at TTFT x1.2 and errors 3 % (baseline 2 %, degradation 8 %) throughout;
    the three-day stretch has the same rates. The old rule compared point estimates, so
    the stretch became a new major degradation whenever its error rate came out a little
    above the recovery's before it (about half the seeds)."""
    relapses = [
        seed
        for seed in range(20)
        if _labels(_series(900 + seed, [1, 1.6, 1.2, 1.2, 1.1], [0.02, 0.08, 0.03, 0.03, 0.025]))
        != ["degraded", "recovering", "recovering", "recovering"]
    ]
    assert len(relapses) <= 1, relapses


def test_a_real_relapse_and_a_plateau_are_still_degradations() -> None:
    for seed in range(5):
        # errors triple again in the stretch: a relapse, not a recovery
        relapse = _series(950 + seed, [1, 1.6, 1.2, 1.2, 1.1], [0.02, 0.08, 0.03, 0.09, 0.025])
        assert _labels(relapse)[2] == "degraded", seed
        # the degradation goes on at the same level after a boundary: nothing got better
        plateau = _series(960 + seed, [1, 1.6, 1.6, 1.6, 1.6], [0.02, 0.08, 0.08, 0.08, 0.08])
        assert _labels(plateau) == ["degraded"] * 4, seed
