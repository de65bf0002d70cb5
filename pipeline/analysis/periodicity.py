"""A regular cycle in a series (daily, weekly, monthly...), found and removed before change
detection.

Why: a change detector that assumes noise around piecewise-constant levels sees a strong
cycle as heavily autocorrelated noise, inflates its long-run variance and then misses a
step that is plain to the eye. ``detect`` calls ``remove_cycle`` first; when no cycle is
significant the series is returned unchanged.

Method, all of it parameter-free for the caller:

1. **Is there a line?** The periodogram of the first differences (which turn level
   shifts into single spikes and whiten a random walk; differences are clipped at 3.5
   robust sd so a step's spike cannot dominate) is divided by a running median of itself,
   the local background, so coloured noise is not mistaken for a cycle. The most extreme
   of K ratios, read as exponential, must pass ``alpha / K``. This is a screen, not the
   false-alarm control: the median of a short window is itself noisy, so the ratio's tail
   is far heavier than exponential and the screen passes 4-12 % of changeless series. Its
   exact law was measured and not kept: it needs a line about three times stronger and
   loses real monthly and segmentation cycles (docs/changepoints.md, thirty-third session).
2. **Which period?** Two bases, each with its multiples up to 4, rounded both ways, whenever
   four whole cycles fit in the data: the peak's period, and the fundamental of every line
   that passes the screen. Differencing weights a cycle's k-th harmonic by
   ``4 sin^2(pi k / P)``, so an irregular profile (a spike at one hour of the day) can peak
   at its 6th to 9th harmonic, beyond the multiples' reach; the lines together still agree
   on the cycle they are harmonics of.
3. **Confirmed by a test, the false-alarm control:** the values minus a moving average over
   one period (which removes the cycle but keeps a step) are grouped by phase, prewhitened
   by AR(1), and the Kruskal-Wallis test must reject no phase effect at ``alpha`` divided
   by the number of integer periods in ``[2, n / 4]``. Why both: the test assumes
   independent values, and on a wandering series (AR(1) 0.9, a random walk) phases differ
   by chance, in 8-20 % of series at periods of 48-168 without prewhitening; and the period
   is chosen from the same data's spectrum, so only a bound over every period the search
   could propose keeps the level whatever the choice. The candidate with the smallest
   p-value wins, unless a multiple of its period still finds phases that differ in what
   its profile leaves (the same test on the residual): a divisor can catch most of a longer
   cycle's swing.
4. **Removed:** the phase medians (a profile robust to outliers and to the smear of a step
   in the moving average), centred on zero, are subtracted.

Assumptions: one dominant period, a fixed-shape profile (a growing amplitude is partly
left in), an integer number of samples per cycle, noise whose dependence is mostly at lag
one (AR(1) prewhitening; longer memory is not modelled). On changeless white noise, AR(1)
noise and random walks of 100-1,000 points the search reports a cycle in at most 0.25 %
of 2,000 series per row (``benchmarks/bench_cycle_null.py``; up to 3 % of the wandering ones
before both mends).

Known limit: a real series with longer memory than AR(1) (a level that wanders in slow
swings) can still pass the phase test at a long period. On 500 real series read by eye,
adding the fundamental moved 6: two better, four worse, three of those through a long
period (47, 168, 192) where people mark nothing (docs/changepoints.md, thirty-fourth session).
Trying every multiple of the peak instead found more of them (hourly machine series read
at 168, not 24) and was not kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage, stats

__all__ = ["Cycle", "find_cycle", "remove_cycle"]

FloatArray = NDArray[np.float64]

_ALPHA = 1e-3  # false-alarm level of each of the two tests
_MIN_CYCLES = 4  # whole cycles the data must hold for a profile to be estimated
_MIN_POINTS = 32
_MIN_FINITE_SHARE = 0.8
_MAX_HARMONIC = 4
_CLIP_SD = 3.5
_GAUSS_MAD = 0.6744897501960817


@dataclass(frozen=True, slots=True)
class Cycle:
    """A significant cycle: its period in samples, the profile by phase, the test's p."""

    period: int
    profile: FloatArray
    pvalue: float


