"""The vectorised paths of the analysis give exactly what the loops they replaced gave.

bench_analysis_perf spent seconds in per-group masks and medians, per-shift ``np.roll`` and a
numpy-scalar CUSUM loop; each now has a faster form that must not change a single result
table. Each test compares with the former computation, written out here, on inputs with ties,
NaN, infinities and empty groups; the CUSUM is pinned to the alarms the former loop raised.
MSTL and STL (``stl_exact``) are compared with statsmodels itself, bit for bit.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from statsmodels.tsa.seasonal import MSTL, STL

from pipeline.analysis import release_cycles as rc
from pipeline.analysis.effects import _block_medians
from pipeline.analysis.grouped import group_medians
from pipeline.analysis.online import online_alarms
from pipeline.analysis.seasonality import _STL_FAST, _decompose
from pipeline.analysis.stl_exact import stl


def _awkward(rng: np.random.Generator, n: int, trial: int) -> np.ndarray:
    x = rng.normal(size=n)
    if trial % 3 == 0:
        x = np.round(x, 1)  # many ties
    if trial % 4 == 0:
        x = np.where(rng.random(n) < 0.5, 0.0, 1.0)  # two values only
    return x


def test_group_medians_equal_np_median_per_group() -> None:
    rng = np.random.default_rng(11)
    for trial in range(600):
        n, k = int(rng.integers(0, 300)), int(rng.integers(1, 40))
        v = _awkward(rng, n, trial)
        if n and trial % 5 == 0:
            v[rng.integers(0, n, size=2)] = np.nan
        if n and trial % 7 == 0:
            v[rng.integers(0, n)] = np.inf
            v[rng.integers(0, n)] = -np.inf
        keys = rng.integers(0, k, size=n)
        med, count = group_medians(v, keys, k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # np.median of a group with NaN / inf - inf
            want = [np.median(v[keys == g]) if (keys == g).any() else np.nan for g in range(k)]
        assert np.array_equal(med, np.array(want), equal_nan=True), trial
        assert np.array_equal(count, np.bincount(keys, minlength=k)), trial


def _former_block_medians(
    x: np.ndarray, block: int, reps: int, rng: np.random.Generator
) -> np.ndarray:
    n = x.size
    block = max(1, min(block, n))
    starts = rng.integers(0, n - block + 1, size=(reps, math.ceil(n / block)))
    idx = (starts[:, :, None] + np.arange(block)[None, None, :]).reshape(reps, -1)[:, :n]
    return np.asarray(np.median(x[idx], axis=1))


def test_block_bootstrap_medians_equal_the_partition_medians() -> None:
    rng = np.random.default_rng(12)
    for trial in range(150):
        n = int(rng.integers(1, 3000)) if trial % 2 else int(rng.integers(1, 40))
        x = _awkward(rng, n, trial)
        block, reps, seed = int(rng.integers(1, 60)), int(rng.integers(1, 250)), trial
        got = _block_medians(x, block, reps, np.random.default_rng(seed))
        want = _former_block_medians(x, block, reps, np.random.default_rng(seed))
        assert got.shape == want.shape and np.array_equal(got, want), (trial, n, block)


def test_synchronization_test_equals_the_rolled_loop() -> None:
    rng = np.random.default_rng(13)
    for trial in range(40):
        n = int(rng.integers(14, 800))
        a, b = rng.random(n) < rng.random(), rng.random(n) < rng.random()
        reps = int(rng.integers(1, 700))
        shifts = np.random.default_rng(trial).integers(1, n, size=reps)
        union = int(np.sum(a | b))
        got = rc.synchronization_test(a, b, reps=reps, seed=trial)
        if union == 0:
            assert all(math.isnan(v) for v in got)
            continue
        observed = float(np.sum(a & b)) / union
        null = [
            float(np.sum(a & np.roll(b, int(s)))) / max(int(np.sum(a | np.roll(b, int(s)))), 1)
            for s in shifts
        ]
        p = float((1 + np.sum(np.array(null) >= observed - 1e-12)) / (reps + 1))
        assert got == (observed, p), trial


def test_online_alarms_are_those_of_the_former_loop() -> None:
    """Pinned: the alarms the numpy-scalar loop raised on this series (AR(1) noise, two
    steps, 150 missing hours), recorded before the loop moved to Python floats; re-pinned
    when a re-learned level became self-starting (online.py): both steps at the same hours,
    907, 1621 and 1862 gone, 1022 -> 1024, one new at 1693."""
    rng = np.random.default_rng(7)
    n = 24 * 120
    x = np.zeros(n)
    e = rng.normal(size=n)
    for i in range(1, n):
        x[i] = 0.5 * x[i - 1] + e[i]
    x[1500:] += 1.5
    x[2200:] -= 2.5
    x[rng.integers(0, n, size=150)] = np.nan
    alarms = online_alarms(x * 0.1 + 5.0, baseline_n=24 * 28, target_arl0=24 * 30)
    assert [(a.index, a.start, a.direction) for a in alarms] == [
        (707, 695, 1), (1024, 1013, -1), (1351, 1342, -1), (1504, 1501, 1),
        (1693, 1680, -1), (2201, 2198, -1), (2440, 2433, 1),
    ]  # fmt: skip


def _hourly_like(rng: np.random.Generator, n: int, trial: int) -> np.ndarray:
    """A daily and weekly rhythm, a wandering level, noise; some with ties or a step."""
    t = np.arange(n)
    x = 0.3 * np.sin(2 * np.pi * t / 24) + 0.1 * (t % 168 < 120) + rng.normal(0, 0.2, n)
    x += np.cumsum(rng.normal(0, 0.01, n))
    if trial % 3 == 0:
        x = np.round(x, 1)  # ties
    if trial % 4 == 0:
        x[n // 2 :] += 0.5  # a step
    return x


def test_mstl_and_stl_equal_statsmodels_bit_for_bit() -> None:
    """``_decompose`` (stl_exact) gives statsmodels' MSTL (iterate=1) and STL exactly, with
    the analysis's jumps: lengths around the MSTL threshold, a year, short series whose
    cycle subseries are shorter than the seasonal window."""
    rng = np.random.default_rng(5)
    lengths = [96, 97, 100, 130, 167, 300, 503, 504, 505, 700, 1001, 8760]
    for trial, n in enumerate(lengths + [int(v) for v in rng.integers(96, 1500, size=12)]):
        x = _hourly_like(rng, n, trial)
        method, seasonal, trend = _decompose(x, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # statsmodels' own deprecations, if any
            if n >= 504:
                res = MSTL(x, periods=(24, 168), iterate=1, stl_kwargs=dict(_STL_FAST)).fit()
                want_seasonal = np.asarray(res.seasonal).sum(axis=1)
            else:
                res = STL(x, period=24, **_STL_FAST).fit()
                want_seasonal = np.asarray(res.seasonal)
        assert method == ("mstl" if n >= 504 else "stl"), n
        assert np.array_equal(seasonal, want_seasonal), (n, np.abs(seasonal - want_seasonal).max())
        assert np.array_equal(trend, np.asarray(res.trend)), (n, np.abs(trend - res.trend).max())


def test_stl_equals_statsmodels_without_jumps_and_on_odd_windows() -> None:
    """The paths the analysis does not take today (every point fitted, windows longer than
    the series, other periods) stay exact too, so a change of settings cannot drift."""
    rng = np.random.default_rng(6)
    for trial in range(30):
        period = int(rng.choice([2, 5, 7, 12, 24]))
        n = int(rng.integers(2 * period + 2, 400))
        seasonal = int(rng.choice([3, 7, 13, 35]))
        jumps = {} if trial % 2 else {"seasonal_jump": 2, "trend_jump": 7, "low_pass_jump": 3}
        x = _hourly_like(rng, n, trial)
        got_s, got_t = stl(x, period, seasonal, **jumps)
        res = STL(x, period=period, seasonal=seasonal, **jumps).fit()
        assert np.array_equal(got_s, res.seasonal), (trial, period, n, seasonal, jumps)
        assert np.array_equal(got_t, res.trend), (trial, period, n, seasonal, jumps)
