"""The phases' baseline is a good state on every signal, not only the fastest one."""

from __future__ import annotations

import numpy as np

from pipeline.analysis.phases import ProviderSeries, find_phases

START = np.datetime64("2026-01-05T00", "h")
PER_HOUR = 60
DAYS = 60


def _shedding_then_error_rise(seed: int) -> ProviderSeries:
    """Errors 2 % and TTFT 400 ms, except days 20-30 (the provider sheds load: TTFT -10 %,
    errors 10 %) and days 44-54 (errors x3, 6 %, latency unchanged)."""
    rng = np.random.default_rng(seed)
    day = np.arange(DAYS * 24) // 24
    shedding = (day >= 20) & (day < 30)
    rise = (day >= 44) & (day < 54)
    rate = np.where(shedding, 0.10, np.where(rise, 0.06, 0.02))
    short = np.log(400) + np.where(shedding, np.log(0.9), 0.0) + rng.normal(0, 0.08, day.size)
    trials = np.full(day.size, PER_HOUR, dtype=np.int64)
    errors = rng.binomial(PER_HOUR, rate)
    return ProviderSeries(
        hours=START + np.arange(day.size), short=short,
        long=short + np.log(4) + rng.normal(0, 0.08, day.size), n=trials, n_errors=errors,
        n_scored=trials - errors, n_correct=trials - errors,
        n_flagged=rng.binomial(PER_HOUR, np.full(day.size, 0.01)),
    )  # fmt: skip


def test_a_fast_stretch_with_many_errors_is_no_baseline_and_hides_no_later_rise() -> None:
    """The old baseline was the segment with the lowest TTFT alone: the fast, error-heavy
    days 20-30. Against its 10 % the later rise to 6 % is no rise, so it went unreported,
    and the shedding itself was never a degradation. Now a segment whose errors, accuracy
    or flags are worse than another sustained segment's cannot be the baseline."""
    for seed in range(5):
        phases, _ = find_phases(_shedding_then_error_rise(700 + seed))
        seen = [(p.stage, round(p.start / 24, 1), round(p.end / 24, 1), p.signals) for p in phases]
        errors = [p for p in phases if "error_rate" in p.signals]
        assert any(p.start <= 46 * 24 and p.end >= 52 * 24 for p in errors), (seed, seen)
        assert any(p.start <= 22 * 24 and p.end >= 28 * 24 for p in errors), (seed, seen)
        for p in errors:  # errors only where they rose
            assert p.start >= 19 * 24 and not (31 * 24 <= p.start < 43 * 24), (seed, seen)
