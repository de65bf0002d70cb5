"""The confirmation test for a window whose noise wanders like a random walk.

``confirm.changes_pvalue`` treats the noise around a smooth curve as AR(1) and tests by
generalised least squares, with ``rho`` capped at ``noise.MAX_RHO``. Where a Dickey-Fuller
test does not reject a unit root in the residuals (``noise.unit_root_plausible``) that
model may not hold: the noise may be integrated (a price, a level that wanders). An AR(1)
test then lets slow wanders through, and the discounting it needs to avoid that hides a
jump that the eye reads at once, because the jump is large beside the series' own steps.

So such a window is tested on its **first differences**, where a random walk is white
noise. A smooth curve of degree ``k`` in the levels is a polynomial of degree ``k - 1`` in
the differences (the null). A jump at ``tau`` is a burst: extra mean in a run of ``w``
consecutive differences (``w`` = 1 to ``POINT_WIDTH``, so a jump spread over a few points,
a crash or a ramp of a few years, counts as one) centred on the step into ``tau``, as
``confirm.is_gradual`` centres a transition, so the candidates at the two ends of one
crash do not both claim it. Only the jump is tested: a change of drift (the differences'
mean) was tried as a second term, and a window that ends a point or two inside a crash
then reads the crash's first steps as a drift change at its candidate. Any AR(1)
dependence left in the differences (momentum: a walk whose steps persist) is handled as in
the levels' test, by generalised least squares (``fit.prewhitened_pvalue``), and the
p-value is Bonferroni-corrected over the bursts tried; the caller corrects for the
position, as it does for the AR(1) test. Up to the eighteenth session the F statistic was
instead divided by the long-run factor of the differences' ``rho``; that discounts a jump
as if it were a change of mean, while a jump is one large step, which prewhitening keeps:
a jump of 8 shock sizes in 300-point walks with AR(0.6) steps was found by ``detect()`` in
1 of 40, now 32 of 40, and 100 such walks without a jump get 1 break in all, as before.

Assumes roughly Gaussian steps. Measured on 400 random walks of 100 points: at 5 % it
rejects 3.75 % of Gaussian walks, 4.25 % of walks with AR(0.6) steps and 7.75 % of walks
with t3 steps; at 1 %, 1.25 %, 1.25 % and 4.25 %. So heavy tails make it liberal (a
price's largest moves look like jumps, as they do to the eye). Since the route is chosen
by a unit-root test rather than the AR(1) cap, more wandering windows take it: 100 walks of
300 points, t3 steps 3.0 breaks per series, Gaussian steps 0.08 (0.31 with the cap).
A Student-t likelihood for the steps (its degrees of freedom chosen by profile likelihood
with the jump in) was tried in the nineteenth session: t3 walks 3.0 -> 0.6 false breaks
per 300 points, Gaussian walks unchanged, but the series annotated by eye fell (F1 /
cover 0.727 / 0.728 -> 0.715 / 0.716 on 196), since annotators mark a price's largest
moves. Not kept: on such series the eye and this test agree that big steps are changes.
"""

from __future__ import annotations

import numpy as np

from pipeline.analysis.changepoints.fit import least_squares, prewhitened_pvalue
from pipeline.analysis.changepoints.noise import FloatArray, lag1_rho


def integrated_pvalue(
    y: FloatArray, at: int, degree: int, max_width: int, hac: bool = False
) -> float:
    """p-value of a jump at ``at`` (a burst of at most ``max_width`` differences centred on
    the step into ``y[at]``) beyond a polynomial of degree ``degree`` in ``y``, with
    random-walk noise (``hac`` as in ``fit.prewhitened_pvalue``); Bonferroni over the
    bursts. NaN where the window is too short to test."""
    d = np.diff(y)
    m = d.size
    into = at - 1  # d[into] = y[at] - y[at - 1]
    dof = m - (degree + 1)
    if dof < 2:
        return np.nan
    if not 0 <= into < m:
        return 1.0
    t = (np.arange(m, dtype=np.float64) - into) / m
    null = np.vander(t, degree, increasing=True)
    rss0 = least_squares(null, d)[0]
    # centred on the step into ``at`` (for an even width, either of the two middles)
    widths = range(1, max_width + 1)
    bursts = sorted({(into - k, w) for w in widths for k in (w // 2, (w - 1) // 2)})
    best, verdict = 1.0, False
    for first, w in bursts:
        if first < 0 or first + w > m or w == m:
            continue  # outside the window, or all of it (a drift, which the null holds)
        box = np.zeros(m)
        box[first : first + w] = 1.0
        design = np.column_stack([null, box])
        rss1, resid = least_squares(design, d)
        if rss0 - rss1 <= 0:
            verdict = True  # this burst explains nothing: no evidence
            continue
        if rss1 <= 1e-12 * rss0:
            return 0.0  # noiseless: the jump is exact
        p = prewhitened_pvalue(d, null, design, lag1_rho(resid), hac)
        if not np.isnan(p):
            best, verdict = min(best, p), True
    return min(1.0, best * len(bursts)) if verdict else np.nan
