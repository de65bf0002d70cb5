"""Phases search daily error rates on the scale the rate change points use
(``metric_rows.search_scale``), so a step in bursty errors starts a segment."""

from __future__ import annotations

import numpy as np

from pipeline.analysis.phases import ProviderSeries, candidate_breaks
from tests.test_rate_change_pvalues import DAYS, PER_HOUR, _busy

STEP_HOUR = 30 * 24


def _series(seed: int) -> ProviderSeries:
    """Flat short-context TTFT and busy errors x3 from day 30 (busy hours, quiet days)."""
    rng = np.random.default_rng(300 + seed)
    rate = np.where(np.arange(DAYS * 24) >= STEP_HOUR, 0.06, 0.02)
    busy = _busy(rng, rate, 0.0, 0.2).astype(np.int64)
    latency = np.random.default_rng(seed).normal(0.0, 0.2, busy.size)
    return ProviderSeries(
        hours=np.arange(busy.size).astype("datetime64[h]"),
        short=latency,
        n=np.full(busy.size, PER_HOUR, dtype=np.int64),
        n_errors=busy,
    )


def test_a_step_in_bursty_errors_gives_a_phase_boundary() -> None:
    """Searched on the raw daily rate, whose noise triples with the step, the boundary was
    within 3 days of day 30 in 11 of 16 seeds; on the empirical logit in 15 of 16. No
    other boundary is cut in these series."""
    near, other = 0, 0
    for seed in range(16):
        breaks = candidate_breaks(_series(seed))
        close = [b for b in breaks if abs(b - STEP_HOUR) <= 72]
        near += bool(close)
        other += len(breaks) - len(close)
    assert near >= 14, near
    assert other <= 1, other
