"""Offline change-point detection: where does a series change its level, slope or spread?

``detect(values)`` is the public, parameter-free entry point.

**Model.** The series is a sequence of segments; within a segment it is a straight line
(level and slope) plus stationary noise that may be autocorrelated (AR(1)) and heavy
tailed, with a spread that may itself change at a change point. A change point is where
the level jumps, the slope changes, or the spread changes. A smooth curve is *not* a
change: growth, saturation and decay are each one segment unless they break.

**Method.**

0. **Cycles removed** (``periodicity.remove_cycle``): a significant regular cycle would read
   as strongly autocorrelated noise, or be cut along its swings.
1. **Robust input.** NaN/inf are dropped (indices map back to the caller's positions); the
   series is standardised by the noise scale from first differences (blind to level
   shifts and trends) and winsorized at 3.5 sd around a running median, so a spike
   cannot pull a fit while a step or a kink stays intact.
2. **Search** (``search.binseg_linear``): binary segmentation with a least-squares line per
   segment, penalty ``3 log n`` per change (BIC for the three parameters a change adds:
   position, level, slope) in units of the long-run noise variance; that variance
   (``s^2 (1 + rho) / (1 - rho)``, AR(1)) is re-estimated from the residuals and the
   search repeated, so a wandering series is not cut into many pieces. O(n log n).
3. **Confirmation** (``confirm.merge_weakest``): each candidate must beat a smooth curve
   (a line, a quadratic or a line plus a slow exponential, chosen by BIC) through its two
   neighbouring segments by a jump or a slope change: F test by generalised least squares
   for AR(1) noise (prewhitened, checked for dependence the model left), corrected for the
   search over the window's effective number of positions, at level ``1/n`` (1 % at
   n = 100: a bounded number of false changes however long the series); a monitor's
   metric is read with the polynomial null and Bonferroni at a fixed level
   (``reading``); where a Dickey-Fuller test
   does not reject a unit root in the residuals, the noise is taken as a random walk and
   the jump is tested on first differences, as a burst of up to a few steps
   (``random_walk``); two survivors within a point width (in a series read once, 2 % of
   it) are one transition, and the better is kept if the regimes before and after it
   differ, tested with the points between left out (a spike or a short excursion that
   returns is no change). The weakest
   candidate is merged first
   and only its neighbours are re-tested (a heap): O(k log k) tests. On a smooth trend with no break
   the candidates fail this test, so none is reported. A candidate that passes must also
   be abrupt: if its jump and slope change spread over a wide transition (a ramp as long
   as the settled part of the shorter side, and more than a few points) explain the window
   significantly better than an abrupt change anywhere within that transition, it is a
   gradual bend (an S-curve, an exponential) and is merged.
   **Kinks re-placed** (``locate.relocate``): a confirmed change that the data read as a
   slope change without a jump (by BIC against a jump, on a line and on a quadratic) is
   moved to that kink's least-squares position near the search's, unless the search's
   position lies inside the 95 % likelihood-ratio confidence set; steps stay put.
   **Level shifts** (``level.level_shifts``): in each stretch between confirmed changes
   (the whole series where none was kept) a curve may have absorbed a step (a late drop in
   a short noisy count series; a fall beside a larger confirmed jump, whose window a line
   through both levels explains). There a candidate between two flat stretches (no slope
   on either side, two levels beating a line or a quadratic by BIC, no autocorrelation
   left around them) is tested as a jump beyond a constant, Bonferroni-corrected at 1 %,
   top-down; in a series read once, not within 2 % of it of a change (one transition).
4. **Spread changes** (``spread.spread_breaks``) are searched on second differences, which
   no trend can inflate (of ``log x`` where a positive series' noise grows in proportion
   to its level, as a price's does, and of ``sqrt x`` where it grows as the square root,
   as a count's does, so that growth, a crash or the end of an outbreak is not a spread
   change; a series under 40 points, too short to tell, is read on its own scale), and a
   spread change must be a step in the noise's log scale beyond a straight line, so a
   spread that drifts smoothly is not one.
   Then each spread regime is standardised by its own noise scale and searched again; its
   candidates are *added* to those of the whole series (never replacing them) and all are
   confirmed together, the spread changes being fixed edges; two neighbouring pooled
   candidates must then also be significant jointly, or the weaker one goes (a chance pair
   bounding a short stretch would vouch for itself).
5. **Material changes only** (``material.material``): a level or slope change that the
   tests prove but that is small beside the series' range (its fit departs from the smooth
   curve by less than 3 % of the range of the series as given, its cycle included: for a
   series read once the chart's height, one-point outliers discounted; for a monitor's
   metric its 1st to 99th percentile) is dropped, smallest first: a long quiet series can
   prove wrinkles that nobody reading it would call a change. So is a spread change that
   moves the edge of the noise band by less than that on the series' own scale (a
   volatility regime of a price's logarithm).
6. **Whole cycles** (``cycle_means.in_cycle_means``): in a series read once where step 0
   found a cycle of period P, a level or slope change must also show in the means of whole
   cycles around it (the confirmation's test on the block means, at the level of a series
   of ``n // P`` points), since a real cycle varies from one period to the next and what a
   fixed profile leaves is dependent within each cycle; a monitor's metric skips this.
7. **A monitor's newest change dated** (``edges.dated_at_edges``): the search keeps a few
   points after each change, so a step in a monitored metric's last few points is found
   at that limit; it is moved to the two-level least-squares split among the positions the
   limit ruled out (and likewise at the start). A series read once is left as found.

Assumptions: changes are abrupt in level or slope (brief beside the segments they
separate); a smooth curve is locally quadratic, or a gradual bend, over the span between
neighbouring changes; the noise is stationary between changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.analysis.changepoints.confirm import merge_weakest
from pipeline.analysis.changepoints.cycle_means import in_cycle_means
from pipeline.analysis.changepoints.edges import dated_at_edges
from pipeline.analysis.changepoints.level import level_shifts
from pipeline.analysis.changepoints.locate import relocate
from pipeline.analysis.changepoints.material import material, material_spread, series_range
from pipeline.analysis.changepoints.noise import (
    GAUSS_MAD,
    FloatArray,
    lag1_rho,
    long_run_factor,
    robust_scale,
    winsorize,
)
from pipeline.analysis.changepoints.reading import SERIES, STREAM_LEVEL, Reading, monitored
from pipeline.analysis.changepoints.search import binseg_linear, binseg_mean, pelt_mean
from pipeline.analysis.changepoints.spread import regimes, spread_breaks
from pipeline.analysis.periodicity import remove_cycle

__all__ = [
    "STREAM_LEVEL",
    "Segmentation",
    "binseg_mean",
    "detect",
    "pelt_mean",
    "robust_scale",
    "segment",
]

_PENALTY_PER_LOG_N = 3.0  # BIC: three parameters per change (position, level, slope)
_LONG_RUN_ROUNDS = 3


@dataclass(frozen=True, slots=True)
class Segmentation:
    """Change points (positions in the cleaned series) and the noise behind them."""

    breaks: list[int]
    sigma: float  # robust noise standard deviation, in the series' units
    rho: float  # lag-1 autocorrelation of residuals (>= 0)


def detect(
    values: NDArray[np.floating] | Sequence[float],
    timestamps: object = None,
    *,
    level: float | None = None,
    monitor: bool = False,
) -> list[int]:
    """Indices where new segments start (sorted; never 0 nor len(values)).

    Accepts any 1-D array: NaN/inf are ignored, any scale, any length. ``timestamps`` is
    accepted for scoring harnesses that pass it and ignored: points are taken as equally
    spaced. ``level`` is the false-alarm level of each confirmed change: by default ``1/n``
    for ``n`` finite points, so a series read once gets a bounded number of false changes
    however long it is; a monitor that counts false alarms per unit of time passes a fixed
    level instead. ``monitor``: the series is a monitored metric that should be stable,
    read with the test the product was measured with (``reading.monitored``), confirmed at
    ``STREAM_LEVEL`` unless ``level`` is given.
    """
    del timestamps
    if level is not None and not 0.0 < level < 1.0:
        raise ValueError(f"detect: level must lie strictly between 0 and 1, got {level!r}")
    given = np.asarray(values, dtype=np.float64).ravel()
    x, cycle = remove_cycle(given)
    positions = np.flatnonzero(np.isfinite(x))
    clean = x[positions]
    reading = _reading(level, monitor)
    seg = segment(clean, reading)
    min_size = _min_size(clean.size)
    spread = spread_breaks(clean, seg.breaks, min_size)
    shifts = _with_spread_regimes(clean, seg.breaks, spread, reading) if spread else seg.breaks
    apart = [s for s in spread if all(abs(s - j) > min_size for j in shifts)]
    span = series_range(given, reading.chart_extremes)  # what a chart shows, cycle included
    kept_spread = material_spread(clean, apart, span)
    breaks = material(clean, shifts, tuple(kept_spread), span, reading.growth_null)
    if reading.date_at_edges:
        breaks = dated_at_edges(clean, breaks, min_size)
    found = [int(positions[b]) for b in breaks if 0 < b < clean.size]
    spread_found = tuple(int(positions[b]) for b in kept_spread if 0 < b < clean.size)
    if cycle is not None and reading.whole_cycles:
        found = in_cycle_means(x, found, spread_found, cycle.period, reading)
    return sorted({*found, *spread_found})


def _with_spread_regimes(
    x: FloatArray, shifts: list[int], spread: list[int], reading: Reading
) -> list[int]:
    """Level/slope changes once the spread changes are known: each regime is standardised by
    its own noise scale (weighted least squares) and searched again; the new candidates
    join those of the whole series (kept, not replaced), and all are confirmed together
    with the spread changes as fixed edges, so no test window mixes two noise levels."""
    z = np.empty_like(x)
    cands = set(shifts)
    for a, b in regimes(x.size, spread):
        sigma = robust_scale(x[a:b])
        scale = sigma if sigma > 0 and np.isfinite(sigma) else 1.0
        z[a:b] = winsorize((x[a:b] - np.median(x[a:b])) / scale, 1.0)
        cands |= {a + k for k in _candidates(z[a:b], _min_size(b - a))[0]}
    confirmed = merge_weakest(z, sorted(cands), reading, fixed=tuple(spread), pooled=True)
    return _placed(z, confirmed, sorted(cands), _min_size(x.size), tuple(spread), reading)


def _min_size(n: int) -> int:
    """Shortest segment: enough points for a line and its noise, few enough for short series."""
    return int(max(3, min(5, n // 10)))


def _reading(level: float | None, monitor: bool) -> Reading:
    """The test ``detect``'s arguments ask for (``reading``)."""
    if not monitor:
        return Reading(level)
    return monitored(STREAM_LEVEL if level is None else level)


