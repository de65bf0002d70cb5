"""Week-over-week lines of a verdict card, each with an interval, shown only when it moved.

A reader takes "TTFT p50 +18 %" as a change. Probes within a day are correlated (an
hour's load lasts hours, a day has its own level), so the week's probes are not hundreds
of independent draws: the unit here is the day. Each line compares this week's daily
values (daily median TTFT, daily error rate) with last week's by the Hodges-Lehmann
shift and Moses' distribution-free interval from the exact Mann-Whitney distribution
(Hollander & Wolfe, *Nonparametric Statistical Methods*, 3rd ed., 4.3). It assumes the
days of the two weeks are independent and alike when nothing changed; a weekly rhythm
is fair to both sides because both weeks hold the same weekdays. A line appears only
when its interval excludes no change and the estimate is big enough to matter. The
card's lines share one 5 % false-alarm budget (Bonferroni over ``LINES``), so a week
with no change shows no line in at least 95 % of weeks; each interval is therefore a
98.75 % one, and the four together hold their true shifts in at least 95 % of weeks,
which the line says as "95 % joint CI" (a plain "95 % CI" would claim less width than
it has). Ties (daily error rates of 0)
make the interval conservative. With few days (a week in progress), the interval cannot
exclude no change, and no line is shown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

import polars as pl

from pipeline.report import fmt

__all__ = ["ALPHA", "LINES", "Shift", "shift_interval", "week_moves"]

ALPHA = 0.05  # the card's false-alarm budget for all its week-over-week lines together
LINES = 4  # TTFT and error rate, short and long context
MIN_DAY_ANSWERS = 3  # a daily median of fewer answers is no day's TTFT
MIN_DAY_PROBES = 3  # nor is an error rate of fewer attempts
MIN_TTFT_CHANGE = 0.10  # smaller moves are not worth a line, however sure
MIN_ERROR_CHANGE = 0.02  # two points of error rate


@dataclass(frozen=True, slots=True)
class Shift:
    """A shift in location of ``after`` against ``before`` with its interval."""

    estimate: float
    lo: float
    hi: float

    @property
    def moved(self) -> bool:
        """The interval excludes no change."""
        return self.lo > 0 or self.hi < 0


@cache
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings give each Mann-Whitney U = 0 .. m*n."""
    if m == 0 or n == 0:
        return (1,)
    counts = [0] * (m * n + 1)
    for u, c in enumerate(_u_counts(m - 1, n)):  # the largest value is an ``after``
        counts[u + n] += c
    for u, c in enumerate(_u_counts(m, n - 1)):  # ... or a ``before``
        counts[u] += c
    return tuple(counts)


def _rank_k(m: int, n: int, alpha: float) -> int:
    """The largest k with P(U <= k - 1) <= alpha / 2; 0 when no interval reaches 1 - alpha."""
    total, below, k = math.comb(m + n, m), 0, 0
    for count in _u_counts(m, n):
        below += count
        if below / total > alpha / 2:
            break
        k += 1
    return k


def shift_interval(
    before: Sequence[float], after: Sequence[float], *, alpha: float
) -> Shift | None:
    """Hodges-Lehmann shift of ``after`` over ``before`` and its Moses 1 - ``alpha``
    interval; None when there are too few values for any interval at that level."""
    m, n = len(after), len(before)
    k = _rank_k(m, n, alpha) if m and n else 0
    if k == 0:
        return None
    diffs = sorted(a - b for a in after for b in before)
    mid = len(diffs) // 2
    estimate = diffs[mid] if len(diffs) % 2 else (diffs[mid - 1] + diffs[mid]) / 2
    return Shift(estimate, diffs[k - 1], diffs[len(diffs) - k])


def _median(values: Sequence[float]) -> float:
    ordered, mid = sorted(values), len(values) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _ttft_line(cls: str, before: pl.DataFrame, after: pl.DataFrame) -> str | None:
    b = before.filter(pl.col("n_ok") >= MIN_DAY_ANSWERS)["ttft_p50"].drop_nulls().to_list()
    a = after.filter(pl.col("n_ok") >= MIN_DAY_ANSWERS)["ttft_p50"].drop_nulls().to_list()
    b, a = [x for x in b if x > 0], [x for x in a if x > 0]
    log = shift_interval([math.log(x) for x in b], [math.log(x) for x in a], alpha=ALPHA / LINES)
    if log is None or not log.moved or abs(math.expm1(log.estimate)) < MIN_TTFT_CHANGE:
        return None
    est, lo, hi = (math.expm1(x) for x in (log.estimate, log.lo, log.hi))
    return (
        f"{cls.capitalize()}-context daily TTFT p50 {fmt.ms(_median(b))} → "
        f"{fmt.ms(_median(a))} ({fmt.rel(est)} vs last week, "
        f"95\u00a0% joint CI {fmt.rel_interval(lo, hi)})"
    )


def _error_line(cls: str, before: pl.DataFrame, after: pl.DataFrame) -> str | None:
    def rates(days: pl.DataFrame) -> list[float]:
        days = days.filter(pl.col("n") >= MIN_DAY_PROBES)
        return [1 - ok / n for ok, n in zip(days["n_ok"], days["n"], strict=True)]

    b, a = rates(before), rates(after)
    shift = shift_interval(b, a, alpha=ALPHA / LINES)
    if shift is None or not shift.moved or abs(shift.estimate) < MIN_ERROR_CHANGE:
        return None
    return (
        f"{cls.capitalize()}-context daily error rate {fmt.pct(_median(b))} → "
        f"{fmt.pct(_median(a))} ({fmt.points(shift.estimate)} vs last week, 95\u00a0% joint CI "
        f"{fmt.points(shift.lo)} to {fmt.points(shift.hi)})"
    )


def week_moves(days: pl.DataFrame, *, week_start: datetime) -> list[str]:
    """The lines of one provider's ``class_days`` (context_class, day, n, n_ok, ttft_p50;
    last week's days and this week's) whose interval excludes no change."""
    if days.height == 0:
        return []
    notes = []
    for cls in ("short", "long"):
        mine = days.filter(pl.col("context_class") == cls)
        this_week = pl.col("day") >= week_start
        before, after = mine.filter(~this_week), mine.filter(this_week)
        for line in (_ttft_line(cls, before, after), _error_line(cls, before, after)):
            if line is not None:
                notes.append(line)
    return notes
