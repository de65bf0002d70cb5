"""p-values of change points that a search placed, honest about the search and about
dependent noise.

A search puts a break where the two sides differ most, so a two-sample test at that
position alone is optimistic; and neighbouring hours (or days) are no independent draws,
so a test that takes them as such is optimistic again. Latency breaks are tested for a
change of level anywhere between their neighbours (a max-type statistic over every
position the break could have taken, self-normalized, and calibrated by simulating it on
an autoregression fitted to the window); rate breaks' dispersion is widened for busy
spells that last days. The neighbours themselves were also chosen by the search and are
not adjusted for there. ``series_change_pvalue`` has no such neighbours: it tests the
whole series for a level that moves anywhere (and may come back), so phases, which
compare stretches the search chose, can require it too (``phases.series_gate``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import stats
from scipy.signal import lfilter

__all__ = ["day_dependence", "level_change_pvalue", "self_normalized", "series_change_pvalue"]

FloatArray = NDArray[np.float64]

_MIN_POINTS = 12
_MIN_DAYS = 7
_MAX_RHO = 0.9
_REPLICATIONS = 99  # p-values from 0.01 (= 1 / 100: "0.01 or less") upwards
_MAX_AR_ORDER = 48  # two days of hours: enough lags for load that wanders for days
_MAX_SIMULATED = 400  # longer windows are simulated at this length (conservative, cheap)
_BURN_IN = 300
_SEED = 20100901


def self_normalized(x: FloatArray) -> float:
    """Shao and Zhang's (2010) self-normalized CUSUM statistic, sup over k of
    T(k)^2 / V(k): the squared CUSUM at k over the spread of the partial sums within each
    side of k, so no long-run variance (and no bandwidth) is estimated, and a real change
    does not inflate the denominator (each side is centred on its own mean)."""
    return float(_self_normalized_rows(x[None, :])[0])


def _self_normalized_rows(x: FloatArray) -> FloatArray:
    """``self_normalized`` of each row of ``x`` (replications, points), from prefix sums."""
    reps, n = x.shape
    s = np.cumsum(x, axis=1)
    t = np.arange(1, n + 1, dtype=np.float64)
    k = t[:-1]
    cusum = s[:, :-1] - k / n * s[:, -1:]
    # left: sum over t <= k of (S_t - t / k S_k)^2
    left = np.cumsum(s**2, axis=1)[:, :-1] - 2 * s[:, :-1] / k * np.cumsum(t * s, axis=1)[:, :-1]
    left += (s[:, :-1] / k) ** 2 * np.cumsum(t**2)[:-1]
    # right: sum over t > k of (R_t - w_t / (n - k) R_(k+1)), R_t = sum from t on, w_t = n - t + 1
    r = s[:, -1:] - np.concatenate([np.zeros((reps, 1)), s[:, :-1]], axis=1)
    w = n - t + 1

    def suffix(v: FloatArray) -> FloatArray:
        return np.cumsum(v[..., ::-1], axis=-1)[..., ::-1][..., 1:]

    lead = r[:, 1:] / (n - k)
    right = suffix(r**2) - 2 * lead * suffix(w * r) + lead**2 * suffix(w**2)
    v = (left + right) / n
    ok = v > 1e-12 * np.maximum(1.0, np.max(np.abs(v), axis=1, keepdims=True))
    ratio = np.where(ok, cusum**2 / np.where(ok, v, 1.0), 0.0)
    return np.asarray(ratio.max(axis=1), dtype=np.float64)


def _autoregression(x: FloatArray, max_order: int) -> FloatArray:
    """Coefficients of the AR(p) that fits ``x`` (mean zero) best by AIC, p <= ``max_order``
    (Levinson-Durbin on the biased autocovariances: always a stationary fit)."""
    return _autoregression_with_variance(x, max_order)[0]


def _autoregression_with_variance(x: FloatArray, max_order: int) -> tuple[FloatArray, float]:
    """``_autoregression``'s coefficients and the fit's innovation variance."""
    n = x.size
    max_order = max(1, min(max_order, n // 10))
    f = np.fft.rfft(x, 2 * n)
    acov = np.fft.irfft(f * np.conj(f))[: max_order + 1] / n
    if acov[0] <= 0.0:
        return np.zeros(0), 0.0
    phi, var = np.zeros(0), float(acov[0])
    best, best_aic, best_var = np.zeros(0), n * math.log(var), var
    for p in range(1, max_order + 1):
        k = (acov[p] - phi @ acov[p - 1 : 0 : -1]) / var
        phi = np.concatenate([phi - k * phi[::-1], [k]])
        var *= 1.0 - k * k
        if var <= 0.0:
            break
        aic = n * math.log(var) + 2 * p
        if aic < best_aic:
            best, best_aic, best_var = phi.copy(), aic, var
    return best, best_var


def level_change_pvalue(window: FloatArray, at: int) -> float:
    """Two-sided p-value that the level of ``window`` (hourly values between a break's
    neighbours; NaN ignored; the break at index ``at``) changes somewhere in it; NaN with
    under 12 values.

    ``self_normalized`` of the centred ranks (heavy tails and outliers weigh no more than
    any other hour), against its distribution on ``_REPLICATIONS`` Gaussian series from
    the AR(p) (AIC, p <= 48) fitted to the ranks centred on each side's mean (a sieve
    bootstrap; the break's own step kept out of the fit, so a real change is not taken
    for persistence). It assumes the ranks, level apart, are a stationary autoregression
    of at most two days' memory. Self-normalizing alone allowed for dependence that fades
    within hours, not for load that wanders for days (white-noise critical values gave
    p < 0.05 in 6-9 % of changeless series). Windows over 400 values are simulated at 400:
    more distortion, so larger critical values (conservative), at a tenth of the cost.
    Measured in tests/test_latency_change_pvalues.py: 400 changeless 60-day hourly series
    (fixed seeds) with hourly AR(1) 0.3-0.85, a day-to-day AR(1) wander and a daily cycle,
    deseasonalized as the analysis does: p < 0.05 in 10 (2.5 %; white-noise quantiles: 25,
    6.2 %); a 20 % step keeps p < 0.05 in 31 of the 38 series where the search found it
    (white-noise quantiles: 32). The smallest p is 0.01, i.e. "0.01 or less"."""
    finite = np.isfinite(window)
    v = window[finite]
    if v.size < _MIN_POINTS:
        return float("nan")
    split = int(np.count_nonzero(finite[:at]))
    u = stats.rankdata(v) / (v.size + 1) - 0.5
    observed = self_normalized(u)
    sides = np.concatenate([u[:split] - u[:split].mean(), u[split:] - u[split:].mean()])
    ar = np.concatenate([[1.0], -_autoregression(sides, _MAX_AR_ORDER)])
    n = min(v.size, _MAX_SIMULATED)
    noise = np.random.default_rng(_SEED).normal(size=(_REPLICATIONS, n + _BURN_IN))
    simulated = lfilter([1.0], ar, noise, axis=1)[:, _BURN_IN:]
    exceed = int(np.count_nonzero(_self_normalized_rows(simulated) >= observed))
    return (1 + exceed) / (1 + _REPLICATIONS)


def series_change_pvalue(x: FloatArray, edges: Sequence[int]) -> float:
    """p-value that the level of the whole series ``x`` (hourly; NaN ignored) changes
    anywhere in it; ``edges``: 0, the breaks a search found, ``x.size``. NaN with under
    12 values.

    The series' own ends bound the window, so nothing the search chose enters the
    statistic: the largest change of level over every pair of positions a phase could
    start and end at, the range of the CUSUM of the centred ranks,
    (max_k B_k - min_k B_k) / sqrt(n lrv) with B_k = S_k - k S_n / n, and its null is that
    maximum's: the range of a Brownian bridge (Kuiper's distribution; no floor, no
    simulation). The range, not the largest |B_k| (one break), because a phase is mostly a
    level that moves and comes back, where a one-break statistic loses most of its power;
    a single step pays a little (5 % critical value 1.75 against 1.36).

    lrv, the long-run variance of the ranks, is ``_day_long_run_variance``'s: days are the
    unit, because load wanders from day to day and an hourly autoregression of at most two
    days' memory took that slow part for noise that fades (p < 0.01 on 8.8 % of changeless
    series). Under a week of days it is the hourly AR(p)'s (AIC, p <= 48). Both centre the
    ranks on each segment's mean, so a real change is not taken for persistence. It
    assumes ranks whose departures from their segment's level are stationary, with a
    day-to-day part that fades like an ARMA(1, 1); measured in
    tests/test_phase_false_alarms.py and benchmarks/bench_phase_null.py."""
    finite = np.isfinite(x)
    v = x[finite]
    if v.size < _MIN_POINTS:
        return float("nan")
    u = np.full(x.size, np.nan)
    u[finite] = stats.rankdata(v) / (v.size + 1) - 0.5
    for lo, hi in itertools.pairwise(edges):
        if np.isfinite(u[lo:hi]).any():
            u[lo:hi] -= np.nanmean(u[lo:hi])  # residuals around each segment's level
    lrv = _day_long_run_variance(u, len(edges) - 1)
    if math.isnan(lrv):
        phi, innovation = _autoregression_with_variance(u[finite], _MAX_AR_ORDER)
        lrv = innovation / max(1.0 - float(phi.sum()), 1e-3) ** 2
    ranks = stats.rankdata(v) / (v.size + 1) - 0.5
    s = np.cumsum(ranks)
    k = np.arange(1, v.size + 1)
    bridge = s - k / v.size * s[-1]
    return (
        _kuiper_sf(float(bridge.max() - bridge.min()) / math.sqrt(v.size * lrv)) if lrv > 0 else 1.0
    )


def _day_long_run_variance(residuals: FloatArray, segments: int) -> float:
    """Long-run variance per hour of hourly ``residuals`` (NaN: no value; centred on
    ``segments`` levels), from their means over 24-hour blocks with at least 12 values:
    the blocks' variance times ``_days_factor`` (how much days that follow days add),
    times the mean hours a block has. NaN under a week of such blocks."""
    days = residuals.size // 24
    blocks = residuals[: days * 24].reshape(days, 24)
    hours = np.count_nonzero(np.isfinite(blocks), axis=1)
    kept = hours >= 12
    if np.count_nonzero(kept) < _MIN_DAYS:
        return float("nan")
    means = np.full(days, np.nan)
    means[kept] = np.nansum(blocks[kept], axis=1) / hours[kept]
    variance = float(np.nanmean(means[kept] ** 2))
    return variance * _days_factor(means, segments) * float(hours[kept].mean())


def _kuiper_sf(x: float) -> float:
    """P(range of a Brownian bridge > x) = 2 sum_j (4 j^2 x^2 - 1) exp(-2 j^2 x^2)
    (Kuiper 1960); 1 below x = 0.4, where the series has not converged and p is ~1."""
    if x < 0.4:
        return 1.0
    j2 = np.arange(1, 101, dtype=np.float64) ** 2
    return float(min(1.0, max(0.0, 2.0 * np.sum((4 * j2 * x * x - 1) * np.exp(-2 * j2 * x * x)))))


def day_dependence(
    events: NDArray[np.integer], trials: NDArray[np.integer], edges: list[int]
) -> float:
    """How much busy spells lasting days inflate the variance of a segment's total count
    beyond the day-to-day dispersion: 1 + 2 r1 / (1 - phi), the long-run variance ratio of
    an ARMA(1, 1) (r1 the lag-1 autocorrelation of the days' Pearson residuals around
    their own segment's rate, ``edges``: 0, the change points, the number of days; phi =
    r2 / r1 how slowly it fades, clipped to [r1, 0.9]); 1.0 under 7 days with trials.

    ``effects.piecewise_dispersion`` sees how much days vary, not that a busy day is
    followed by busy days, so spells lasting days read as a change. A day's count is a
    spell that persists plus noise that does not (bursts within the day, binomial
    draws), so r1 understates the spell's persistence: (1 + r1) / (1 - r1), the AR(1)
    factor, gave p < 0.05 in 50 of 600 changeless series with day rho 0.8 (8.3 %). Each
    segment's own rate biases r1 and r2 low by about (1 + 3 r1) / (its days) (Kendall's
    bias of an AR(1) with an unknown mean), (1 + 3 r1) x segments / days in all, added
    back. Residuals around the fitted segments keep a real step out of r1 (around one
    pooled rate, a x3 step made rho 0.9 and its p-value 0.1); measured in
    tests/test_rate_change_pvalues.py."""
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
    return _days_factor(r, len(edges) - 1)


def _days_factor(r: FloatArray, segments: int) -> float:
    """Long-run over plain variance of daily residuals ``r`` (NaN: no day) around
    ``segments`` fitted levels: 1 + 2 r1 / (1 - phi), an ARMA(1, 1)'s (a spell that
    persists plus noise that does not), r1 the lag-1 autocorrelation, phi = r2 / r1 how
    slowly it fades, clipped to [r1, 0.9]; r1 and r2 corrected for the levels' Kendall
    bias, (1 + 3 r1) x segments / days. 1.0 under 7 days."""
    kept = np.isfinite(r)
    denom = float(r[kept] @ r[kept])
    if kept.sum() < _MIN_DAYS or denom <= 0.0:
        return 1.0

    def autocorrelation(lag: int) -> float:
        pairs = kept[:-lag] & kept[lag:]
        return float(r[:-lag][pairs] @ r[lag:][pairs]) / denom

    r1, r2 = autocorrelation(1), autocorrelation(2)
    bias = (1 + 3 * max(r1, 0.0)) * segments / kept.sum()
    r1, r2 = min(max(r1 + bias, 0.0), _MAX_RHO), r2 + bias
    phi = min(max(r2 / r1 if r1 > 0 else 0.0, r1), _MAX_RHO)
    return 1.0 + 2.0 * r1 / (1.0 - phi)
