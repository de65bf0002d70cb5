"""Confirmation of candidate change points: a local test, applied bottom-up with a heap.

**The test.** A candidate ``tau`` between its neighbours ``a`` and ``b`` is judged on
``x[a:b]`` alone. Null: the stretch is one *smooth* curve, a quadratic in time, so a gently
curving series (growth, saturation, decay) cut into pieces is explained without a change.
Alternative: the same quadratic plus a jump at ``tau`` plus a change of slope at ``tau``
(a hinge ``(t - tau)+``). The F statistic of these two extra terms is divided by the AR(1)
long-run variance factor of the alternative's residuals (dependent noise carries less
information per point) and referred to F(2, m - 5). Because the search chose ``tau`` as the
best of up to ``n`` positions, the test is Bonferroni-corrected over them: a change is kept
when ``p <= alpha / n``. A crash on a trend is a jump plus a slope change, which the
quadratic cannot absorb; a smooth curve has neither.

**The order.** Candidates are merged bottom-up: the weakest (largest p) is removed, the
two segments around it become one, and only its two neighbours are re-tested, since only
their windows changed. A heap with lazy invalidation keeps this at O(k log k) heap
operations for k candidates, plus one O(window) least-squares fit per (re-)test.
"""

from __future__ import annotations

import heapq

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from pipeline.analysis.changepoints.noise import lag1_rho, long_run_factor

FloatArray = NDArray[np.float64]

ALPHA = 0.01  # family-wise false-alarm level of a confirmed change in a stretch of noise
_EXTRA_TERMS = 2  # jump and slope change
_ALT_TERMS = 5  # quadratic (3) + jump + slope change


def step_pvalue(x: FloatArray, a: int, tau: int, b: int) -> float:
    """p-value of a jump or slope change at ``tau`` beyond a quadratic through ``x[a:b]``."""
    y = x[a:b]
    m = y.size
    dof = m - _ALT_TERMS
    if dof < 2:
        return 1.0
    t = (np.arange(m, dtype=np.float64) - (tau - a)) / m
    after = (t >= 0).astype(np.float64)
    null = np.column_stack([np.ones(m), t, t * t])
    alt = np.column_stack([null, after, t * after])
    rss0 = _rss(null, y)[0]
    rss1, resid = _rss(alt, y)
    gain = rss0 - rss1
    if gain <= 0:
        return 1.0
    if rss1 <= 1e-12 * rss0:
        return 0.0  # noiseless: the change is exact
    f = (gain / _EXTRA_TERMS) / (rss1 / dof) / long_run_factor(lag1_rho(resid))
    return float(stats.f.sf(f, _EXTRA_TERMS, dof))


def _rss(design: FloatArray, y: FloatArray) -> tuple[float, FloatArray]:
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    return float(resid @ resid), resid


def merge_weakest(x: FloatArray, candidates: list[int], alpha: float = ALPHA) -> list[int]:
    """Candidates that survive bottom-up merging at family-wise level ``alpha``."""
    n = x.size
    cands = sorted(set(candidates))
    if not cands:
        return []
    threshold = alpha / max(n, 1)
    edges = [0, *cands, n]
    k = len(edges)
    prev = list(range(-1, k - 1))
    nxt = list(range(1, k + 1))
    alive = [True] * k
    version = [0] * k
    heap: list[tuple[float, int, int]] = []

    def push(i: int) -> None:
        version[i] += 1
        p = step_pvalue(x, edges[prev[i]], edges[i], edges[nxt[i]])
        heapq.heappush(heap, (-p, i, version[i]))

    for i in range(1, k - 1):
        push(i)
    while heap:
        neg_p, i, ver = heapq.heappop(heap)
        if not alive[i] or ver != version[i]:
            continue
        if -neg_p <= threshold:
            break  # the weakest remaining change is significant, so all are
        alive[i] = False
        left, right = prev[i], nxt[i]
        nxt[left], prev[right] = right, left
        for j in (left, right):
            if 0 < j < k - 1:
                push(j)
    return [edges[i] for i in range(1, k - 1) if alive[i]]
