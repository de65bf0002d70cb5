"""How often the whole phase search and test calls a changeless latency series changed,
and whether a clear step still makes a phase.

The series are ``test_latency_change_pvalues``'s: 60 days of hourly log TTFT with a daily
cycle, hourly AR(1) noise (rho 0.3-0.85), a day-to-day load wander, 1 % heavy-tailed
hours and a prober gap, deseasonalized as the analysis does; fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from pipeline.analysis.break_tests import series_change_pvalue
from pipeline.analysis.phases import ProviderSeries, find_phases
from pipeline.analysis.seasonality import decompose
from tests.test_latency_change_pvalues import HOURS, STEP_HOUR, _latency

SERIES = 100


def _phase_pvalues(x: np.ndarray) -> tuple[list[float], list[str]]:
    """Short-context TTFT p-values of every segment the phases tested, and phase labels."""
    s = ProviderSeries(hours=HOURS, short=decompose(HOURS, x).adjusted)
    phases, segments = find_phases(s)
    pvalues = [g.pvalues["ttft_short"] for g in segments if "ttft_short" in g.pvalues]
    return pvalues, [p.label for p in phases]


@pytest.mark.slow
def test_changeless_series_get_a_small_phase_pvalue_far_less_often() -> None:
    """The phase test at the boundaries the search chose (a deflated Mann-Whitney, no
    gate) rejected on 114 and 101 of 400 such series at 5 % and 1 % (28.5 %, 95 %
    24.1-33.2 %; 25.2 %, 21.1-29.8 %) and put a degraded phase on 71 (17.8 %). Gated by
    the whole-series test (``phases.series_gate``): 49 and 35 of 400 (12.2 %, 9.2-15.9 %;
    8.8 %, 6.2-12.0 %), degraded phases on 32 (8.0 %). Still above nominal: the gate's
    long-run variance comes from an AR fitted around the segments the search cut, and a
    wander lasting days is partly cut away. On these 100 seeds the gated counts are 11,
    10 and 9; the bounds below are those of a rate of 20 % (one-sided 99 %), which the
    ungated test exceeds."""
    at_5 = at_1 = degraded = 0
    for seed in range(10000, 10000 + SERIES):
        pvalues, labels = _phase_pvalues(_latency(np.random.default_rng(seed)))
        at_5 += min(pvalues, default=1.0) < 0.05
        at_1 += min(pvalues, default=1.0) < 0.01
        degraded += "degraded" in labels
    assert at_1 <= binom.ppf(0.01, SERIES, 0.20), (at_5, at_1, degraded)  # 11
    assert degraded <= binom.ppf(0.01, SERIES, 0.20), (at_5, at_1, degraded)


@pytest.mark.slow
def test_a_30_percent_step_still_makes_a_degraded_phase() -> None:
    """TTFT x1.3 from day 30 on the same noise: a degraded phase starting within a day of
    the step, with a phase p-value under 0.01, in 15 of 20 series (the whole-series gate's
    price: the day-to-day wander is as large as a sixth of the step)."""
    found = 0
    for seed in range(20):
        x = _latency(np.random.default_rng(5000 + seed))
        x += math.log(1.3) * (np.arange(x.size) >= STEP_HOUR)
        s = ProviderSeries(hours=HOURS, short=decompose(HOURS, x).adjusted)
        phases, _ = find_phases(s)
        found += any(
            p.label == "degraded" and abs(p.start - STEP_HOUR) <= 24 and p.confidence > 0.99
            for p in phases
        )
    assert found >= 14, found


def test_series_change_pvalue_reads_a_phase_that_comes_back() -> None:
    """A level that moves by a third of the noise's sd for a quarter of the series and
    comes back: the whole-series test finds it (p < 0.001), where independent noise
    without it is no surprise; under 12 values there is no test."""
    rng = np.random.default_rng(3)
    flat = rng.normal(0, 1, 2880)
    t = np.arange(2880)
    bump = flat + 0.3 * ((t >= 1200) & (t < 1920))
    assert series_change_pvalue(flat, [0, 2880]) > 0.05
    assert series_change_pvalue(bump, [0, 1200, 1920, 2880]) < 0.001
    assert math.isnan(series_change_pvalue(np.array([1.0, np.nan] * 6), [0, 12]))
