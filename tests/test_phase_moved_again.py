"""A degradation that holds one level is one phase; one that worsens again is two.

``phases._moved_again`` splits a degraded phase where its severity signal moves again.
Its Mann-Whitney compares stretches the search chose, so load that wanders for days split
single steps; the split is now gated like a segment's test (``series_change_pvalue`` on
the phase's own stretch, at 1 %). Series: ``test_latency_change_pvalues``'s noise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline.analysis.phases import ProviderSeries, find_phases
from pipeline.analysis.seasonality import decompose
from tests.test_latency_change_pvalues import HOURS, STEP_HOUR, _latency


def _degraded_phases(x: np.ndarray) -> list[tuple[int, int]]:
    s = ProviderSeries(hours=HOURS, short=decompose(HOURS, x).adjusted)
    phases, _ = find_phases(s)
    return [(p.start, p.end) for p in phases if p.label == "degraded"]


@pytest.mark.parametrize("seed", [5018, 5029])
def test_a_single_step_is_one_degraded_phase(seed: int) -> None:
    """TTFT x1.3 from day 30 and nothing after: before the gate, the search's cut inside
    the degradation split it into two degraded phases (seed 5018: hours 648-1170 and
    1170-1440, severities 32 % and 43 %; 5029: 720-842 and 842-1440). One phase now."""
    x = _latency(np.random.default_rng(seed))
    x += math.log(1.3) * (np.arange(x.size) >= STEP_HOUR)
    after = [(lo, hi) for lo, hi in _degraded_phases(x) if hi > STEP_HOUR]
    assert len(after) == 1, after
    assert abs(after[0][0] - STEP_HOUR) <= 72 and after[0][1] == x.size, after


def test_a_second_step_still_starts_a_new_phase() -> None:
    """Guard: x1.3 from day 30 and x1.7 from day 45 are two degraded phases, split within
    a day of the second step."""
    x = _latency(np.random.default_rng(5002))
    t = np.arange(x.size)
    x += math.log(1.3) * (t >= STEP_HOUR) + math.log(1.7 / 1.3) * (t >= STEP_HOUR + 15 * 24)
    starts = [lo for lo, _ in _degraded_phases(x)]
    assert any(abs(lo - STEP_HOUR - 15 * 24) <= 24 for lo in starts), starts
