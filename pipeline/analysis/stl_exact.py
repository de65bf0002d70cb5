"""statsmodels' STL and MSTL (non-robust, degree 1), computed with numpy in the same order.

Why: MSTL was a quarter of ``run_analysis`` (bench_analysis_perf: 6.4 s for 80 series of a
year). statsmodels' Cython loop recomputes every LOESS fit's tricube weights (two ``pow``
calls per point) at every inner iteration, yet the weights depend only on the series'
length, the window and the jump, never on the values. Here each fit's final weights are
built once per (length, window, jump) and cached; a fit is then one gather and one sum.

Every value is the same bit for bit as ``statsmodels.tsa.seasonal.STL(...).fit()`` and
``MSTL(..., iterate=1)`` (statsmodels 0.15 ``_stl.pyx``, a port of Cleveland et al.'s
Fortran): each floating-point operation is the one the Cython code does, in its order.
Sums run along the first axis of an array (``_ordered_sum``), which numpy adds
row after row, as the Cython loop does; a reduction along a contiguous axis would be
pairwise and differ in the last bits. tests/test_analysis_fast_paths.py compares both with
statsmodels on random series of many lengths.

Only what the analysis uses: no robustness weights, no outer loop, LOESS degree 1.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

__all__ = ["mstl", "stl"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
_INNER_ITER = 5  # statsmodels' default without robustness
# Plans cached per (length, window, jump): a year of hours holds about 5 MB of them, so
# 32 bound the cache to a few series lengths' worth.
_PLANS = 32
# The fits of one smoothing pass: the index of each window's points and their weights,
# both shape (window, fits), so the sum over the window runs along axis 0.
_Plan = tuple[IntArray, FloatArray]


def stl(
    y: FloatArray, period: int, seasonal: int = 7, *,
    seasonal_jump: int = 1, trend_jump: int = 1, low_pass_jump: int = 1,
) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    """(seasonal, trend) of ``STL(y, period, seasonal, **jumps).fit()``, same defaults."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    n = y.size
    if period < 2 or seasonal < 3 or seasonal % 2 == 0 or n < 2:
        raise ValueError(f"stl: period {period}, seasonal {seasonal}, {n} points not supported")
    trend_len = int(np.ceil(1.5 * period / (1 - 1.5 / seasonal)))
    trend_len += trend_len % 2 == 0
    low_pass = period + 1
    low_pass += low_pass % 2 == 0
    trend = np.zeros(n)
    season = np.zeros(n)
    for _ in range(_INNER_ITER):
        cycle = _subseries_smooth(y - trend, period, seasonal, seasonal_jump)
        low = _ess(_three_averages(cycle, period)[:, None], low_pass, low_pass_jump)[:, 0]
        season = cycle[period : period + n] - low
        trend = _ess((y - season)[:, None], trend_len, trend_jump)[:, 0]
    return season, trend


