"""Offline change-point detection: where does a series move to a new level (or spread)?

``detect(values)`` is the public, parameter-free entry point. The method, and why:

0. **Cycles removed.** A significant regular cycle (daily, weekly...) is found and
   subtracted first (``periodicity.remove_cycle``): otherwise it reads as strongly
   autocorrelated noise and hides real steps.
1. **Robust input.** NaN/inf are dropped (indices are mapped back to the caller's positions).
   Each value is winsorized against a running median (window 5) at 3.5 robust standard
   deviations, so a single spike cannot pull a segment mean (a Huber-like likelihood) while a
   genuine step, which a running median preserves, is kept intact.
2. **Scale.** The noise scale comes from the MAD of first differences (insensitive to level
   shifts), so the method is scale-free.
3. **Penalised Gaussian likelihood, solved exactly by PELT** (Killick et al. 2012) up to
   2,000 points and by binary segmentation beyond (PELT cannot prune when nothing changes,
   so it turns quadratic), with an MBIC-like penalty of ``3 log n`` per change in units of
   the *long-run* noise variance.
   Real series are autocorrelated: the long-run variance ``s^2 (1+rho)/(1-rho)`` (AR(1)
   approximation) is estimated from residuals of the current segmentation and the fit is
   iterated, so a wandering series is not cut into many false steps.
4. **Confirmation.** Every candidate is tested against its neighbouring segments (Mann-Whitney,
   z-score deflated for lag-1 autocorrelation, and a t-test of a level step beyond a smooth
   quadratic trend through both segments, so a curve cut into pieces is not a change) with
   Bonferroni control at 1 %, plus a minimal effect of half a local noise standard
   deviation; failing changes are removed one at a time (weakest first) and the rest
   re-tested, as merging changes the neighbours.
5. **Variance changes** are searched (binary segmentation) on ``log`` squared first differences
   (a mean shift there is a log variance ratio), confirmed by a rank Brown-Forsythe test
   (Mann-Whitney on absolute deviations), kept only when no mean change is already nearby;
   each spread regime is then re-segmented for mean changes on its own noise scale.

Assumptions: changes are abrupt; segments are roughly stationary; smooth trends are not
change points (they may still be cut when steep relative to the noise). Slope changes
without a level step are not reported.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from pipeline.analysis.periodicity import remove_cycle

__all__ = ["Segmentation", "detect", "pelt_mean", "robust_scale", "segment"]

FloatArray = NDArray[np.float64]

_ALPHA = 0.01  # family-wise error rate for confirming changes
_PENALTY_FACTOR = 3.0  # per change, times log(n): between BIC (2) and conservative MBIC
_MIN_EFFECT_SD = 0.5  # smallest mean shift worth reporting, in noise standard deviations
_WINSOR_K = 3.5
_MAX_RHO = 0.9
_GAUSS_MAD = 0.6744897501960817
_PELT_MAX_N = 2000
_MIN_SPREAD_RATIO = 1.6  # smallest change in spread worth reporting


@dataclass(frozen=True, slots=True)
class Segmentation:
    """Change points (positions in the cleaned series) and the statistics behind them."""

    breaks: list[int]
    sigma: float  # robust noise standard deviation
    rho: float  # lag-1 autocorrelation of residuals (>= 0)
    pvalues: list[float]


def detect(values: NDArray[np.floating] | list[float]) -> list[int]:
    """Indices where new segments start (sorted; never 0 nor len(values)).

    Accepts any 1-D array: NaN/inf are ignored, any scale, any length.
    """
    x, _ = remove_cycle(np.asarray(values, dtype=np.float64).ravel())
    positions = np.flatnonzero(np.isfinite(x))
    clean = x[positions]
    seg = segment(clean)
    spread = _variance_breaks(clean, seg)
    breaks = set(seg.breaks)
    if spread:
        # The noise scale differs between spread regimes: segment each regime on its own
        # scale, so a noisy stretch is not cut into short false mean shifts.
        edges = [0, *spread, clean.size]
        breaks = set(spread)
        for a, b in itertools.pairwise(edges):
            breaks |= {a + k for k in segment(clean[a:b]).breaks}
    found = {int(positions[b]) for b in breaks if 0 < b < clean.size}
    return sorted(found)


def robust_scale(x: FloatArray) -> float:
    """Noise standard deviation from the MAD of first differences (level shifts ignored)."""
    if x.size < 3:
        return 0.0
    d = np.diff(x)
    mad = float(np.median(np.abs(d - np.median(d))))
    if mad > 0:
        return mad / _GAUSS_MAD / np.sqrt(2.0)
    # Mostly tied differences (piecewise constant or integer data): fall back to the mean
    # absolute difference, which still sees the non-zero ones.
    mean_abs = float(np.mean(np.abs(d)))
    return mean_abs * np.sqrt(np.pi / 2.0) / np.sqrt(2.0)


def _min_size(n: int) -> int:
    """Shortest segment: long enough to estimate a level, short enough for short series."""
    return int(max(2, min(5, n // 10)))


def _winsorize(x: FloatArray, sigma: float) -> FloatArray:
    """Clip each value to its running median (window 5) +- K robust sd: spikes lose leverage."""
    if x.size < 5 or sigma <= 0:
        return x.copy()
    pad = np.concatenate([np.repeat(x[0], 2), x, np.repeat(x[-1], 2)])
    windows = np.lib.stride_tricks.sliding_window_view(pad, 5)
    med = np.median(windows, axis=1)
    k = _WINSOR_K * sigma
    return np.clip(x, med - k, med + k)


def search_mean(x: FloatArray, penalty: float, min_size: int) -> list[int]:
    """Penalised mean-change search: exact PELT up to ``_PELT_MAX_N`` points, else binary
    segmentation (PELT cannot prune when there is no change, so it is quadratic there)."""
    if x.size <= _PELT_MAX_N:
        return pelt_mean(x, penalty, min_size)
    return binseg_mean(x, penalty, min_size)


def binseg_mean(x: FloatArray, penalty: float, min_size: int) -> list[int]:
    """Binary segmentation: split while the best split lowers the cost by more than penalty."""
    s1 = np.concatenate([[0.0], np.cumsum(x)])
    s2 = np.concatenate([[0.0], np.cumsum(x * x)])

    def cost(a: NDArray[np.int64] | int, b: NDArray[np.int64] | int) -> FloatArray:
        seg = s1[b] - s1[a]
        return np.asarray((s2[b] - s2[a]) - seg * seg / (np.asarray(b) - np.asarray(a)))

    breaks: list[int] = []
    stack = [(0, x.size)]
    while stack:
        a, b = stack.pop()
        if b - a < 2 * min_size:
            continue
        splits = np.arange(a + min_size, b - min_size + 1)
        gain = cost(a, b) - cost(a, splits) - cost(splits, b)
        best = int(np.argmax(gain))
        if gain[best] > penalty:
            s = int(splits[best])
            breaks.append(s)
            stack.extend([(a, s), (s, b)])
    return sorted(breaks)


def pelt_mean(x: FloatArray, penalty: float, min_size: int) -> list[int]:
    """Exact minimiser of sum of squared deviations + penalty * (#changes) by PELT.

    Returns the starts of segments 2.. (positions in ``x``).
    """
    n = x.size
    if n < 2 * min_size:
        return []
    s1 = np.concatenate([[0.0], np.cumsum(x)])
    s2 = np.concatenate([[0.0], np.cumsum(x * x)])
    f = np.full(n + 1, np.inf)
    f[0] = -penalty
    last = np.zeros(n + 1, dtype=np.int64)
    cands = np.zeros(0, dtype=np.int64)
    for t in range(min_size, n + 1):
        newest = t - min_size
        if newest == 0 or newest >= min_size:
            cands = np.append(cands, newest)
        length = t - cands
        seg_sum = s1[t] - s1[cands]
        cost = (s2[t] - s2[cands]) - seg_sum * seg_sum / length
        total = f[cands] + cost + penalty
        best = int(np.argmin(total))
        f[t] = total[best]
        last[t] = cands[best]
        # PELT pruning (K = 0 for this cost): a start that cannot win now never will.
        cands = cands[total - penalty <= f[t]]
    breaks: list[int] = []
    t = n
    while t > 0:
        t = int(last[t])
        if t > 0:
            breaks.append(t)
    return sorted(breaks)


def _residual_rho(x: FloatArray, breaks: list[int]) -> tuple[float, float]:
    """Robust sd and lag-1 autocorrelation of residuals around segment medians."""
    edges = [0, *breaks, x.size]
    resid = np.empty_like(x)
    for a, b in itertools.pairwise(edges):
        resid[a:b] = x[a:b] - np.median(x[a:b])
    sd = float(np.median(np.abs(resid)) / _GAUSS_MAD)
    if x.size < 4 or sd <= 0:
        return sd, 0.0
    r = np.clip(resid, -3 * sd, 3 * sd)
    # Pairs straddling a change are excluded: they are not noise.
    keep = np.ones(x.size - 1, dtype=bool)
    for b in breaks:
        keep[b - 1] = False
    a_, b_ = r[:-1][keep], r[1:][keep]
    denom = float(np.sqrt(np.sum(a_ * a_) * np.sum(b_ * b_)))
    rho = float(np.sum(a_ * b_) / denom) if denom > 0 else 0.0
    return sd, float(np.clip(rho, 0.0, _MAX_RHO))


def _mw_pvalue(a: FloatArray, b: FloatArray, rho: float) -> float:
    """Two-sided Mann-Whitney p-value with the z-score deflated for AR(1) dependence."""
    if a.size == 0 or b.size == 0:
        return 1.0
    res = stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic")
    p = float(res.pvalue)
    if not np.isfinite(p):
        return 1.0
    if rho <= 0:
        return p
    z = stats.norm.isf(max(p, 1e-300) / 2.0)
    z *= np.sqrt((1.0 - rho) / (1.0 + rho))
    return float(2.0 * stats.norm.sf(z))


def _step_pvalue(window: FloatArray, at: int) -> float:
    """p-value of a level step at ``at`` beyond a smooth (quadratic) trend through the window.

    A smooth trend cut into pieces shows adjacent segments with different medians but no
    discontinuity; this test asks for the discontinuity. The t statistic is deflated for the
    lag-1 autocorrelation of the residuals (AR(1) effective sample size).
    """
    n = window.size
    if n < 8:
        return 0.0
    t = np.arange(n, dtype=np.float64) - at
    ts = t / n
    design = np.column_stack([np.ones(n), ts, ts * ts, (t >= 0).astype(np.float64)])
    coef, *_ = np.linalg.lstsq(design, window, rcond=None)
    resid = window - design @ coef
    dof = n - 4
    s2 = float(resid @ resid) / dof
    xtx_inv = np.linalg.pinv(design.T @ design)
    se = float(np.sqrt(max(s2 * xtx_inv[3, 3], 0.0)))
    if se <= 0:
        return 0.0 if coef[3] != 0 else 1.0
    denom = float(resid[:-1] @ resid[:-1])
    rho = float(resid[:-1] @ resid[1:]) / denom if denom > 0 else 0.0
    rho = float(np.clip(rho, 0.0, _MAX_RHO))
    z = abs(float(coef[3])) / se * np.sqrt((1.0 - rho) / (1.0 + rho))
    return float(2.0 * stats.t.sf(z, dof))


def _confirm(
    x: FloatArray, raw: FloatArray, breaks: list[int], sigma: float, rho: float
) -> tuple[list[int], list[float]]:
    """Drop changes that fail the adjacent-segment test, weakest first, re-testing the rest."""
    current = list(breaks)
    while current:
        edges = [0, *current, x.size]
        pvals = []
        for i in range(1, len(edges) - 1):
            left, right = raw[edges[i - 1] : edges[i]], raw[edges[i] : edges[i + 1]]
            p = max(
                _mw_pvalue(left, right, rho),
                _step_pvalue(x[edges[i - 1] : edges[i + 1]], edges[i] - edges[i - 1]),
            )
            shift = abs(
                float(np.median(x[edges[i] : edges[i + 1]]) - np.median(x[edges[i - 1] : edges[i]]))
            )
            # Effect in units of the local noise: a burst inside a noisy stretch is not a step.
            local = max(
                sigma,
                robust_scale(raw[edges[i - 1] : edges[i]]),
                robust_scale(raw[edges[i] : edges[i + 1]]),
            )
            if shift < _MIN_EFFECT_SD * local:
                p = 1.0
            pvals.append(p)
        threshold = _ALPHA / len(current)
        worst = int(np.argmax(pvals))
        if pvals[worst] <= threshold:
            return current, pvals
        del current[worst]
    return [], []


def segment(x: FloatArray) -> Segmentation:
    """Mean-change segmentation of a finite 1-D series (see the module docstring)."""
    n = x.size
    min_size = _min_size(n)
    sigma = robust_scale(x)
    if n < 2 * min_size or sigma <= 0 or not np.isfinite(sigma):
        return Segmentation([], max(sigma, 0.0), 0.0, [])
    # Standardise first: cumulative sums of raw values lose all precision on series like
    # 5 + 1e-9 * noise.
    scale = sigma
    x = (x - np.median(x)) / scale
    sigma = 1.0
    xw = _winsorize(x, sigma)
    log_n = float(np.log(max(n, 3)))
    breaks: list[int] = []
    lr_var = sigma * sigma
    rho = 0.0
    for _ in range(3):
        found = search_mean(xw, _PENALTY_FACTOR * log_n * lr_var, min_size)
        sd, rho = _residual_rho(xw, found)
        new_var = max(sigma * sigma, sd * sd) * (1.0 + rho) / (1.0 - rho)
        converged = found == breaks
        breaks = found
        if converged or new_var <= lr_var * 1.1:
            break
        lr_var = new_var
    kept, pvals = _confirm(xw, x, breaks, sigma, rho)
    return Segmentation(kept, scale, rho, pvals)


def _variance_breaks(x: FloatArray, mean_seg: Segmentation) -> list[int]:
    """Changes in spread: mean shifts of log squared first differences, Brown-Forsythe tested."""
    n = x.size
    if n < 40 or mean_seg.sigma <= 0:
        return []
    d = np.diff(x)
    # The difference across a mean change is not noise: neutralise it.
    for b in mean_seg.breaks:
        d[b - 1] = 0.0
    floor = (0.05 * mean_seg.sigma) ** 2
    z = np.log(d * d + floor)
    # For Gaussian noise log(chi2_1) has sd pi/sqrt(2); its lower tail is clipped above.
    zsd = robust_scale(z)
    if zsd <= 0:
        return []
    zw = _winsorize(z, zsd)
    min_size = max(_min_size(n), 10)
    penalty = _PENALTY_FACTOR * float(np.log(n)) * (np.pi**2 / 2.0) * 1.5
    cands = [b + 1 for b in binseg_mean(zw, penalty, min_size)]
    edges_all = sorted({0, n, *mean_seg.breaks, *cands})
    out: list[int] = []
    for c in cands:
        if any(abs(c - b) <= min_size for b in mean_seg.breaks):
            continue
        i = edges_all.index(c)
        lo, hi = edges_all[i - 1], edges_all[i + 1]
        left, right = x[lo:c], x[c:hi]
        if left.size < min_size or right.size < min_size:
            continue
        dev_l = np.abs(left - np.median(left))
        dev_r = np.abs(right - np.median(right))
        ratio = float(np.median(dev_r) / max(float(np.median(dev_l)), 1e-300))
        if 1.0 / _MIN_SPREAD_RATIO < ratio < _MIN_SPREAD_RATIO:
            continue
        # Rank Brown-Forsythe: Mann-Whitney on absolute deviations from segment medians.
        p = float(stats.mannwhitneyu(dev_l, dev_r, method="asymptotic").pvalue)
        if np.isfinite(p) and p <= _ALPHA / max(len(cands), 1):
            out.append(c)
    return out