def remove_cycle(x: FloatArray) -> tuple[FloatArray, Cycle | None]:
    """``x`` minus its cycle (phase 0 at index 0), or ``x`` itself when there is none.

    Non-finite values stay as they are; for the search they are bridged linearly so the
    phases stay aligned, and with more than a fifth missing no search is made.
    """
    finite = np.isfinite(x)
    if finite.sum() < _MIN_POINTS or finite.mean() < _MIN_FINITE_SHARE:
        return x, None
    filled = x
    if not finite.all():
        index = np.arange(x.size)
        filled = np.interp(index, index[finite], x[finite])
    cycle = find_cycle(filled)
    if cycle is None:
        return x, None
    phase = np.arange(x.size) % cycle.period
    return x - cycle.profile[phase], cycle


def find_cycle(x: FloatArray) -> Cycle | None:
    """The significant cycle of ``x`` (finite values), if any."""
    n = x.size
    if n < _MIN_POINTS:
        return None
    bases = _line_periods(x)
    if bases is None:
        return None
    periods = {
        int(rounded(base * h))
        for base in bases
        for h in range(1, _MAX_HARMONIC + 1)
        for rounded in (np.floor, np.ceil)
        if 2 <= rounded(base * h) <= n / _MIN_CYCLES
    }
    best: Cycle | None = None
    for period in sorted(periods):
        candidate = _phase_profile(x, period)
        if best is None or candidate.pvalue < best.pvalue:
            best = candidate
    possible = n // _MIN_CYCLES - 1  # integer periods in [2, n / 4], n >= 32: at least 7
    if best is None or best.pvalue >= _ALPHA / possible:
        return None
    return _longer_if_needed(x, best, sorted(p for p in periods if p % best.period == 0))


def _longer_if_needed(x: FloatArray, best: Cycle, multiples: list[int]) -> Cycle:
    """The cycle at a multiple of ``best``'s period when that explains what ``best`` leaves.

    A period holds every cycle of its divisors, so the smallest p-value can go to a divisor
    that catches most of the swing (period 2 of a quarterly pattern high in two quarters)
    while the longer period is the true one. So, shortest first, a multiple of the current
    period replaces it when its phases still differ once the current profile is removed
    (the same Kruskal-Wallis test on the residual, at ``alpha`` over the multiples).
    """
    longer = [p for p in multiples if p > best.period]
    for period in longer:
        if period % best.period:
            continue
        residual = x - _moving_average(x, best.period)
        residual -= best.profile[np.arange(x.size) % best.period]
        if _phase_pvalue(residual, _phase_medians(residual, period), period) < _ALPHA / len(longer):
            best = _phase_profile(x, period)
    return best


