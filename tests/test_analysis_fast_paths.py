"""The vectorised paths of the analysis give exactly what the loops they replaced gave.

bench_analysis_perf spent seconds in per-group masks and medians, per-shift ``np.roll`` and a
numpy-scalar CUSUM loop; each now has a faster form that must not change a single result
table. Each test compares with the former computation, written out here, on inputs with ties,
NaN, infinities and empty groups; the CUSUM is pinned to the alarms the former loop raised.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from pipeline.analysis import release_cycles as rc
from pipeline.analysis.effects import _block_medians
from pipeline.analysis.grouped import group_medians
from pipeline.analysis.online import online_alarms


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
    steps, 150 missing hours), recorded before the loop moved to Python floats."""
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
        (707, 695, 1), (907, 900, 1), (1022, 1013, -1), (1351, 1342, -1), (1504, 1501, 1),
        (1621, 1616, -1), (1862, 1844, 1), (2201, 2198, -1), (2440, 2433, 1),
    ]  # fmt: skip