def segment(x: FloatArray, reading: Reading = SERIES) -> Segmentation:
    """Level/slope segmentation of a finite 1-D series (see the module docstring), each
    change confirmed as ``reading`` says (by default a series read once, at ``1/n``)."""
    n = x.size
    min_size = _min_size(n)
    sigma = robust_scale(x)
    if n < 2 * min_size or sigma <= 0 or not np.isfinite(sigma):
        return Segmentation([], max(sigma, 0.0), 0.0)
    # Standardise first: sums of raw values lose all precision on series like 5 + 1e-9 * noise.
    z = winsorize((x - np.median(x)) / sigma, 1.0)
    cands, rho = _candidates(z, min_size)
    confirmed = merge_weakest(z, cands, reading)
    return Segmentation(_placed(z, confirmed, cands, min_size, (), reading), sigma, rho)


def _placed(
    z: FloatArray,
    confirmed: list[int],
    cands: list[int],
    min_size: int,
    fixed: tuple[int, ...] = (),
    reading: Reading = SERIES,
) -> list[int]:
    """The confirmed changes with their kinks re-placed, and the level shifts a curve may
    have absorbed in the stretches between them (bounded by them and ``fixed``; none within
    the reader's resolution of a change, ``reading.resolution``)."""
    placed = relocate(z, confirmed, min_size, fixed) if confirmed else []
    resolution = reading.resolution(z.size)
    return sorted(placed + level_shifts(z, cands, min_size, (*fixed, *placed), resolution))