def _line_periods(x: FloatArray) -> tuple[float, float] | None:
    """Periods (in samples) of the strongest line above the local background, not rounded,
    and of the fundamental of every line that passes the screen (``_fundamental``).

    The background at a frequency is the running median of the power around it, mirrored at
    the ends of the spectrum: a line at the highest frequencies (a cycle that alternates,
    such as a quarterly pattern high in the second and fourth quarters, which differencing
    makes strongest there) is judged against its neighbours, not against copies of itself.
    The Nyquist frequency (period 2) is included for an even length; its power is chi-squared
    with one degree of freedom, not two, so its tail is tested as such."""
    d = np.diff(x)
    centre = float(np.median(d))
    mad = float(np.median(np.abs(d - centre)))
    if mad <= 0:
        return None
    clip = _CLIP_SD * mad / _GAUSS_MAD
    d = np.clip(d, centre - clip, centre + clip)
    d = (d - d.mean()) / mad  # the ratios below are scale-free; squares of 1e200 are not
    m = d.size
    power = np.abs(np.fft.rfft(d)) ** 2 / m
    # frequencies k/m whose period m/k lies in [2, m / _MIN_CYCLES]
    ks = np.arange(_MIN_CYCLES, m // 2 + 1)
    if ks.size < 10:
        return None
    window = max(11, (ks.size // 20) | 1)
    background = ndimage.median_filter(power[1:], size=window, mode="mirror")[ks - 1]
    with np.errstate(over="ignore"):  # a line over an empty background: infinitely strong
        ratio = power[ks] / np.maximum(background / np.log(2.0), np.finfo(float).tiny)
    # Each ratio is read as exponential (chi-squared, 2 dof, over its mean; 1 dof at the
    # Nyquist term of an even length), as it would be against a known background. The
    # window median is itself noisy, so this screen passes far more often than alpha on
    # changeless series (step 1 of the module docstring); the phase test is the control.
    nyquist = 2 * ks == m
    log_sf = -ratio
    log_sf[nyquist] = stats.chi2.logsf(ratio[nyquist], 1)  # one term: not the whole spectrum
    passed = log_sf <= np.log(_ALPHA / ks.size)
    if not passed.any():
        return None
    return m / float(ks[int(np.argmin(log_sf))]), _fundamental(ks[passed], m, n=x.size)


def _fundamental(bins: NDArray[np.int64], m: int, n: int) -> float:
    """The smallest whole period, up to ``n / 4``, of which every line (frequency bins of an
    ``m``-point spectrum) is a harmonic within one bin; the longest line's period if none is.

    An irregular profile (a spike at one hour of the day) spreads its power over many
    harmonics, and differencing favours the high ones, so the strongest line can be the 6th
    to 9th harmonic of the cycle; together the lines still agree on their fundamental. A
    single line gives about its own period. At long periods the harmonics are only a few bins
    apart, so two or three lines can fit one by chance: the phase test decides then."""
    periods = np.arange(2, n // _MIN_CYCLES + 1)
    spacing = m / periods[:, None]  # every period at once: a loop cost 0.1 s at 26,000 points
    harmonic = np.maximum(np.round(bins / spacing), 1.0)
    fits = np.all(np.abs(bins - harmonic * spacing) <= 1.0, axis=1)
    return float(periods[int(np.argmax(fits))]) if fits.any() else m / float(bins[0])


def _phase_profile(x: FloatArray, period: int) -> Cycle:
    """Phase medians of ``x`` minus its one-period moving average, and their KW test."""
    detrended = x - _moving_average(x, period)
    profile = _phase_medians(detrended, period)
    return Cycle(period, profile - profile.mean(), _phase_pvalue(detrended, profile, period))


def _phase_medians(values: FloatArray, period: int) -> FloatArray:
    """Median of ``values`` at each phase, vectorised: sorted by phase then value, each
    group's middle."""
    phase = np.arange(values.size) % period
    counts = np.bincount(phase, minlength=period)
    ranked = values[np.lexsort((values, phase))]
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return 0.5 * (ranked[starts + (counts - 1) // 2] + ranked[starts + counts // 2])


def _phase_pvalue(values: FloatArray, profile: FloatArray, period: int) -> float:
    """Kruskal-Wallis across phases on ``values`` prewhitened by AR(1), rho measured once
    the phase profile is out: the test assumes independent values, and a wandering series
    would otherwise show phases that differ by chance."""
    phase = np.arange(values.size) % period
    left = values - profile[phase]
    left = left - left.mean()
    denominator = float(np.dot(left, left))
    rho = float(np.dot(left[1:], left[:-1])) / denominator if denominator > 0 else 0.0
    rho = min(max(rho, 0.0), 0.99)
    white = values[1:] - rho * values[:-1]
    counts = np.bincount(phase[1:], minlength=period)
    return _kruskal_pvalue(white, phase[1:], counts)


def _kruskal_pvalue(
    values: FloatArray, group: NDArray[np.int64], counts: NDArray[np.int64]
) -> float:
    """Kruskal-Wallis H test (tie-corrected, chi-squared approximation), vectorised: with
    thousands of phases scipy's per-group loop is what costs."""
    n = values.size
    ranks = stats.rankdata(values)
    _, ties = np.unique(values, return_counts=True)
    correction = 1.0 - float(np.sum(ties.astype(np.float64) ** 3 - ties)) / (n**3 - n)
    if correction <= 0 or counts.size < 2:
        return 1.0  # every value tied: no evidence of a cycle
    rank_sums = np.bincount(group, weights=ranks, minlength=counts.size)
    h = 12.0 / (n * (n + 1)) * float(np.sum(rank_sums**2 / counts)) - 3.0 * (n + 1)
    return float(stats.chi2.sf(h / correction, counts.size - 1))


def _moving_average(x: FloatArray, period: int) -> FloatArray:
    """Centred moving average over exactly one period (2 x period for an even period, as in
    classical decomposition): a periodic component averages out, a step stays a step.
    Ends are padded with the end values; cumulative sums keep it linear in the length."""
    half = period // 2
    padded = np.concatenate([np.repeat(x[0], half), x, np.repeat(x[-1], half)])
    sums = np.concatenate([[0.0], np.cumsum(padded)])
    if period % 2:
        return (sums[period:] - sums[:-period]) / period
    # window of period + 1 points, the two end points at half weight
    full = sums[period + 1 :] - sums[: -(period + 1)]
    ends = padded[: x.size] + padded[period:]
    return (full - 0.5 * ends) / period
