"""Changes in spread (noise variance), found on second differences.

Second differences ``x[t] - 2 x[t+1] + x[t+2]`` are blind to any level and to any straight
line, and nearly blind to a smooth curve (they see its curvature, which is small next to
the noise), so a growing trend cannot pass for growing noise. Their log squares turn a
variance ratio into a mean shift, searched by binary segmentation; each candidate is then
confirmed by a rank Brown-Forsythe test (Mann-Whitney on absolute second differences) and
must change the spread by a factor of at least 1.6.

**Noise that grows with the level.** The noise of a price or a population often scales
with its level, and a count's (Poisson) noise with the square root of its level, so a
series that doubles doubles (or multiplies by 1.4) its spread, and a crash or the end of
an outbreak shrinks it, with no change in the process. The noise scale is modelled as
``level ** lam`` with ``lam`` 0 (additive), 1/2 (counts) or 1 (multiplicative), the
Box-Cox family's variance-stabilising powers: ``lam`` is estimated as the least-squares
slope of ``log |second difference|`` on the log of the local level (a running median of
5, where both are positive) and rounded to the nearest model; the spread is then
searched on ``x``, ``sqrt x`` or ``log x``, whose noise is additive. A series with a
negative value is taken as additive; one that touches zero cannot be multiplicative.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from pipeline.analysis.changepoints.confirm import ALPHA
from pipeline.analysis.changepoints.noise import robust_scale, winsorize
from pipeline.analysis.changepoints.search import binseg_mean

FloatArray = NDArray[np.float64]

MIN_SPREAD_RATIO = 1.6  # smallest change in spread worth reporting
_MIN_POINTS = 40
# log(chi2_1) has variance pi^2/2; neighbouring second differences share points, which
# leaves their log squares mildly correlated (the extra 1.5).
_LOG_CHI2_VAR = np.pi**2 / 2.0 * 1.5
_PENALTY_PER_LOG_N = 3.0


def spread_breaks(x: FloatArray, level_breaks: list[int], min_size: int) -> list[int]:
    """Starts of new spread regimes in ``x``, away from the given level/slope changes."""
    n = x.size
    if n < _MIN_POINTS:
        return []
    x = _additive_scale(x)
    d2 = x[:-2] - 2.0 * x[1:-1] + x[2:]
    typical = float(np.median(np.abs(d2)))
    if typical <= 0:
        return []
    # A jump or kink at b shows as large second differences at b-2 and b-1: not noise.
    for b in level_breaks:
        d2[max(b - 2, 0) : b] = typical
    z = np.log(d2 * d2 + (0.05 * typical) ** 2)
    zw = winsorize(z, robust_scale(z))
    seg_min = max(min_size, 10)
    penalty = _PENALTY_PER_LOG_N * float(np.log(n)) * _LOG_CHI2_VAR
    cands = [b + 1 for b in binseg_mean(zw, penalty, seg_min)]
    edges = sorted({0, n - 2, *cands})
    out: list[int] = []
    for lo, c, hi in zip(edges, edges[1:], edges[2:], strict=False):
        if any(abs(c - b) <= min_size for b in level_breaks):
            continue
        left, right = np.abs(d2[lo : c - 1]), np.abs(d2[c - 1 : hi])
        if left.size < seg_min // 2 or right.size < seg_min // 2:
            continue
        ratio = float(np.median(right) / max(float(np.median(left)), 1e-300))
        if 1.0 / MIN_SPREAD_RATIO < ratio < MIN_SPREAD_RATIO:
            continue
        p = float(stats.mannwhitneyu(left, right, method="asymptotic").pvalue)
        if np.isfinite(p) and p <= ALPHA / max(len(cands), 1):
            out.append(c)
    return out


def _additive_scale(x: FloatArray) -> FloatArray:
    """``x``, ``sqrt x`` or ``log x``: whichever makes the noise of ``x`` additive (see the
    module docstring)."""
    lowest = float(np.min(x)) if x.size else 0.0
    if x.size < _MIN_POINTS or lowest < 0:
        return x
    d2 = np.abs(x[:-2] - 2.0 * x[1:-1] + x[2:])
    windows = np.lib.stride_tricks.sliding_window_view(x, 5)
    median = np.median(windows, axis=1)  # the level at x[2:-2], the d2 at 1..n-4
    spread = d2[1:-1]
    keep = (spread > 0) & (median > 0)
    if keep.sum() < _MIN_POINTS // 2:
        return x
    level = np.log(median[keep])
    if np.ptp(level) <= 0:
        return x
    lam = float(np.polyfit(level, np.log(spread[keep]), 1)[0])
    if lam >= 0.75 and lowest > 0:
        return np.log(x)
    return np.sqrt(x) if lam >= 0.25 else x


def regimes(n: int, breaks: list[int]) -> list[tuple[int, int]]:
    """``[start, end)`` of the stretches between ``breaks``."""
    return list(itertools.pairwise([0, *breaks, n]))
