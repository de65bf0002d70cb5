"""The daily probability that a provider was degraded: a two-regime Markov switching model
on daily median TTFT where a second regime shows, otherwise the share of each day spent in
non-stable phases."""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import NDArray

from pipeline.analysis.grouped import group_medians
from pipeline.analysis.phase_types import FloatArray, Phase, ProviderSeries
from pipeline.analysis.phases import MIN_LATENCY_EFFECT

__all__ = ["daily_probability"]


def daily_probability(
    s: ProviderSeries, phases: list[Phase], seed: int = 0
) -> tuple[NDArray[np.datetime64], FloatArray, str]:
    """(days, p_degraded, method) per UTC day covered by the series."""
    days_idx = s.hours.astype("datetime64[D]")
    days, inverse = np.unique(days_idx, return_inverse=True)
    degraded_hour = np.zeros(s.short.size)
    for ph in phases:
        if ph.label != "stable":
            degraded_hour[ph.start : ph.end] = 1.0
    from_phases = np.bincount(inverse, weights=degraded_hour) / np.bincount(inverse)
    ok = np.isfinite(s.short)
    daily, _ = group_medians(s.short[ok], inverse[ok], days.size)
    markov = _markov(daily, seed)
    if markov is None:
        return days, from_phases, "phases"
    return days, markov, "markov"


def _markov(daily: FloatArray, seed: int) -> FloatArray | None:
    """Smoothed probability of the high-TTFT regime, or None when no second regime shows."""
    ok = np.isfinite(daily)
    if ok.sum() < 30:
        return None
    from statsmodels.tsa.regime_switching.markov_regression import MarkovRegression

    y = np.interp(np.arange(daily.size), np.flatnonzero(ok), daily[ok])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = MarkovRegression(y, k_regimes=2, trend="c", switching_variance=True)
            res = model.fit(search_reps=2, disp=False, rng=np.random.default_rng(seed))
    except (np.linalg.LinAlgError, ValueError, RuntimeError, FloatingPointError):
        # Known statsmodels quirks (SVD not converging, NaN likelihood): fall back to phases.
        return None
    params = np.asarray(res.params)
    names = list(model.param_names)
    means = [float(params[names.index(f"const[{i}]")]) for i in range(2)]
    high = int(np.argmax(means))
    if abs(means[1] - means[0]) < math.log1p(MIN_LATENCY_EFFECT):
        return None
    probs = np.asarray(res.smoothed_marginal_probabilities)
    p = np.clip(np.asarray(probs[:, high] if probs.ndim == 2 else probs, dtype=np.float64), 0, 1)
    # A fit can settle on one absorbing regime that holds every day (the other one empty):
    # that is one regime, not "degraded all along".
    in_high = p >= 0.5
    if in_high.all() or not in_high.any():
        return None
    return p
