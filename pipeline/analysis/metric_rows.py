"""Per-series rows: seasonality, offline and online change points, rate changes.

One deseasonalized log series (latency metrics) or one daily rate (errors, timeouts, wrong
answers, sanity flags) at a time; each break gets an effect with its interval and a p-value.

A rate's break is where the search put it, so the exact test at that day alone is
optimistic, and a day's probes are no independent trials (errors come in bursts). Its
stored p-value is therefore the two-sided exact test on counts divided by the daily
dispersion around the fitted segments (``effects.piecewise_dispersion``) and by how
long busy spells last (``break_tests.day_dependence``), times the number
of days the break could have been put on between its neighbours (Bonferroni over the
search: conservative; the neighbours themselves are not adjusted for). A latency break's
p-value likewise tests the whole stretch between its neighbours, for a change of level at
any hour, against hourly noise that wanders (``break_tests.level_change_pvalue``).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from numpy.typing import NDArray

from pipeline.analysis.break_tests import day_dependence, level_change_pvalue
from pipeline.analysis.changepoints import detect
from pipeline.analysis.effects import (
    fisher_dispersed,
    piecewise_dispersion,
    rate_ratio_ci,
    relative_shift_ci,
)
from pipeline.analysis.online import Alarm, online_alarms
from pipeline.analysis.rows import ResultRows, as_datetime, finite
from pipeline.analysis.seasonality import Seasonality

__all__ = [
    "ONLINE_ARL0_HOURS",
    "ONLINE_K",
    "ONLINE_METRICS",
    "SPARSE_EVENTS_PER_DAY",
    "change_rows",
    "log_or_nan",
    "rate_change_rows",
    "search_scale",
    "seasonality_rows",
]

ONLINE_ARL0_HOURS = 24 * 90
# The CUSUM's reference value: half of a 1.5 residual-sd shift. With thresholds that honour
# the residuals' heavy tails (online.py), k = 0.5 slowed the +30 % step at 12 probes/h (about
# 3 sd) from a median 1.5 to 2.0 h (bench_analysis_accuracy Part 2); 0.75 keeps 1.5 h. Normal
# theory at 2160 h: mean delay for a 1 sd shift 15.1 h (13.4 at 0.5), 3 sd 2.4 h (3.0),
# but 0.5 sd 105 h (59).
ONLINE_K = 0.75
_LEVEL_HOURS = 168  # an online alarm's levels: the week before its start and the week after
# Hourly p95 of a dozen probes is too skewed and noisy for a normal-theory CUSUM: alarms run
# on the medians only (the offline detector, rank-confirmed, still covers p95).
ONLINE_METRICS = ("ttft_p50_ms", "total_p50_ms", "output_tps_p50")


def _level(log_values: NDArray[np.float64]) -> float | None:
    """Median level back on the metric's scale (None without data)."""
    kept = log_values[np.isfinite(log_values)]
    return finite(math.exp(float(np.median(kept)))) if kept.size else None


def log_or_nan(x: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log(x), np.nan)


def seasonality_rows(c: ResultRows, key: tuple[str, str, str], metric: str, s: Seasonality) -> None:
    provider, model, ctx = key
    c.add(
        "seasonality", provider=provider, model=model, metric=metric, context_class=ctx,
        method=s.method, n_hours=s.n_hours, peak_to_trough=finite(s.peak_to_trough),
        peak_hours=s.peak_hours, pvalue=finite(s.pvalue), significant=s.significant,
        detail=s.detail, peak_to_trough_lo=finite(s.peak_to_trough_lo),
        peak_to_trough_hi=finite(s.peak_to_trough_hi),
    )  # fmt: skip
    if metric == "ttft_p50_ms":
        for how in range(168):
            c.add(
                "hour_of_week", provider=provider, model=model, metric=metric,
                context_class=ctx, how=how, value=float(s.profile[how]),
                n=int(s.profile_n[how]),
            )  # fmt: skip


