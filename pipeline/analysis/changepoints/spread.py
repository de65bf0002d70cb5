"""Changes in spread (noise variance), found on second differences.

Second differences ``x[t] - 2 x[t+1] + x[t+2]`` are blind to any level and to any straight
line, and nearly blind to a smooth curve (they see its curvature, which is small next to
the noise), so a growing trend cannot pass for growing noise. Their log squares turn a
variance ratio into a mean shift, searched by binary segmentation; each candidate is then
confirmed by a rank Brown-Forsythe test (Mann-Whitney on absolute second differences) and
must change the spread by a factor of at least 1.6. It must also be a *step* in the log
squares: beyond a straight line through them (an F test at the same level), since a spread
that drifts smoothly (with a level that grows or decays, where the scale model below does
not fully apply, or in a short series where it cannot be estimated) is not a change, just
as a smooth curve is not a level change.

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

**Short series** (fewer than ``_MIN_POINTS``, 40) are read on their own scale, since the
slope of the noise on the level is not estimated from a few dozen points; they are searched
as soon as the search can cut them (two segments of its shortest length). Up to the
twenty-fifth session they were not searched at all, and with no spread change known, their
level test pooled a near-silent stretch with a noisy one: the end of an outbreak in a
37-point count series, or its start in a 30-point one, marked by every annotator, went
unreported. Measured on short changeless series (20-39 points, 200 each): a decay with
multiplicative noise gets 0.27 -> 0.36 false changes per series, a growth 0.24 -> 0.26,
falling Poisson counts 0.13 -> 0.16; white, AR(1), t3 noise and random walks unchanged
(without the step check above, the decay got 0.70).
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from pipeline.analysis.changepoints.confirm import ALPHA
from pipeline.analysis.changepoints.fit import f_pvalue
from pipeline.analysis.changepoints.noise import robust_scale, winsorize
from pipeline.analysis.changepoints.search import binseg_mean

FloatArray = NDArray[np.float64]

MIN_SPREAD_RATIO = 1.6  # smallest change in spread worth reporting
_MIN_POINTS = 40  # fewer points: read on their own scale (see the docstring)
# log(chi2_1) has variance pi^2/2; neighbouring second differences share points, which
# leaves their log squares mildly correlated (the extra 1.5).
_LOG_CHI2_VAR = np.pi**2 / 2.0 * 1.5
_PENALTY_PER_LOG_N = 3.0


def spread_breaks(x: FloatArray, level_breaks: list[int], min_size: int) -> list[int]:
    """Starts of new spread regimes in ``x``, away from the given level/slope changes."""
    n = x.size
    seg_min = max(min_size, 10)
    if n < 2 * seg_min + 2:
        return []  # the search cannot cut it in two
    x = _additive_scale(x)
    d2 = x[:-2] - 2.0 * x[1:-1] + x[2:]
    typical = float(np.median(np.abs(d2)))
    if typical <= 0:
        return []
    # Only ratios of spreads matter; in units of the typical one no square can overflow.
    d2 = d2 / typical
    # A jump or kink at b shows as large second differences at b-2 and b-1: not noise.
    for b in level_breaks:
        d2[max(b - 2, 0) : b] = 1.0
    z = np.log(d2 * d2 + 0.05**2)
    zw = winsorize(z, robust_scale(z))
    penalty = _PENALTY_PER_LOG_N * float(np.log(n)) * _LOG_CHI2_VAR
    cands = [b + 1 for b in binseg_mean(zw, penalty, seg_min)]
    edges = sorted({0, n - 2, *cands})
    level = ALPHA / max(len(cands), 1)  # Bonferroni over the candidates
    out: list[int] = []
    for lo, c, hi in zip(edges, edges[1:], edges[2:], strict=False):
        if any(abs(c - b) <= min_size for b in level_breaks):
            continue
        left, right = np.abs(d2[lo : c - 1]), np.abs(d2[c - 1 : hi])
        if left.size < seg_min // 2 or right.size < seg_min // 2:
            continue
        before, after = float(np.median(left)), float(np.median(right))
        if after < MIN_SPREAD_RATIO * before and before < MIN_SPREAD_RATIO * after:
            continue  # within the smallest spread ratio either way (no division: a 0 side)
        p = float(stats.mannwhitneyu(left, right, method="asymptotic").pvalue)
        if not (np.isfinite(p) and p <= level):
            continue
        if step_beyond_line_pvalue(zw[lo:hi], c - 1 - lo) <= level:
            out.append(c)
    return out


def step_beyond_line_pvalue(z: FloatArray, at: int) -> float:
    """p-value of a step at ``at`` in ``z`` beyond a straight line (F test by ordinary least
    squares, the variance estimated from ``z``). The log squares of second differences
    have a heavy lower tail, which winsorizing has clipped, and neighbouring ones are
    mildly correlated (``_LOG_CHI2_VAR``), which this test ignores: it is somewhat liberal,
    so as a check that only refuses, it refuses fewer drifts than its level says."""
    m = z.size
    t = np.arange(m, dtype=np.float64) / m
    line = np.column_stack([np.ones(m), t])
    step = np.column_stack([line, (np.arange(m) >= at).astype(np.float64)])
    dof = m - step.shape[1]
    return f_pvalue(z, line, step, dof) if dof >= 2 else 1.0


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