def mstl(y: FloatArray, periods: tuple[int, ...], **jumps: int) -> tuple[FloatArray, FloatArray]:
    """(seasonal summed over periods, trend) of ``MSTL(y, periods=periods, iterate=1,
    stl_kwargs=jumps).fit()`` with its default windows (7 + 4 i); as MSTL, periods of half
    the series or longer are dropped."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    kept = sorted(p for p in periods if p < y.size / 2)
    if not kept:
        raise ValueError(f"mstl: no period in {periods} is under half of {y.size} points")
    seasonals = np.zeros((len(kept), y.size))
    deseas = y
    trend = np.zeros(y.size)
    for i, period in enumerate(kept):
        deseas = deseas + seasonals[i]
        seasonals[i], trend = stl(deseas, period, 7 + 4 * (i + 1), **jumps)
        deseas = deseas - seasonals[i]
    total = seasonals.T.sum(axis=1) if len(kept) > 1 else seasonals.reshape(-1)
    return np.asarray(total, dtype=np.float64), trend


def _apply(plan: _Plan, ys: FloatArray) -> FloatArray:
    """Each fit's weighted sum, added in window order, for each column of ``ys`` (points,
    series): shape (fits, series); NaN where a fit has no weight."""
    index, weights = plan
    if ys.shape[1] == 1:
        return _ordered_sum(weights * ys[:, 0].take(index))[:, None]
    return _ordered_sum(weights[:, :, None] * ys[index])


def _ess(ys: FloatArray, window: int, jump: int) -> FloatArray:
    """LOESS smoothing of each column of ``ys`` (Cython ``_ess``): fits every ``jump``
    points, linear interpolation between them, and the last point fitted on its own."""
    n = ys.shape[0]
    if n < 2:
        return ys.copy()
    step = min(jump, n - 1)
    xs, plan, last = _ess_plan(n, window, jump)
    fits = _apply(plan, ys)
    fits = np.where(np.isnan(fits), ys[xs - 1], fits)
    if step == 1:
        return fits
    out = np.empty(ys.shape)
    out[xs - 1] = fits
    # between consecutive fits i and i + step: out[i + d] = out[i] + delta * d, d < step
    left = fits[:-1]
    delta = (fits[1:] - left) / step
    d = np.arange(step, dtype=np.float64)
    body = left[:, None, :] + delta[:, None, :] * d[None, :, None]
    out[: (xs.size - 1) * step] = body.reshape(-1, ys.shape[1])
    k = int(xs[-1])  # 1-based index of the last fit
    if k != n:
        end = _apply(last, ys)[0]
        out[n - 1] = np.where(np.isnan(end), ys[n - 1], end)
        if k != n - 1:
            delta_end = (out[n - 1] - out[k - 1]) / (n - k)
            d_end = np.arange(1, n - k + 1, dtype=np.float64)
            out[k:n] = out[k - 1][None, :] + delta_end[None, :] * d_end[:, None]
    return out


@lru_cache(maxsize=_PLANS)
def _ess_plan(n: int, window: int, jump: int) -> tuple[IntArray, _Plan, _Plan]:
    """Fit positions (1-based), their plan, and the plan of the last point's own fit."""
    step = min(jump, n - 1)
    xs = np.arange(1, n + 1, step, dtype=np.int64)
    size = min(window, n)
    if window >= n:
        nleft = np.ones(xs.size, dtype=np.int64)
    elif step == 1:
        nleft = 1 + np.minimum(np.maximum(0, xs - (window + 2) // 2), n - window)
    else:
        half = (window + 1) // 2
        nleft = np.where(xs < half, 1, np.where(xs >= n - half + 1, n - window + 1, xs - half + 1))
    plan = _plan(n, window, xs, nleft, size)
    last = _plan(n, window, np.array([n]), nleft[-1:], size)
    return xs, plan, last


@lru_cache(maxsize=_PLANS)
def _ends_plan(k: int, window: int) -> tuple[_Plan, _Plan]:
    """The two extrapolated points of a cycle subseries of ``k`` values (Cython ``_ss``):
    one before the first value, one after the last."""
    size = min(window, k)
    before = _plan(k, window, np.array([0]), np.array([1]), size)
    after = _plan(k, window, np.array([k + 1]), np.array([max(1, k - window + 1)]), size)
    return before, after


def _plan(n: int, window: int, xs: IntArray, nleft: IntArray, size: int) -> _Plan:
    """Final LOESS weights (Cython ``_est``, degree 1, no robustness weights) of fits at
    1-based ``xs`` over windows of ``size`` points starting at 1-based ``nleft``."""
    nleft = np.asarray(nleft, dtype=np.int64)
    xs = np.asarray(xs, dtype=np.int64)
    nright = nleft + size - 1
    h = np.maximum(xs - nleft, nright - xs).astype(np.float64)
    if window > n:
        h += (window - n) // 2.0
    pos = (nleft[None, :] + np.arange(size)[:, None]).astype(np.float64)  # j + 1
    r = np.abs(nleft[None, :] + np.arange(size)[:, None] - xs[None, :]).astype(np.float64)
    w = np.zeros(r.shape)
    for hv in np.unique(h):
        cols = h == hv
        w[:, cols] = _tricube(r[:, cols], float(hv))
    with np.errstate(invalid="ignore", divide="ignore"):
        total = _ordered_sum(w)
        w = w / total[None, :]
        a = _ordered_sum(w * pos)
        b = xs - a
        c = _ordered_sum(w * (pos - a[None, :]) ** 2)
        linear = (h > 0) & (np.sqrt(c) > 0.001 * (n - 1.0))
        slope = b / c
        w = np.where(linear[None, :], w * (slope[None, :] * (pos - a[None, :]) + 1.0), w)
    w[:, total <= 0] = np.nan  # Cython returns NaN for a fit without weight
    index = nleft[None, :] - 1 + np.arange(size)[:, None]
    return np.ascontiguousarray(index), np.ascontiguousarray(w)


def _tricube(r: FloatArray, h: float) -> FloatArray:
    """Tricube weights as the Cython code computes them (libm ``pow``, through Python's
    float power; numpy's vectorised power may round differently)."""
    h9, h1 = 0.999 * h, 0.001 * h
    table = {v: (1.0 - (v / h) ** 3) ** 3 for v in np.unique(r[r <= h9]).tolist()}
    out = np.zeros(r.shape)
    for v, weight in table.items():
        out[r == v] = 1.0 if v <= h1 else weight
    return out


def _subseries_smooth(y: FloatArray, period: int, window: int, jump: int) -> FloatArray:
    """Each cycle subseries smoothed and extended by one value at either end (Cython
    ``_ss``): length ``n + 2 period``, value m of subseries j at ``m * period + j``."""
    n = y.size
    out = np.empty(n + 2 * period)
    for k in sorted({(n - (j + 1)) // period + 1 for j in range(period)}):
        cols = np.array([j for j in range(period) if (n - (j + 1)) // period + 1 == k])
        sub = y[cols[None, :] + period * np.arange(k)[:, None]]  # (k, subseries)
        smooth = np.empty((k + 2, cols.size))
        smooth[1 : k + 1] = _ess(sub, window, jump)
        before, after = _ends_plan(k, window)
        first = _apply(before, sub)[0]
        smooth[0] = np.where(np.isnan(first), smooth[1], first)
        final = _apply(after, sub)[0]
        smooth[k + 1] = np.where(np.isnan(final), smooth[k], final)
        out[cols[None, :] + period * np.arange(k + 2)[:, None]] = smooth
    return out


def _three_averages(x: FloatArray, period: int) -> FloatArray:
    """Moving averages of ``period``, ``period`` and 3 points (Cython ``_fts``/``_ma``)."""
    return _moving_average(_moving_average(_moving_average(x, period), period), 3)


def _moving_average(x: FloatArray, size: int) -> FloatArray:
    """Running mean updated by ``v += x[k] - x[m]``, as the Cython ``_ma``."""
    first = _ordered_sum(x[:size, None])
    running = np.cumsum(np.concatenate([first, x[size:] - x[: x.size - size]]))
    return np.asarray(running / float(size), dtype=np.float64)


def _ordered_sum(a: FloatArray) -> FloatArray:
    """Sum along axis 0, one row after the other, as the Cython loops add. numpy adds
    pairwise only along the fast (contiguous) axis, so ``add.reduce`` over axis 0 is
    sequential while the other axes hold two elements or more; with one, axis 0 becomes the
    fast axis and the cumulative sum (sequential by definition) is used. + 0.0: the loops
    start from 0.0, which turns a sum of -0.0 into 0.0."""
    if a[0].size > 1:
        return np.asarray(np.add.reduce(a, axis=0) + 0.0, dtype=np.float64)
    return np.asarray(np.cumsum(a, axis=0)[-1] + 0.0, dtype=np.float64)
