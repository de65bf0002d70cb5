"""When did a departure from a stable level begin? Onset dating for gradual and abrupt changes.

A change-point detector places a gradual degradation (a ramp) near its middle, where the
evidence for a level change is strongest. Users want the day it *started*. ``ramp_fit``
fits a flat-ramp-flat (broken-line) mean to the signals around a confirmed break:

    x_t = a                          t < s         (the stable level)
    x_t = a + (b - a)(t - s + 1)/L   s <= t < e    (a straight ramp, L = e - s)
    x_t = b                          t >= e

Both levels are profiled out by least squares for every ``(s, e)``, so the left level is
estimated with the same loss as the fit (a fixed median left level is biased against a
least-squares fit under skewed noise and pulls the onset early). Values are first clipped
to a running median +- 3.5 robust sd, so isolated spikes have no leverage. Signals share
``s`` (each has its own ``e`` and levels) and are weighted by their long-run noise variance
(``long_run_var``), so the summed criterion is a Gaussian -2 log-likelihood.

Model choice: the ramp has one parameter more than an abrupt step (``e = s + 1``); it is
kept only when it lowers the criterion by more than the chi-square(1) 95 % quantile.

Right end of the fit: the model allows one departure, but an episode often goes on to a
second, larger change (a subtle slowdown, then long-context trouble). The fit therefore
ends at the furthest later confirmed break for which a lack-of-fit check passes (the mean
residual of every piece between breaks is zero at 1 %, Bonferroni): a ramp the detector
cut into pieces passes, a separate later change does not. Each judged piece spans at
least two days (``MIN_PIECE``; a shorter one joins its neighbour): the long-run variance
is the variance of sums over whole days (24-hour batch means), which is not the variance
of a sum over a day and a half, whose mean a leftover daily rhythm or the first hours of
a signal that departs a little faster than the shared ramp can move. Without it, a break
found a day or two into a ramp ended the fit there and dated the onset at the boundary.

Onset interval (95 %), by inverting the likelihood ratio over ``s`` in the ramp profile
(which nests the step, so when the data cannot tell a ramp from a step both starts stay
inside):

* step chosen: the abrupt change location is a non-regular parameter; the likelihood ratio
  at the true location tends to the maximum of two independent ``sup_u 2W(u) - |u|``
  (Brownian motion with drift; Hinkley 1970, Siegmund 1988), whose 95 % quantile is
  ``-2 log(1 - sqrt(0.95)) = 7.35`` (conservative for discrete time);
* ramp chosen: the kink of a continuous broken line is a regular parameter (Feder 1975),
  so the chi-square(1) 95 % quantile 3.84 applies.

Assumptions: one departure inside the fitted stretch; roughly Gaussian noise after
clipping whose dependence the long-run variance captures; a ramp roughly linear in the
signal's units (log latency here). A departure that starts slower than linearly is dated
late, and the interval does not account for that misfit.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

__all__ = ["CHI2_1_95", "STEP_LR_95", "clip_spikes", "long_run_var", "profile_sse", "ramp_fit"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

RAMP_WINDOW = 14 * 24  # how far a gradual onset may start before the detected break
MIN_PIECE = 48  # hours: the shortest piece the lack-of-fit check judges on its own
CHI2_1_95 = 3.841458820694124
STEP_LR_95 = -2.0 * math.log(1.0 - math.sqrt(0.95))  # 7.35: LR quantile for a step location
_GAUSS_MAD = 0.6744897501960817
_CLIP_K = 3.5


def clip_spikes(x: FloatArray) -> FloatArray:
    """Finite values clipped to their running median (window 5) +- 3.5 robust sd (from the
    MAD of first differences, blind to level shifts); NaN stays NaN."""
    out = x.astype(np.float64, copy=True)
    pos = np.flatnonzero(np.isfinite(out))
    v = out[pos]
    if v.size < 5:
        return out
    d = np.diff(v)
    sd = float(np.median(np.abs(d - np.median(d)))) / _GAUSS_MAD / math.sqrt(2.0)
    if sd <= 0:
        return out
    pad = np.concatenate([np.repeat(v[0], 2), v, np.repeat(v[-1], 2)])
    med = np.median(np.lib.stride_tricks.sliding_window_view(pad, 5), axis=1)
    out[pos] = np.clip(v, med - _CLIP_K * sd, med + _CLIP_K * sd)
    return out


def lag1(x: FloatArray) -> float:
    """Lag-1 autocorrelation of the finite, demedianed values (clipped to [0, 0.9])."""
    v = x[np.isfinite(x)]
    if v.size < 10:
        return 0.5
    d = v - np.median(v)
    denom = float(d[:-1] @ d[:-1])
    return float(np.clip((d[:-1] @ d[1:]) / denom, 0.0, 0.9)) if denom > 0 else 0.0


def long_run_var(x: FloatArray) -> float:
    """Long-run variance of a stable, spike-clipped hourly stretch (the variance of its mean
    times its length), so dependent noise does not overstate the evidence.

    The larger of two estimates: AR(1) (sample variance times (1 + rho) / (1 - rho); the
    sample variance, not a MAD, because the least-squares fit sees these values) and, with
    >= 10 days, non-overlapping 24-hour batch means, which also see slower dependence
    (a leftover daily rhythm, wandering load) that a lag-1 model misses.
    """
    v = x[np.isfinite(x)]
    if v.size < 3:
        return 0.0
    rho = lag1(v)
    ar1 = float(np.var(v, ddof=1)) * (1.0 + rho) / (1.0 - rho)
    days = x[: x.size // 24 * 24].reshape(-1, 24)
    full = np.isfinite(days).sum(axis=1) >= 12
    if full.sum() < 10:
        return ar1
    means = np.nanmean(days[full], axis=1)
    return max(ar1, float(np.var(means, ddof=1)) * 24)


def profile_sse(
    x: FloatArray, s_lo: int, s_hi: int
) -> tuple[FloatArray, FloatArray, IntArray] | None:
    """Profiled squared error of flat-ramp-flat fits to ``x`` (NaN ignored), both levels
    fitted by least squares, for every ramp start ``s`` in ``[s_lo, s_hi]``:
    ``(min over e > s of SSE(s, e), SSE(s, s + 1), argmin e)``, the second being the abrupt
    step at ``s``."""
    n = x.size
    mask = np.isfinite(x).astype(np.float64)
    if mask.sum() < 6 or not 0 < s_lo <= s_hi < n:
        return None
    y = np.where(mask > 0, x - np.nanmean(x), 0.0)
    t = np.arange(n, dtype=np.float64)

    def cum(v: FloatArray) -> FloatArray:
        return np.concatenate([[0.0], np.cumsum(v)])

    m0, m1, m2 = cum(mask), cum(mask * t), cum(mask * t * t)
    y0, y1, yy = cum(y), cum(y * t), cum(y * y)
    ss, ee = np.meshgrid(np.arange(s_lo, s_hi + 1), np.arange(s_lo + 1, n + 1), indexing="ij")
    ok = ee > ss
    ss, ee = ss[ok], ee[ok]
    # u(t) = 0 before s, (t - s + 1) / L on the ramp [s, e), 1 on [e, n): ``s`` is the first
    # departed hour (a step at s has u(s) = 1). Regressing y on (1, u):
    # SSE = Syy - Sy^2/N - (Syu - Sy Su / N)^2 / (Suu - Su^2 / N).
    sf, length = ss.astype(np.float64) - 1.0, (ee - ss).astype(np.float64)
    c0, c1, c2 = m0[ee] - m0[ss], m1[ee] - m1[ss], m2[ee] - m2[ss]
    tail = m0[n] - m0[ee]
    su = (c1 - sf * c0) / length + tail
    suu = (c2 - 2 * sf * c1 + sf * sf * c0) / (length * length) + tail
    syu = ((y1[ee] - y1[ss]) - sf * (y0[ee] - y0[ss])) / length + (y0[n] - y0[ee])
    big_n, sy = m0[n], y0[n]
    vu = suu - su * su / big_n
    cov = syu - sy * su / big_n
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = np.where(vu > 1e-12, cov * cov / vu, 0.0)
    sse = yy[n] - sy * sy / big_n - gain
    # Best ramp end for each start: a segment-wise minimum over the flattened grid.
    order = np.lexsort((sse, ss))
    first = np.concatenate([[True], np.diff(ss[order]) != 0])
    step = ee == ss + 1
    return sse[order[first]], sse[step][np.argsort(ss[step])], ee[order[first]].astype(np.int64)


@dataclass(frozen=True)
class _Fit:
    """Summed criteria over signals for every onset ``s`` (offset ``s_lo``), per signal data."""

    ramp: FloatArray
    step: FloatArray
    parts: list[tuple[FloatArray, IntArray, float]]  # (clipped x[lo:w1], best e per s, var)
    s_lo: int  # relative to lo

    def choice(self) -> tuple[bool, int]:
        """(ramp chosen, best s relative to lo). The ramp has one parameter more than a
        step (its length): kept only when it fits significantly better (chi-square(1))."""
        is_ramp = float(self.step.min() - self.ramp.min()) > CHI2_1_95
        crit = self.ramp if is_ramp else self.step
        return is_ramp, self.s_lo + int(np.argmin(crit))


def _fit(signals: list[FloatArray], lo: int, s_lo: int, c: int, s_hi: int, w1: int) -> _Fit | None:
    """Profiles of every usable signal over ``[lo, w1)``, onsets ``[s_lo, s_hi]``, each
    scaled by the long-run variance of its stable run ``[lo, c)`` and summed."""
    ramp: FloatArray | None = None
    step: FloatArray | None = None
    parts = []
    for x in signals:
        part = clip_spikes(x[lo:w1])
        left = part[: c - lo]
        if np.isfinite(left).sum() < 3 or np.isfinite(part[c - lo :]).sum() < 3:
            continue
        fit = profile_sse(part, s_lo - lo, s_hi - lo)
        scale = long_run_var(left)
        if fit is None or scale <= 0:
            continue
        ramp = fit[0] / scale if ramp is None else ramp + fit[0] / scale
        step = fit[1] / scale if step is None else step + fit[1] / scale
        parts.append((part, fit[2], scale))
    if ramp is None or step is None:
        return None
    return _Fit(ramp, step, parts, s_lo - lo)


def _adequate(fit: _Fit, pieces: list[tuple[int, int]]) -> bool:
    """Lack-of-fit check of the chosen model on the pieces after the break (relative
    positions): no piece's mean residual departs from zero at 1 % (Bonferroni over pieces
    and signals; z on the long-run variance). A later, separate change fails it."""
    is_ramp, s = fit.choice()
    k = len(pieces) * len(fit.parts)
    if k == 0:
        return True
    z_crit = float(stats.norm.isf(0.005 / k))
    for part, ends, scale in fit.parts:
        e = int(ends[s - fit.s_lo]) if is_ramp else s + 1
        t = np.arange(part.size, dtype=np.float64)
        u = np.clip((t - s + 1) / max(e - s, 1), 0.0, 1.0)
        ok = np.isfinite(part)
        design = np.column_stack([np.ones(ok.sum()), u[ok]])
        coef, *_ = np.linalg.lstsq(design, part[ok], rcond=None)
        resid = np.full(part.size, np.nan)
        resid[ok] = part[ok] - design @ coef
        for p0, p1 in pieces:
            r = resid[p0:p1]
            r = r[np.isfinite(r)]
            if r.size and abs(r.sum()) / math.sqrt(r.size * scale) > z_crit:
                return False
    return True


def _judged_edges(c: int, stops: list[int]) -> list[int]:
    """Edges of the pieces the lack-of-fit check judges: ``c``, the later breaks that leave
    ``MIN_PIECE`` hours on both sides, and the fit's right end (see the module)."""
    edges = [c]
    for b in stops[:-1]:
        if b - edges[-1] >= MIN_PIECE and stops[-1] - b >= MIN_PIECE:
            edges.append(b)
    return [*edges, stops[-1]]


