"""Material changes: a change too small to matter at the scale of the whole series is dropped.

A test says whether a change is *there*. A long, quiet series gives it the power to prove
changes that nobody reading the series would call one: a quarterly step of 2 % of the range
in a weekly series, a wrinkle in a smooth curve whose noise is tiny. In the long by-eye
series (300 points and more) most reported breaks that no annotator marked were such
changes. So a confirmed level or slope change must also be *material*.

**The size of a change** is the largest gap it opens between two fits over the window
between its neighbouring changes: the smooth curve of the confirmation's null (a line, a
quadratic or, for a series read once, a line plus a slow exponential, by BIC) and that
curve plus the jump and the slope change at the break (``confirm``'s alternative): how
much of the window the change explains that a smooth curve cannot. A jump in mid-window
shows as a gap of about half its height, since the curve alone passes between the two
levels; a slope change as the bend its hinge builds up. (Measured and not kept: the jump
plus the slope change carried to the window's end, the change's own terms; by eye it told
marked breaks from unmarked ones less well.)

**The floor** is ``FLOOR`` of the series' range: the range of the series as given, cycle
included, since that is what a chart of it shows (the detection itself runs on the series
with its cycle removed, whose range can be a small part of it). For a series read once it
is the chart's own height (``series_range(x, extremes=True)``): its maximum minus its
minimum once each one-point outlier is pulled to its neighbours, since a reader discounts
those while a burst of a few points sets the axis, and beside a tall burst a shift of 2 %
of it is not seen (since the thirty-sixth session; docs/changepoints.md). A monitor's metric
keeps its 1st to 99th percentile, so that one incident does not hide the next step. The
floor is a resolution, as the scoring's margin of a few points is one for positions: a
change of 3 % of the range is about the smallest a reader sees on a chart of the whole
series. It was not fitted. Scores by eye are
flat from 2 % to 8 %, and at 5 % the development set already lost small level breaks on
large smooth curves, so the floor sits at the low end.

**Spread changes** (``material_spread``) are held to the same floor on the scale the
series is read on: a change of volatility on the log scale of a price, found because the
spread search works there, can be invisible on the series itself. Their size is how far
the edge of the noise band moves, twice the change in the noise's standard deviation
(robust, from first differences, so blind to level shifts and trends) between the two
regimes, on the series' own scale. They are measured first, between their neighbouring
spread changes; the spread changes kept are then the fixed edges of the level test.

**The order** is the confirmation's: the smallest immaterial change goes first, and its
neighbours are measured again in their widened windows.

Assumption: what the caller wants is the changes that shape the series. A change that is
small beside the series' range but matters in its own right (a 2 % latency step in a
series that once doubled) is below this floor.
"""

from __future__ import annotations

import itertools

import numpy as np

from pipeline.analysis.changepoints.confirm import change_designs
from pipeline.analysis.changepoints.fit import least_squares
from pipeline.analysis.changepoints.noise import FloatArray, robust_scale, winsorize

FLOOR = 0.03  # share of the series' range (what a chart of it shows: ``series_range``)


def material(
    x: FloatArray,
    breaks: list[int],
    fixed: tuple[int, ...] = (),
    span: float | None = None,
    growth: bool = True,
) -> list[int]:
    """``breaks`` without those whose size is below ``FLOOR`` of ``span`` (by default the
    range of ``x``); ``fixed`` edges (spread changes) bound the windows and are not returned;
    ``growth``: the null's curves include growth curves (``reading.Reading.growth_null``)."""
    kept = sorted(set(breaks) - set(fixed))
    if x.size == 0 or not kept:
        return kept
    floor = _floor(x, span)
    edges = sorted({0, *kept, *fixed, x.size})
    sizes = {tau: _size_at(x, edges, tau, growth) for tau in kept}
    while sizes:
        weakest = min(sizes, key=lambda tau: (sizes[tau], tau))
        if sizes[weakest] >= floor:
            break
        i = edges.index(weakest)
        del edges[i], sizes[weakest]
        for tau in (edges[i - 1], edges[i]):
            if tau in sizes:
                sizes[tau] = _size_at(x, edges, tau, growth)
    return sorted(sizes)


def material_spread(x: FloatArray, spread: list[int], span: float | None = None) -> list[int]:
    """``spread`` (changes of the noise's scale) without those that move the edge of the
    noise band by less than ``FLOOR`` of ``span`` (by default the range of ``x``)."""
    kept = sorted(spread)
    if x.size == 0 or not kept:
        return kept
    floor = _floor(x, span)
    while kept:
        edges = [0, *kept, x.size]
        scales = [robust_scale(x[a:b]) for a, b in itertools.pairwise(edges)]
        sizes = [2.0 * abs(after - before) for before, after in itertools.pairwise(scales)]
        smallest = int(np.argmin(sizes))
        if sizes[smallest] >= floor:
            break
        del kept[smallest]
    return kept


def series_range(x: FloatArray, extremes: bool = False) -> float:
    """The range a chart of ``x`` shows (0 for no finite value): its finite values' 1st to
    99th percentile, or with ``extremes`` (a reader of the whole chart, whose axis a burst
    of a few points stretches) their maximum minus minimum once each one-point outlier is
    pulled to its neighbours (``noise.winsorize``), since a reader discounts those."""
    finite = x[np.isfinite(x)]
    if not finite.size:
        return 0.0
    if extremes:
        finite = winsorize(finite, robust_scale(finite))
        return float(finite.max() - finite.min())
    return float(np.percentile(finite, 99) - np.percentile(finite, 1))


def _floor(x: FloatArray, span: float | None) -> float:
    return FLOOR * (series_range(x) if span is None else span)


def _size_at(x: FloatArray, edges: list[int], tau: int, growth: bool) -> float:
    i = edges.index(tau)
    return change_size(x, edges[i - 1], tau, edges[i + 1], growth)


def change_size(x: FloatArray, a: int, tau: int, b: int, growth: bool = True) -> float:
    """Largest gap between the smooth curve through ``x[a:b]`` and that curve plus a jump
    and a slope change at ``tau`` (both least squares): how much of the window the change
    explains that a smooth curve cannot."""
    y = x[a:b]
    null, alt = change_designs(y, (tau - a,), growth)
    gap = least_squares(null, y)[1] - least_squares(alt, y)[1]  # the two fits' difference
    return float(np.max(np.abs(gap)))
