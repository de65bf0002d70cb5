"""A series that starts degraded starts with its degradation, not a stable hour."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from pipeline.analysis.phases import ProviderSeries, find_phases
from pipeline.analysis.release_cycles import onsets

START = np.datetime64("2026-06-01T13", "h")
PER_HOUR = 60


def _starts_degraded(seed: int, calm_hours: int) -> ProviderSeries:
    """TTFT x1.6 and errors 8 % from the start (after ``calm_hours`` at the later level)
    for 17 days, then 43 days at TTFT 400 ms and 2 % errors."""
    rng = np.random.default_rng(seed)
    hour = np.arange(60 * 24)
    bad = (hour >= calm_hours) & (hour < 17 * 24)
    short = np.log(400) + np.where(bad, np.log(1.6), 0.0) + rng.normal(0, 0.08, hour.size)
    trials = np.full(hour.size, PER_HOUR, dtype=np.int64)
    errors = rng.binomial(PER_HOUR, np.where(bad, 0.08, 0.02))
    return ProviderSeries(
        hours=START + hour, short=short, long=short + np.log(4) + rng.normal(0, 0.08, hour.size),
        n=trials, n_errors=errors, n_scored=trials - errors, n_correct=trials - errors,
        n_flagged=rng.binomial(PER_HOUR, np.full(hour.size, 0.01)),
    )  # fmt: skip


def _starts(s: ProviderSeries) -> list[tuple[str, datetime]]:
    phases, _ = find_phases(s)
    return [(p.label, s.hours[p.start].astype("datetime64[s]").item().replace(tzinfo=UTC))
            for p in phases]  # fmt: skip


def test_a_departure_fitted_before_the_data_starts_the_series_degraded() -> None:
    """The onset's ramp fit placed the departure at the first hour or before it, and the
    old code kept a stable phase of one hour before the degradation (seed 2; the demo's
    sable, whose history starts degraded, did the same)."""
    for seed in range(3):
        first = _starts(_starts_degraded(seed, calm_hours=1))[0]
        assert first == ("degraded", START.astype("datetime64[s]").item().replace(tzinfo=UTC))


def test_the_start_of_the_data_is_no_onset_without_days_of_calm_before() -> None:
    """Eight or thirty calm hours before the degradation stay a stable phase (that is what
    the data show), but no release-cycle onset: a departure needs a normal to depart
    from, three days as a baseline does. The old count took each for an onset."""
    for calm in (8, 30):
        starts = _starts(_starts_degraded(0, calm_hours=calm))
        assert starts[0][0] == "stable" and starts[1][0] == "degraded", starts
        assert onsets(starts) == [], starts
    day = datetime(2026, 6, 1, tzinfo=UTC)
    three_days = [("stable", day), ("degraded", day + timedelta(hours=72))]
    assert onsets(three_days) == [day + timedelta(hours=72)]
    assert onsets([("stable", day), ("degraded", day + timedelta(hours=71))]) == []