def ramp_fit(
    signals: list[FloatArray],
    lo: int,
    c: int,
    hi: int,
    window: int = RAMP_WINDOW,
    ends: list[int] | None = None,
    latest: int | None = None,
) -> tuple[int, int, int]:
    """Onset of the departure around break ``c`` and its 95 % interval:
    ``(onset, onset_lo, onset_hi)`` (hour indices).

    ``[lo, c)`` is the stable run before the break and ``[c, hi)`` the departed episode;
    ``ends`` are the later confirmed breaks inside it. The onset ``s`` ranges over
    ``[max(lo + 1, c - window), latest]``; ``latest`` defaults to ``c`` (a break found on
    one noisy signal may be early: the caller may let the joint fit move it later). The fit
    uses ``[lo, w1)``, so the whole stable run informs the left level; ``w1`` is the
    furthest of ``min(hi, c + window)`` and the breaks before it whose fit passes the
    lack-of-fit check (the nearest when none does). The signals share ``s``; each has its
    own ramp end and levels.
    """
    s_lo = max(lo + 1, c - window)
    cap = min(hi, c + window)
    s_hi = c if latest is None else max(c, latest)
    stops = sorted({b for b in (ends or []) if c < b < cap} | {cap})
    fit: _Fit | None = None
    for k in range(len(stops) - 1, -1, -1):
        w1 = stops[k]
        last = min(s_hi, w1 - 2)  # the right level needs data after the onset
        tried = _fit(signals, lo, s_lo, c, last, w1) if lo < s_lo <= c <= last else None
        if tried is None:
            continue
        fit = tried
        pieces = [(a - lo, b - lo) for a, b in itertools.pairwise(_judged_edges(c, stops[: k + 1]))]
        if _adequate(fit, pieces):
            break
    if fit is None:
        return c, c, c
    is_ramp, best = fit.choice()
    # The interval comes from the general (ramp) profile, which nests the step: when the
    # data cannot tell a ramp from a step, both starts stay inside.
    cut = CHI2_1_95 if is_ramp else STEP_LR_95
    inside = np.flatnonzero(fit.ramp <= fit.ramp.min() + cut)
    first = lo + fit.s_lo
    return lo + best, int(first + inside.min()), int(first + inside.max())
