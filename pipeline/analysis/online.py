"""Online (alerting) change detection: a two-sided CUSUM calibrated to a false-alarm rate.

The threshold ``h`` comes from Siegmund's approximation of the in-control average run length
of a one-sided CUSUM on standard normal data, ``ARL0 = (exp(2 k b) - 2 k b - 1) / (2 k^2)``
with ``b = h + 1.166``; each side gets twice the target so the two-sided detector meets it.
Hourly series are autocorrelated, which would make a plain CUSUM alarm far too often; the
chart therefore runs on AR(1) residuals (prewhitening, the "special-cause chart"): level,
AR(1) coefficient and innovation sd come from a robust baseline window (default 28 days of
hourly values: with shorter windows the estimation error of the baseline, not the threshold,
dominates the false-alarm rate of autocorrelated series). A level shift of
d marginal sd shows in the residuals as about d * sqrt((1 - rho) / (1 + rho)). After an alarm the
detector re-learns its level from the next 48 observations (keeping the noise scale), as a
self-starting chart would; the error of that level makes false alarms somewhat more frequent
than the target after a first alarm (on i.i.d. normal data the mean gap is about 0.8 x the
target). Assumes roughly normal, weakly dependent standardised values: the calibration is
checked by simulation in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq

from pipeline.analysis.changepoints import robust_scale

__all__ = ["Alarm", "arl0", "cusum_threshold", "online_alarms"]

FloatArray = NDArray[np.float64]
_RELEARN_N = 48
_MIN_BASELINE = 10  # observations a baseline needs for its level, scale and AR(1)
_MAX_H = 200.0  # the threshold search's upper end, in sd (ARL near 1e87 at k = 0.5)


@dataclass(frozen=True, slots=True)
class Alarm:
    """An alarm at ``index``; the change most likely began at ``start``."""

    index: int
    start: int
    direction: int  # +1 upward shift, -1 downward


def arl0(h: float, k: float) -> float:
    """Siegmund's in-control average run length of a one-sided CUSUM (N(0,1) data)."""
    b = h + 1.166
    if k == 0:
        return b * b
    return float((np.exp(2 * k * b) - 2 * k * b - 1) / (2 * k * k))


def cusum_threshold(target_arl0: float, k: float = 0.5) -> float:
    """Threshold ``h`` giving a one-sided in-control ARL of ``target_arl0`` observations
    (``h`` searched in [0, 200] sd; the ARL at ``h = 0`` is the least a CUSUM can have)."""
    if not k >= 0:
        raise ValueError(f"cusum_threshold: k must be at least 0, got {k!r}")
    with np.errstate(over="ignore"):  # a steep k overflows the ARL far above any target
        lowest, highest = arl0(0.0, k), arl0(_MAX_H, k)
        if not lowest < target_arl0 < highest:
            raise ValueError(
                f"cusum_threshold: target_arl0 must lie between {lowest:.3g} and "
                f"{highest:.3g} observations for k = {k}, got {target_arl0!r}"
            )
        return float(brentq(lambda h: arl0(h, k) - target_arl0, 0.0, _MAX_H))


def _baseline(values: FloatArray) -> tuple[float, float, float]:
    """(level, innovation sd, AR(1) coefficient) of a baseline window."""
    finite = values[np.isfinite(values)]
    if finite.size < _MIN_BASELINE:
        return float("nan"), float("nan"), 0.0
    loc = float(np.median(finite))
    dev = finite - loc
    denom = float(dev[:-1] @ dev[:-1])
    rho = float(np.clip((dev[:-1] @ dev[1:]) / denom, 0.0, 0.9)) if denom > 0 else 0.0
    innov = dev[1:] - rho * dev[:-1]
    # Winsorised sd: robust to a few spikes, yet far less noisy than the MAD alone (an
    # underestimated scale in the baseline makes every later false alarm more likely).
    mad_sd = float(np.median(np.abs(innov - np.median(innov))) / 0.6745)
    clipped = np.clip(innov, -3 * mad_sd, 3 * mad_sd)
    sd = float(np.std(clipped)) * 1.015  # consistency for N(0,1) winsorised at 3 sd
    if sd <= 0:
        sd = robust_scale(finite)
    return loc, sd, rho


def online_alarms(
    values: NDArray[np.floating],
    *,
    baseline_n: int = 24 * 28,
    target_arl0: float = 24 * 90,
    k: float = 0.5,
) -> list[Alarm]:
    """Two-sided CUSUM alarms over ``values`` (NaN skipped), mean time between false alarms
    about ``target_arl0`` observations; ``k`` is half the shift to detect, in sd units."""
    if baseline_n < _MIN_BASELINE:
        raise ValueError(
            f"online_alarms: baseline_n must be at least {_MIN_BASELINE} observations, "
            f"got {baseline_n!r}"
        )
    x = np.asarray(values, dtype=np.float64)
    h = cusum_threshold(2 * target_arl0, k)
    # The scan below reads one value at a time: Python floats, not numpy scalars (same
    # IEEE arithmetic, a fraction of the cost per step).
    xs: list[float] = x.tolist()
    ok: list[bool] = np.isfinite(x).tolist()
    alarms: list[Alarm] = []
    i = 0
    sd, rho = float("nan"), 0.0
    while i < x.size:
        if not np.isfinite(sd) or sd <= 0:
            end = min(x.size, i + baseline_n)
            loc, sd, rho = _baseline(x[i:end])
            if not np.isfinite(sd) or sd <= 0:
                i = end
                continue
        else:
            # After an alarm only the level is re-learned (two days of data): the noise scale
            # rarely changes with the level, and a long blind period would miss the next shift.
            end = _after_n_finite(x, i, _RELEARN_N)
            window = x[i:end]
            window = window[np.isfinite(window)]
            if window.size == 0:
                break
            loc = float(np.median(window))
        hi = lo = 0.0
        hi_start = lo_start = end
        j = end
        marginal = float(np.sqrt(1 - rho * rho))
        for j in range(end, x.size):
            if not ok[j]:
                continue
            prev = xs[j - 1] - loc if j > 0 and ok[j - 1] else None
            # AR(1) residual (independent under no change); after a gap, the marginal value.
            z = (xs[j] - loc) * marginal / sd if prev is None else (xs[j] - loc - rho * prev) / sd
            if hi == 0.0:
                hi_start = j
            if lo == 0.0:
                lo_start = j
            up_sum, down_sum = hi + z - k, lo - z - k
            hi = up_sum if up_sum > 0.0 else 0.0  # max(0.0, .) without the call
            lo = down_sum if down_sum > 0.0 else 0.0
            if hi > h or lo > h:
                up = hi > h
                alarms.append(Alarm(j, hi_start if up else lo_start, 1 if up else -1))
                break
        else:
            break
        i = j + 1
    return alarms


def _after_n_finite(x: FloatArray, start: int, n: int) -> int:
    """Index just past the ``n``-th finite value at or after ``start`` (or the end)."""
    finite = np.flatnonzero(np.isfinite(x[start:]))
    return int(start + finite[n - 1] + 1) if finite.size >= n else x.size
