"""How large the daily/weekly rhythm is: a smoothed peak-to-trough ratio and its interval.

The ratio of the largest to the smallest of 168 hour-of-week medians is biased upward: each
cell holds a few noisy values (one or none with four days of hourly probes), and the max and
the min pick the noise's extremes (a planted x1.67 read x4.30 on four days). Here the rhythm
is a low-order model fitted to the detrended log series: three daily harmonics (periods 24,
12 and 8 h) plus, with three weeks or more, a day-of-week offset; 13 numbers instead of 168.
Values are winsorised at 3 robust sd first (outliers, heavy tails).

The interval resamples whole UTC days with replacement (values within a day are dependent)
and refits: a percentile interval of the ratio. It needs ``MIN_INTERVAL_DAYS`` observed days;
with fewer, resampling a handful of days understates the spread, so none is given. Assumes
the rhythm is the same on every day (and week) of the window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["MIN_INTERVAL_DAYS", "RhythmSize", "rhythm_size"]

FloatArray = NDArray[np.float64]
MIN_INTERVAL_DAYS = 7
_HARMONICS = 3
_DRAWS = 200
_LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class RhythmSize:
    """Peak-to-trough ratio of the fitted rhythm (NaN without one) and its interval (NaN
    when too few days); ``profile``: the fitted log rhythm per hour of week, centred."""

    ratio: float
    lo: float
    hi: float
    profile: FloatArray


def _design(how: NDArray[np.int64], weekly: bool) -> FloatArray:
    hod = how % 24
    cols = [np.ones(how.size)]
    for k in range(1, _HARMONICS + 1):
        angle = 2 * np.pi * k * hod / 24
        cols += [np.cos(angle), np.sin(angle)]
    if weekly:
        dow = how // 24
        cols += [(dow == d).astype(np.float64) for d in range(1, 7)]
    return np.column_stack(cols)


def _fit(x: FloatArray, values: FloatArray, grid: FloatArray) -> FloatArray | None:
    """The fitted log rhythm on ``grid`` (168 hours of week), or None if not identified."""
    coef, _, rank, _ = np.linalg.lstsq(x, values, rcond=None)
    if rank < x.shape[1]:
        return None
    curve = grid[:, 1:] @ coef[1:]
    return np.asarray(curve - curve.mean(), dtype=np.float64)


def _winsorised(values: FloatArray) -> FloatArray:
    centre = float(np.median(values))
    sd = float(np.median(np.abs(values - centre))) / 0.6745
    return np.clip(values, centre - 3 * sd, centre + 3 * sd) if sd > 0 else values


def rhythm_size(
    detrended: FloatArray,
    how: NDArray[np.int64],
    day: NDArray[np.int64],
    weekly: bool,
    seed: int = 0,
) -> RhythmSize:
    """The rhythm of the observed ``detrended`` log values at hours of week ``how`` on
    days ``day`` (any integer per UTC day); hour of week only when ``weekly``."""
    none = RhythmSize(float("nan"), float("nan"), float("nan"), np.zeros(168))
    values = _winsorised(np.asarray(detrended, dtype=np.float64))
    x = _design(how, weekly)
    grid = _design(np.arange(168, dtype=np.int64), weekly)
    curve = _fit(x, values, grid)
    if curve is None:
        return none
    ratio = float(np.exp(np.ptp(curve)))
    days, index = np.unique(day, return_inverse=True)
    if days.size < MIN_INTERVAL_DAYS:
        return RhythmSize(ratio, float("nan"), float("nan"), curve)
    draws = _resampled_ranges(x, values, grid, index, days.size, seed)
    if draws.size < _DRAWS // 2:
        return RhythmSize(ratio, float("nan"), float("nan"), curve)
    # The range of a fitted curve is biased upward (noise widens it), and so is each draw's
    # about the estimate: the basic bootstrap reflects the draws about the estimate, which
    # takes that bias off the estimate and the interval alike.
    log_ratio = float(np.ptp(curve))
    tail = (1 - _LEVEL) / 2
    q_lo, q_hi = np.quantile(draws, [tail, 1 - tail])
    corrected = max(0.0, 2 * log_ratio - float(np.mean(draws)))
    lo, hi = max(0.0, 2 * log_ratio - q_hi), max(0.0, 2 * log_ratio - q_lo)
    return RhythmSize(float(np.exp(corrected)), float(np.exp(lo)), float(np.exp(hi)), curve)


def _resampled_ranges(
    x: FloatArray,
    values: FloatArray,
    grid: FloatArray,
    index: NDArray[np.intp],
    n_days: int,
    seed: int,
) -> FloatArray:
    """The fitted curve's range (log peak over trough) on ``_DRAWS`` resamples of whole
    days, draws whose design is not identified left out. A resample's least squares is
    the sum of its days' normal equations, each day counted as often as drawn, so every
    day's X'X and X'y are formed once and a draw solves one small system."""
    outer = x[:, :, None] * x[:, None, :]
    gram = np.zeros((n_days, x.shape[1], x.shape[1]))
    np.add.at(gram, index, outer)
    moment = np.zeros((n_days, x.shape[1]))
    np.add.at(moment, index, x * values[:, None])
    rng = np.random.default_rng(seed)  # seeded: the same data give the same interval
    counts = np.stack(
        [np.bincount(rng.integers(0, n_days, n_days), minlength=n_days) for _ in range(_DRAWS)]
    ).astype(np.float64)
    gram_draws = np.einsum("dn,nij->dij", counts, gram)
    identified = np.linalg.matrix_rank(gram_draws) == x.shape[1]
    coef = np.linalg.solve(gram_draws[identified], (counts @ moment)[identified][:, :, None])
    curves = coef[:, 1:, 0] @ grid[:, 1:].T
    return np.asarray(np.ptp(curves, axis=1), dtype=np.float64)
