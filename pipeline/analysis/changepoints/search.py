"""Penalised least-squares searches for change points: where to cut, before any test.

Two segment models share one interface, ``(x, penalty, min_size) -> starts of segments 2..``:

* ``binseg_linear``: each segment is its own straight line (level and slope), so a trend is
  one segment and a kink or a jump is a change. This is what ``detect`` searches with.
* ``binseg_mean`` and ``pelt_mean``: each segment is a constant (the textbook mean-change
  model), kept for the spread search and for callers.

Binary segmentation costs O(n log n) for a balanced split tree: each level scans its
segments once with vectorised cumulative sums. PELT is exact but turns quadratic when
nothing changes (it cannot prune).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


def binseg_linear(x: FloatArray, penalty: float, min_size: int) -> list[int]:
    """Binary segmentation with a line per segment: split while the best split lowers the
    residual sum of squares by more than ``penalty``."""

    def best(a: int, b: int) -> tuple[int, float]:
        split, gain = _best_linear_split(x[a:b], min_size)
        return a + split, gain

    return _binary_segmentation(x.size, best, penalty, min_size)


def _binary_segmentation(
    n: int, best_split: Callable[[int, int], tuple[int, float]], penalty: float, min_size: int
) -> list[int]:
    """Split ``[0, n)`` recursively at ``best_split(a, b)`` (position, cost saved) while
    the saving exceeds ``penalty``; the sorted split positions."""
    breaks: list[int] = []
    stack = [(0, n)]
    while stack:
        a, b = stack.pop()
        if b - a < 2 * min_size:
            continue
        split, gain = best_split(a, b)
        if gain > penalty:
            breaks.append(split)
            stack.extend([(a, split), (split, b)])
    return sorted(breaks)


def line_rss(y: FloatArray) -> float:
    """Residual sum of squares of the least-squares line through ``y``."""
    m = y.size
    if m < 3:
        return 0.0
    t = np.arange(m, dtype=np.float64) - (m - 1) / 2.0
    yc = y - y.mean()
    sxy = float(t @ yc)
    return max(float(yc @ yc) - sxy * sxy / float(t @ t), 0.0)


def _best_linear_split(y: FloatArray, min_size: int) -> tuple[int, float]:
    """Split position (in ``y``) whose two separate lines fit best, and the RSS it saves."""
    m = y.size
    # Local, centred and scaled time keeps the sums well conditioned on long series.
    t = (np.arange(m, dtype=np.float64) - (m - 1) / 2.0) / m
    cols = np.stack([np.ones(m), t, t * t, y, t * y, y * y])
    prefix = np.concatenate([np.zeros((6, 1)), np.cumsum(cols, axis=1)], axis=1)
    splits = np.arange(min_size, m - min_size + 1)
    left = prefix[:, splits]
    right = prefix[:, -1:] - left
    total = _sums_rss(prefix[:, -1:])[0]
    gain = total - _sums_rss(left) - _sums_rss(right)
    best = int(np.argmax(gain))
    return int(splits[best]), float(gain[best])


def _sums_rss(s: FloatArray) -> FloatArray:
    """RSS of a line from the sums (n, St, Stt, Sy, Sty, Syy), column by column."""
    n, st, stt, sy, sty, syy = s
    sxx = stt - st * st / n
    sxy = sty - st * sy / n
    syy_c = syy - sy * sy / n
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(sxx > 0, sxy * sxy / np.where(sxx > 0, sxx, 1.0), 0.0)
    return np.asarray(np.maximum(syy_c - fit, 0.0))


def binseg_mean(x: FloatArray, penalty: float, min_size: int) -> list[int]:
    """Binary segmentation: split while the best split lowers the cost by more than penalty."""
    s1 = np.concatenate([[0.0], np.cumsum(x)])
    s2 = np.concatenate([[0.0], np.cumsum(x * x)])

    def cost(a: NDArray[np.int64] | int, b: NDArray[np.int64] | int) -> FloatArray:
        seg = s1[b] - s1[a]
        return np.asarray((s2[b] - s2[a]) - seg * seg / (np.asarray(b) - np.asarray(a)))

    def best(a: int, b: int) -> tuple[int, float]:
        splits = np.arange(a + min_size, b - min_size + 1)
        gain = cost(a, b) - cost(a, splits) - cost(splits, b)
        i = int(np.argmax(gain))
        return int(splits[i]), float(gain[i])

    return _binary_segmentation(x.size, best, penalty, min_size)


def pelt_mean(x: FloatArray, penalty: float, min_size: int) -> list[int]:
    """Exact minimiser of sum of squared deviations + penalty * (#changes) by PELT.

    Returns the starts of segments 2.. (positions in ``x``).
    """
    n = x.size
    if n < 2 * min_size:
        return []
    s1 = np.concatenate([[0.0], np.cumsum(x)])
    s2 = np.concatenate([[0.0], np.cumsum(x * x)])
    f = np.full(n + 1, np.inf)
    f[0] = -penalty
    last = np.zeros(n + 1, dtype=np.int64)
    cands = np.zeros(0, dtype=np.int64)
    for t in range(min_size, n + 1):
        newest = t - min_size
        if newest == 0 or newest >= min_size:
            cands = np.append(cands, newest)
        length = t - cands
        seg_sum = s1[t] - s1[cands]
        cost = (s2[t] - s2[cands]) - seg_sum * seg_sum / length
        total = f[cands] + cost + penalty
        best = int(np.argmin(total))
        f[t] = total[best]
        last[t] = cands[best]
        # PELT pruning (K = 0 for this cost): a start that cannot win now never will.
        cands = cands[total - penalty <= f[t]]
    breaks: list[int] = []
    t = n
    while t > 0:
        t = int(last[t])
        if t > 0:
            breaks.append(t)
    return sorted(breaks)