def change_rows(
    c: ResultRows,
    key: tuple[str, str, str],
    metric: str,
    hours: NDArray[np.datetime64],
    adjusted: NDArray[np.float64],
    seed: int,
) -> list[int]:
    """Offline (confirmed) and online change points of one deseasonalized log series;
    returns the offline breaks (``detect``'s), so phases need not search the series again."""
    provider, model, ctx = key
    breaks = detect(adjusted, monitor=True)
    edges = [0, *breaks, adjusted.size]
    for i, b in enumerate(breaks, start=1):
        before, after = adjusted[edges[i - 1] : b], adjusted[b : edges[i + 1]]
        eff, lo, hi = relative_shift_ci(before, after, seed=seed + i)
        p = level_change_pvalue(adjusted[edges[i - 1] : edges[i + 1]], b - edges[i - 1])
        c.add(
            "change_points", provider=provider, model=model, metric=metric,
            context_class=ctx, at=as_datetime(hours[b]),
            level_before=_level(before),
            level_after=_level(after),
            effect=finite(eff), effect_lo=finite(lo), effect_hi=finite(hi),
            pvalue=finite(p), detector="offline", detected_at=None,
        )  # fmt: skip
    if metric not in ONLINE_METRICS:
        return breaks
    baseline_n = min(24 * 28, max(24 * 7, adjusted.size // 3))
    alarms = online_alarms(
        adjusted, baseline_n=baseline_n, target_arl0=ONLINE_ARL0_HOURS, k=ONLINE_K
    )
    for alarm, after_end in zip(alarms, _after_ends(alarms, adjusted.size), strict=True):
        before = adjusted[max(0, alarm.start - _LEVEL_HOURS) : alarm.start]
        after = adjusted[alarm.start : after_end]
        eff, lo, hi = relative_shift_ci(before, after, seed=seed)
        c.add(
            "change_points", provider=provider, model=model, metric=metric,
            context_class=ctx, at=as_datetime(hours[alarm.start]),
            level_before=_level(before), level_after=_level(after),
            effect=finite(eff), effect_lo=finite(lo), effect_hi=finite(hi),
            pvalue=None, detector="online", detected_at=as_datetime(hours[alarm.index]),
        )  # fmt: skip
    return breaks


def _after_ends(alarms: list[Alarm], size: int) -> list[int]:
    """Where each alarm's 'after' level ends: a week past its start (as 'before' is a week),
    cut at the next alarm's start or the series end, and never before the alarm itself.

    The hours from the start to the alarm alone are the very values that pushed the CUSUM
    over its threshold, so their median is biased away from the old level: a changeless
    series alarmed on 10 low hours read -27 % (1374 -> 1007 ms) where its next 65 hours'
    median was 1316 ms (-4 %)."""
    nexts = [a.start for a in alarms[1:]] + [size] if alarms else []
    return [
        max(a.index + 1, min(a.start + _LEVEL_HOURS, nxt, size))
        for a, nxt in zip(alarms, nexts, strict=True)
    ]


# Mean events a day below which a daily rate is searched raw (see ``search_scale``).
SPARSE_EVENTS_PER_DAY = 1.0


def search_scale(events: NDArray[np.int64], trials: NDArray[np.int64]) -> NDArray[np.float64]:
    """A daily rate on the scale its change points are searched on (NaN on days without
    trials): the empirical logit log((e + 1/2) / (n - e + 1/2)), or the raw rate when events
    are sparse (under ``SPARSE_EVENTS_PER_DAY`` a day on average).

    ``detect`` assumes noise of one size throughout, but a raw rate's noise grows with the
    rate, like p with independent probes and like p^2 with bursts (a log-normal factor), so
    after a step up the noise is larger and the step is missed. On the logit scale bursts
    are the same size at every rate. With under one event a day no transform stabilises
    anything (the 1/2 dominates, and a thin day without events looks high), so sparse rates
    stay raw. Measured in benchmarks/bench_rate_changes.py (its docstring has the figures:
    steps found 42.4 % -> 46.7 %, false breaks per changeless series 0.086 -> 0.068).
    """
    e = events.astype(np.float64)
    n = trials.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        if e.sum() < SPARSE_EVENTS_PER_DAY * np.count_nonzero(n):
            return np.where(n > 0, e / np.maximum(n, 1), np.nan)
        return np.where(n > 0, np.log((e + 0.5) / (n - e + 0.5)), np.nan)


# Daily rates: (metric name, events column, trials column).
_RATES = (
    ("error_rate", "n_busy", "n"),
    ("timeout_rate", "n_timeout", "n"),
    ("wrong_rate", None, "n_scored"),
    ("sanity_flag_rate", "n_flagged", "n"),
)


def rate_change_rows(c: ResultRows, key: tuple[str, str, str], part: pl.DataFrame) -> None:
    """Offline change points of daily outcome rates (counts summed per UTC day), searched on
    ``search_scale``; levels and effects are on the rate scale, from the counts."""
    provider, model, ctx = key
    daily = (
        part.with_columns(pl.col("hour").dt.truncate("1d").alias("day"))
        .group_by("day")
        .agg(pl.col("n", "n_busy", "n_timeout", "n_scored", "n_correct", "n_flagged").sum())
        .sort("day")
        .with_columns((pl.col("n_scored") - pl.col("n_correct")).alias("n_wrong"))
    )
    for metric, events_col, trials_col in _RATES:
        ev = daily[events_col or "n_wrong"].fill_null(0).to_numpy().astype(np.int64)
        tr = daily[trials_col].fill_null(0).to_numpy().astype(np.int64)
        if tr.sum() == 0 or ev.sum() == 0:
            continue
        breaks = detect(search_scale(ev, tr), monitor=True)
        edges = [0, *breaks, tr.size]
        phi = piecewise_dispersion(ev, tr, edges) * day_dependence(ev, tr, edges)
        for i, b in enumerate(breaks, start=1):
            e_b, n_b = int(ev[edges[i - 1] : b].sum()), int(tr[edges[i - 1] : b].sum())
            e_a, n_a = int(ev[b : edges[i + 1]].sum()), int(tr[b : edges[i + 1]].sum())
            eff, lo, hi = rate_ratio_ci(e_b, n_b, e_a, n_a, phi)
            p_up = fisher_dispersed(e_b, n_b, e_a, n_a, phi)
            p_down = fisher_dispersed(e_a, n_a, e_b, n_b, phi)
            positions = edges[i + 1] - edges[i - 1] - 1  # days the break could have been on
            c.add(
                "change_points", provider=provider, model=model, metric=metric,
                context_class=ctx, at=daily["day"][b],
                level_before=e_b / n_b if n_b else None, level_after=e_a / n_a if n_a else None,
                effect=finite(eff), effect_lo=finite(lo), effect_hi=finite(hi),
                pvalue=finite(min(1.0, 2 * min(p_up, p_down) * positions)), detector="offline",
                detected_at=None,
            )  # fmt: skip
