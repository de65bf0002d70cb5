"""Effect sizes with uncertainty, and the tests shared by phases and warning signs.

Latency effects are shifts of the median on the log scale (reported as relative changes);
their confidence intervals come from a moving-block bootstrap, because hourly values are
autocorrelated and an i.i.d. bootstrap would be too narrow. Counts use exact tests; those
assume independent trials, so where the trials of a day share a cause (error bursts), the
counts are first shrunk by the dispersion measured between days (``day_dispersion``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import NDArray
from scipy import stats

__all__ = [
    "benjamini_hochberg",
    "day_dispersion",
    "fisher_dispersed",
    "fisher_one_sided",
    "holm",
    "mann_whitney_one_sided",
    "piecewise_dispersion",
    "rate_ratio_ci",
    "relative_shift_ci",
]

FloatArray = NDArray[np.float64]
_MAX_BOOT_N = 5000
MIN_DISPERSION_DAYS = 7  # days of counts a dispersion estimate needs


def _block_medians(x: FloatArray, block: int, reps: int, rng: np.random.Generator) -> FloatArray:
    """Medians of ``reps`` moving-block bootstrap resamples of ``x`` (finite values).

    Equal to ``np.median(x[idx], axis=1)`` without a partition per resample: a resample's
    k-th smallest value is ``sorted(x)[k-th smallest rank drawn]``, found from per-resample
    rank counts; even sizes average the two middle values as ``np.median`` does."""
    n = x.size
    block = max(1, min(block, n))
    n_blocks = math.ceil(n / block)
    starts = rng.integers(0, n - block + 1, size=(reps, n_blocks))
    idx = (starts[:, :, None] + np.arange(block)[None, None, :]).reshape(reps, -1)[:, :n]
    order = np.argsort(x, kind="stable")
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = np.arange(n)
    drawn = (ranks[idx] + (np.arange(reps) * n)[:, None]).ravel()
    below = np.bincount(drawn, minlength=reps * n).reshape(reps, n).cumsum(axis=1)
    mid = n // 2
    upper = x[order[(below <= mid).sum(axis=1)]]
    if n % 2:
        return np.asarray(upper, dtype=np.float64)
    lower = x[order[(below <= mid - 1).sum(axis=1)]]
    return np.asarray((lower + upper) / 2, dtype=np.float64)


def relative_shift_ci(
    before: FloatArray,
    after: FloatArray,
    *,
    block: int = 24,
    reps: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """Relative change of the median (exp of the log-median shift - 1) with a block-bootstrap CI.

    ``before`` and ``after`` are log values (NaN ignored).
    """
    a = before[np.isfinite(before)]
    b = after[np.isfinite(after)]
    if a.size == 0 or b.size == 0:
        return float("nan"), float("nan"), float("nan")
    est = float(np.median(b) - np.median(a))
    rng = np.random.default_rng(seed)
    # Very long windows: the median's sampling spread is tiny anyway; cap the work.
    a, b = a[-_MAX_BOOT_N:], b[:_MAX_BOOT_N]
    boots = _block_medians(b, block, reps, rng) - _block_medians(a, block, reps, rng)
    tail = (1 - level) / 2
    lo, hi = np.quantile(boots, [tail, 1 - tail])
    return math.expm1(est), math.expm1(float(lo)), math.expm1(float(hi))


def mann_whitney_one_sided(before: FloatArray, after: FloatArray, rho: float = 0.0) -> float:
    """p-value for 'after is larger', z deflated for AR(1) dependence ``rho``."""
    a = before[np.isfinite(before)]
    b = after[np.isfinite(after)]
    if a.size < 2 or b.size < 2:
        return float("nan")
    res = stats.mannwhitneyu(b, a, alternative="two-sided", method="asymptotic")
    p2 = float(res.pvalue)
    upward = float(np.median(b)) >= float(np.median(a))
    z = float(stats.norm.isf(max(p2, 1e-300) / 2.0)) * math.sqrt((1 - rho) / (1 + rho))
    return float(stats.norm.sf(z)) if upward else float(stats.norm.cdf(z))


def fisher_one_sided(events_b: int, n_b: int, events_a: int, n_a: int) -> float:
    """Exact p-value for 'the event rate is higher in window a than in baseline b'."""
    if n_a <= 0 or n_b <= 0:
        return float("nan")
    table = [[events_a, n_a - events_a], [events_b, n_b - events_b]]
    return float(stats.fisher_exact(table, alternative="greater").pvalue)


def day_dispersion(events: NDArray[np.integer], trials: NDArray[np.integer]) -> float:
    """How much more the daily event rates vary than independent trials allow (>= 1).

    Pearson's chi-square of the daily counts against their pooled rate, over its degrees of
    freedom (the quasi-binomial dispersion). Trials that share a cause within a day (an
    error burst lasting hours, a busy weekday) make the counts vary more than binomially,
    and an exact test on the pooled counts then fires far too often; dividing counts by
    this factor (effective sample sizes) restores its level. Needs ``MIN_DISPERSION_DAYS``
    days with trials; with fewer (or no events), 1.0: the binomial is assumed.
    """
    return piecewise_dispersion(events, trials, [0, len(events)])


def piecewise_dispersion(
    events: NDArray[np.integer], trials: NDArray[np.integer], edges: list[int]
) -> float:
    """``day_dispersion`` of days around the rate of their own segment (``edges``: 0, the
    change points, the number of days): the quasi-binomial dispersion of a fitted
    change-point model, Pearson's chi-square over (days - segments). A segment whose days
    all had no events (or only events) fits them exactly; 1.0 with fewer than
    ``MIN_DISPERSION_DAYS`` days with trials, or no segment with both outcomes."""
    e_all = np.asarray(events, dtype=np.float64)
    n_all = np.asarray(trials, dtype=np.float64)
    chi2, days, segments, informative = 0.0, 0, 0, 0
    for lo, hi in itertools.pairwise(edges):
        e, n = e_all[lo:hi], n_all[lo:hi]
        e, n = e[n > 0], n[n > 0]
        days += e.size
        segments += e.size > 0
        if e.size == 0 or e.sum() <= 0 or e.sum() >= n.sum():
            continue
        informative += 1
        rate = e.sum() / n.sum()
        chi2 += float(np.sum((e - n * rate) ** 2 / (n * rate * (1 - rate))))
    if days < MIN_DISPERSION_DAYS or informative == 0 or days <= segments:
        return 1.0
    return max(1.0, chi2 / (days - segments))


def fisher_dispersed(
    events_b: int, n_b: int, events_a: int, n_a: int, dispersion: float = 1.0
) -> float:
    """``fisher_one_sided`` on counts divided by ``dispersion`` (``day_dispersion``), the
    effective sample sizes of overdispersed trials; the plain exact test at 1.0."""
    if dispersion <= 1.0:
        return fisher_one_sided(events_b, n_b, events_a, n_a)

    def shrink(x: int) -> int:
        return round(x / dispersion)

    return fisher_one_sided(shrink(events_b), shrink(n_b), shrink(events_a), shrink(n_a))


def rate_ratio_ci(
    events_b: int, n_b: int, events_a: int, n_a: int, dispersion: float = 1.0
) -> tuple[float, float, float]:
    """Relative change of a rate (a / b - 1) with a 95 % log-normal CI (0.5 added to zeros);
    the log ratio's standard error is widened by sqrt(``dispersion``) (``day_dispersion``)."""
    if n_a <= 0 or n_b <= 0:
        return float("nan"), float("nan"), float("nan")
    ea, eb = events_a + 0.5, events_b + 0.5
    na, nb = n_a + 0.5, n_b + 0.5
    log_rr = math.log((ea / na) / (eb / nb))
    se = math.sqrt(max(dispersion, 1.0) * (1 / ea - 1 / na + 1 / eb - 1 / nb))
    return (
        math.expm1(log_rr),
        math.expm1(log_rr - 1.96 * se),
        math.expm1(log_rr + 1.96 * se),
    )


def benjamini_hochberg(pvalues: list[float]) -> list[float]:
    """BH-adjusted q-values (NaN p-values stay NaN and do not count as tests)."""
    return _adjusted(pvalues, "fdr_bh")


def holm(pvalues: list[float]) -> list[float]:
    """Holm-adjusted p-values: the family-wise error stays at the level whatever the
    dependence between the tests (NaN p-values stay NaN and do not count as tests)."""
    return _adjusted(pvalues, "holm")


def _adjusted(pvalues: list[float], method: str) -> list[float]:
    """statsmodels' ``multipletests`` adjustment over the finite p-values only."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, dtype=np.float64)
    adjusted = np.full(p.size, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        adjusted[ok] = multipletests(p[ok], method=method)[1]
    return adjusted.tolist()