def _candidates(z: FloatArray, min_size: int) -> tuple[list[int], float]:
    """Candidate changes of a standardised series (line and mean searches, penalised in
    units of the long-run variance, re-estimated until stable) and the residuals' rho."""
    n = z.size
    if n < 2 * min_size:
        return [], 0.0
    penalty = _PENALTY_PER_LOG_N * float(np.log(max(n, 3)))
    lr_var, rho = 1.0, 0.0
    breaks: list[int] = []
    steps: list[int] = []
    for _ in range(_LONG_RUN_ROUNDS):
        found = binseg_linear(z, penalty * lr_var, min_size)
        steps = binseg_mean(z, penalty * lr_var, min_size)
        resid = _line_residuals(z, found)
        rho = lag1_rho(np.clip(resid, -3.0, 3.0))
        sd = float(np.median(np.abs(resid)) / GAUSS_MAD)
        new_var = max(1.0, sd * sd) * long_run_factor(rho)
        converged = found == breaks
        breaks = found
        if converged or new_var <= lr_var * 1.1:
            break
        lr_var = new_var
    return sorted({*breaks, *steps}), rho


def _line_residuals(x: FloatArray, breaks: list[int]) -> FloatArray:
    """Residuals of a separate least-squares line on each segment."""
    resid = np.empty_like(x)
    for a, b in regimes(x.size, breaks):
        y = x[a:b]
        t = np.arange(y.size, dtype=np.float64)
        if y.size >= 2:
            slope, intercept = np.polyfit(t, y, 1)
            resid[a:b] = y - (intercept + slope * t)
        else:
            resid[a:b] = 0.0
    return resid
