"""Online (alerting) change detection: a two-sided CUSUM calibrated to a false-alarm rate.

The threshold ``h`` comes from Siegmund's approximation of the in-control average run length
of a one-sided CUSUM on standard normal data, ``ARL0 = (exp(2 k b) - 2 k b - 1) / (2 k^2)``
with ``b = h + 1.166``; each side gets twice the target so the two-sided detector meets it.
Values are standardised by a robust baseline (median, and the *long-run* standard deviation
under an AR(1) approximation, since hourly series are autocorrelated). After an alarm the
detector re-learns its baseline from the following observations, as a self-starting chart
would. Assumes roughly normal, weakly dependent standardised values: the calibration is
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
    """Threshold ``h`` giving a one-sided in-control ARL of ``target_arl0`` observations."""
    if target_arl0 <= 1:
        raise ValueError("target_arl0 must exceed 1 observation")
    return float(brentq(lambda h: arl0(h, k) - target_arl0, 0.0, 200.0))


def _baseline(values: FloatArray) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if finite.size < 3:
        return float("nan"), float("nan")
    loc = float(np.median(finite))
    sd = robust_scale(finite)
    dev = finite - loc
    denom = float(dev[:-1] @ dev[:-1])
    rho = float(np.clip((dev[:-1] @ dev[1:]) / denom, 0.0, 0.9)) if denom > 0 else 0.0
    marginal = max(sd, float(np.median(np.abs(dev)) / 0.6745))
    return loc, marginal * float(np.sqrt((1 + rho) / (1 - rho)))


def online_alarms(
    values: NDArray[np.floating],
    *,
    baseline_n: int = 168,
    target_arl0: float = 24 * 90,
    k: float = 0.5,
) -> list[Alarm]:
    """Two-sided CUSUM alarms over ``values`` (NaN skipped), mean time between false alarms
    about ``target_arl0`` observations; ``k`` is half the shift to detect, in sd units."""
    x = np.asarray(values, dtype=np.float64)
    h = cusum_threshold(2 * target_arl0, k)
    alarms: list[Alarm] = []
    i = 0
    while i < x.size:
        end = min(x.size, i + baseline_n)
        loc, sd = _baseline(x[i:end])
        if not np.isfinite(sd) or sd <= 0:
            i = end
            continue
        hi = lo = 0.0
        hi_start = lo_start = end
        j = end
        for j in range(end, x.size):
            if not np.isfinite(x[j]):
                continue
            z = (x[j] - loc) / sd
            if hi == 0.0:
                hi_start = j
            if lo == 0.0:
                lo_start = j
            hi = max(0.0, hi + z - k)
            lo = max(0.0, lo - z - k)
            if hi > h or lo > h:
                up = hi > h
                alarms.append(Alarm(j, hi_start if up else lo_start, 1 if up else -1))
                break
        else:
            break
        i = j + 1
    return alarms
