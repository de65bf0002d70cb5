"""p-values of change points that a search placed, honest about the search and about
dependent noise.

A search puts a break where the two sides differ most, so a two-sample test at that
position alone is optimistic; and neighbouring hours (or days) are no independent draws,
so a test that takes them as such is optimistic again. Latency breaks are tested for a
change of level anywhere between their neighbours (a max-type statistic over every
position the break could have taken, self-normalized so dependent hours do not count as
independent); rate breaks' dispersion is widened for busy spells that last days. The
neighbours themselves were also chosen by the search and are not adjusted for.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import NDArray
from scipy import stats

__all__ = ["day_dependence", "level_change_pvalue", "self_normalized"]

FloatArray = NDArray[np.float64]

_MIN_POINTS = 12
_MIN_DAYS = 7
_MAX_RHO = 0.9
# Upper quantiles of ``self_normalized`` under no change (white noise, 2,000 points,
# 100,000 replications: benchmarks/make_self_normalized_quantiles.py; Shao and Zhang's
# table has 29.6, 40.1, 68.6 at 10, 5, 1 %).
_TAIL = (0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002)
_QUANTILE = (7.71, 13.7, 19.2, 29.71, 41.32, 58.33, 72.4, 88.45, 112.84, 129.29, 146.93, 170.5)


def self_normalized(x: FloatArray) -> float:
    """Shao and Zhang's (2010) self-normalized CUSUM statistic, sup over k of
    T(k)^2 / V(k): the squared CUSUM at k over the spread of the partial sums within each
    side of k, so no long-run variance (and no bandwidth) is estimated, and a real change
    does not inflate the denominator (each side is centred on its own mean)."""
    n = x.size
    s = np.cumsum(x)
    t = np.arange(1, n + 1, dtype=np.float64)
    k = t[:-1]
    cusum = s[:-1] - k / n * s[-1]
    # left: sum over t <= k of (S_t - t / k S_k)^2, from prefix sums
    left = np.cumsum(s**2)[:-1] - 2 * s[:-1] / k * np.cumsum(t * s)[:-1]
    left += (s[:-1] / k) ** 2 * np.cumsum(t**2)[:-1]
    # right: sum over t > k of (R_t - w_t / (n - k) R_(k+1)), R_t = sum from t on, w_t = n - t + 1
    r = s[-1] - np.concatenate([[0.0], s[:-1]])
    w = n - t + 1

    def suffix(v: FloatArray) -> FloatArray:
        return np.cumsum(v[::-1])[::-1][1:]

    lead = r[1:] / (n - k)
    right = suffix(r**2) - 2 * lead * suffix(w * r) + lead**2 * suffix(w**2)
    v = (left + right) / n
    ok = v > 1e-12 * max(1.0, float(np.max(np.abs(v))))
    return float(np.max(cusum[ok] ** 2 / v[ok])) if ok.any() else 0.0


def level_change_pvalue(window: FloatArray) -> float:
    """Two-sided p-value that the level of ``window`` (hourly values between a break's
    neighbours; NaN ignored) changes somewhere in it; NaN with under 12 values.

    ``self_normalized`` of the centred ranks (heavy tails and outliers weigh no more than
    any other hour), against its simulated null quantiles (log p interpolated between
    them; below 0.0002 reported as 0.0002, an upper bound). It allows for dependence that
    fades (hourly AR noise) without a bandwidth; noise that wanders for days still looks
    like a change now and then: on 60-day changeless hourly series with hourly AR(1)
    0.3-0.85, a day-to-day AR(1) wander and a daily cycle, deseasonalized as the analysis
    does, p < 0.05 in 21 of 240 series (8.8 %; the plain test at the chosen break: 72),
    and a 20 % step keeps p < 0.05 in 18 of the 21 series where the search found it
    (tests/test_latency_change_pvalues.py). A long-run variance around the window's mean
    (Bartlett) held the level but lost all power in windows under a few weeks."""
    v = window[np.isfinite(window)]
    if v.size < _MIN_POINTS:
        return float("nan")
    u = stats.rankdata(v) / (v.size + 1) - 0.5
    g = self_normalized(u)
    log_tail = np.interp(g, (0.0, *_QUANTILE), np.log((1.0, *_TAIL)))
    return float(math.exp(log_tail))


def day_dependence(
    events: NDArray[np.integer], trials: NDArray[np.integer], edges: list[int]
) -> float:
    """How much busy spells lasting days inflate the variance of a segment's total count
    beyond the day-to-day dispersion: (1 + rho) / (1 - rho), rho the lag-1 autocorrelation
    of the days' Pearson residuals around their own segment's rate (``edges``: 0, the
    change points, the number of days), bias-corrected (rho + (1 + 3 rho) / days, the
    AR(1) estimator's bias) and clipped to [0, 0.9]; 1.0 under 7 days with trials.

    ``effects.piecewise_dispersion`` sees how much days vary, not that a busy day is
    followed by busy days, so spells lasting days read as a change. Residuals around the
    fitted segments keep a real step out of rho (around one pooled rate, a x3 step made rho
    0.9 and its p-value 0.1); the segments also absorb part of a spell, so long spells are
    still undercounted (measured in tests/test_rate_change_pvalues.py)."""
    e_all = np.asarray(events, dtype=np.float64)
    n_all = np.asarray(trials, dtype=np.float64)
    r = np.full(e_all.size, np.nan)
    for lo, hi in itertools.pairwise(edges):
        e, n = e_all[lo:hi], n_all[lo:hi]
        days = n > 0
        if not 0 < e[days].sum() < n[days].sum():
            continue
        rate = e[days].sum() / n[days].sum()
        r[lo:hi][days] = (e[days] - n[days] * rate) / np.sqrt(n[days] * rate * (1 - rate))
    kept = np.isfinite(r)
    pairs = kept[:-1] & kept[1:]
    denom = float(r[kept] @ r[kept])
    if kept.sum() < _MIN_DAYS or denom <= 0.0:
        return 1.0
    rho = float(r[:-1][pairs] @ r[1:][pairs]) / denom
    rho = float(np.clip(rho + (1 + 3 * rho) / kept.sum(), 0.0, _MAX_RHO))
    return (1.0 + rho) / (1.0 - rho)
