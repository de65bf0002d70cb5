"""Week-over-week lines of the verdict cards, chosen across the whole report.

A reader takes "TTFT p50 +18 %" as a change. Probes within a day are correlated (an
hour's load lasts hours, a day has its own level), so the unit here is the day: each
candidate line compares this week's daily values with last week's by Welch's t-test,
daily median TTFT on a log scale (a relative change) and daily error rates (their
spread floored at the binomial spread of the pooled rate, so a run of days with no
errors is not read as certainty). It assumes the days are independent and their values
roughly normal (log TTFT), alike in both weeks when nothing changed; a weekly rhythm is
fair to both sides because both weeks hold the same weekdays.

The false-alarm budget is the report's, not a card's: with a budget per card, 25
unchanged providers showed about 0.6 false lines a week, so a user watching many
providers saw a false "latency up" most weeks. Lines are chosen by Benjamini-Hochberg
over every tested line of the report at ``FDR`` (on average at most 5 % of the lines
shown are false; in a week when nothing changed anywhere, no line at all in at least
95 % of weeks), assuming tests of different providers are independent and those of one
provider positively dependent. A chosen line's interval is the false-coverage-rate
adjusted one of Benjamini & Yekutieli (2005): with R of m lines chosen, each is a
1 - R * FDR / m interval, so on average at most 5 % of the shown intervals miss their
true shift. A chosen line whose estimate is too small to matter is left out (that can
only remove lines). A comparison that cannot be made (too few days in a week), or an
error rate probed too thinly to see a change worth a line, is said on the card rather
than read as "no change". Such an error rate (one whose days, spread only binomially
about the pooled rate, could not show a change of ``MIN_ERROR_CHANGE`` even at 5 %) is
not tested at all, so it spends none of the budget: the filter looks only at the pooled
rate and the probe counts, which do not depend on which week an error fell in (an
independent filter, Bourgon et al. 2010). At 24 probes a day that is most error rates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import numpy as np
import polars as pl
from scipy import stats

from pipeline.report import fmt

__all__ = ["FDR", "MIN_DAYS", "Comparison", "WeekMoves", "week_moves", "welch"]

FDR = 0.05  # the report's false discovery rate for its week-over-week lines
MIN_DAYS = 3  # a week with fewer usable days has no spread to compare with
MIN_DAY_ANSWERS = 3  # a daily median of fewer answers is no day's TTFT
MIN_DAY_PROBES = 3  # nor is an error rate of fewer attempts
MIN_TTFT_CHANGE = 0.10  # smaller moves are not worth a line, however sure
MIN_ERROR_CHANGE = 0.02  # two points of error rate

Metric = Literal["ttft", "error"]


@dataclass(frozen=True, slots=True)
class Welch:
    """Welch's difference of means (after - before) with its standard error and df."""

    estimate: float
    se: float
    df: float

    def pvalue(self) -> float:
        return float(2 * stats.t.sf(abs(self.estimate) / self.se, self.df))

    def interval(self, alpha: float) -> tuple[float, float]:
        half = float(stats.t.ppf(1 - alpha / 2, self.df)) * self.se
        return self.estimate - half, self.estimate + half

    def detectable(self, alpha: float) -> float:
        """The smallest difference that would be told from no change at ``alpha``."""
        return float(stats.t.ppf(1 - alpha / 2, self.df)) * self.se


def welch(before: Sequence[float], after: Sequence[float], *, floor_var: float = 0.0) -> Welch:
    """Welch's t for ``after`` against ``before``; each side's variance is at least
    ``floor_var`` (the spread the values must have whatever the sample shows)."""
    b, a = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    vb, va = max(float(b.var(ddof=1)), floor_var), max(float(a.var(ddof=1)), floor_var)
    sb, sa = vb / b.size, va / a.size
    se2 = sb + sa
    df = se2**2 / (sb**2 / (b.size - 1) + sa**2 / (a.size - 1)) if se2 > 0 else 1.0
    return Welch(float(a.mean() - b.mean()), math.sqrt(se2), df)


@dataclass(frozen=True, slots=True)
class Comparison:
    """One candidate line: a provider's metric in one context class, week against week."""

    provider: str
    context_class: str
    metric: Metric
    before: tuple[float, ...]  # daily values (log TTFT, or error rate)
    after: tuple[float, ...]
    test: Welch

    def line(self, alpha: float) -> str | None:
        """The card's line with its 1 - ``alpha`` interval; None when too small to matter."""
        lo, hi = self.test.interval(alpha)
        cls = self.context_class.capitalize()
        label = "adjusted 95\u00a0% CI"
        if self.metric == "ttft":
            est = math.expm1(self.test.estimate)
            if abs(est) < MIN_TTFT_CHANGE:
                return None
            b, a = (fmt.ms(math.exp(float(np.median(x)))) for x in (self.before, self.after))
            return (
                f"{cls}-context daily TTFT p50 {b} → {a} ({fmt.rel(est)} vs last week, "
                f"{label} {fmt.rel_interval(math.expm1(lo), math.expm1(hi))})"
            )
        if abs(self.test.estimate) < MIN_ERROR_CHANGE:
            return None
        b, a = (fmt.pct(float(np.mean(x))) for x in (self.before, self.after))
        return (
            f"{cls}-context daily error rate {b} → {a} ({fmt.points(self.test.estimate)} vs "
            f"last week, {label} {fmt.points(lo)} to {fmt.points(hi)})"
        )


@dataclass(frozen=True, slots=True)
class WeekMoves:
    """The report's chosen lines and what could not be compared, per provider."""

    lines: dict[str, list[str]]
    notes: dict[str, list[str]]
    tested: int  # m: lines tested across the report
    chosen: int  # R: lines the procedure chose (before the size filter)

    def summary(self) -> str:
        """This report's count for the footer: how many comparisons, how many chosen."""
        if self.tested == 0:
            return "No week-over-week comparison could be made this week."
        shown = sum(len(x) for x in self.lines.values())
        return (
            f"This week {fmt.count(self.tested, 'comparison')} across the report were "
            f"tested; {self.chosen} passed, {shown} big enough to show."
        )


def _ttft_days(days: pl.DataFrame) -> list[float]:
    usable = days.filter((pl.col("n_ok") >= MIN_DAY_ANSWERS) & (pl.col("ttft_p50") > 0))
    return [math.log(x) for x in usable["ttft_p50"].to_list()]


def _error_days(days: pl.DataFrame) -> tuple[list[float], float]:
    """Daily error rates and the mean probes a day behind them."""
    usable = days.filter(pl.col("n") >= MIN_DAY_PROBES)
    rates = [1 - ok / n for ok, n in zip(usable["n_ok"], usable["n"], strict=True)]
    return rates, float(usable["n"].mean()) if usable.height else 0.0  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class _ThinErrors:
    """An error rate's comparison and the spread its probes a day allow at best."""

    comparison: Comparison
    floor: Welch  # the test if every day spread only binomially


def _candidates(
    provider: str, days: pl.DataFrame, week_start: datetime
) -> tuple[list[Comparison], list[_ThinErrors]]:
    """The comparisons to test, and the error-rate ones too thinly probed to test."""
    found, thin = [], []
    for cls in ("short", "long"):
        mine = days.filter(pl.col("context_class") == cls)
        this_week = pl.col("day") >= week_start
        before, after = mine.filter(~this_week), mine.filter(this_week)
        b, a = _ttft_days(before), _ttft_days(after)
        ttft = welch(b, a) if min(len(b), len(a)) >= MIN_DAYS else None
        if ttft is not None and ttft.se > 0:  # days all alike have no spread to test
            found.append(Comparison(provider, cls, "ttft", tuple(b), tuple(a), ttft))
        (eb, nb), (ea, na) = _error_days(before), _error_days(after)
        if min(len(eb), len(ea)) < MIN_DAYS:
            continue
        pooled = (sum(r * nb for r in eb) + sum(r * na for r in ea)) / (len(eb) * nb + len(ea) * na)
        if not 0 < pooled < 1:  # no error, or nothing but errors, in both weeks: no move
            continue
        # a day's rate spreads at least binomially about the pooled rate
        floor = pooled * (1 - pooled) / ((nb + na) / 2)
        rates = welch(eb, ea, floor_var=floor)
        test = Comparison(provider, cls, "error", tuple(eb), tuple(ea), rates)
        at_best = welch([pooled] * len(eb), [pooled] * len(ea), floor_var=floor)
        if at_best.detectable(FDR) > MIN_ERROR_CHANGE:
            thin.append(_ThinErrors(test, at_best))
        else:
            found.append(test)
    return found, thin


def _short_weeks(provider: str, days: pl.DataFrame, week_start: datetime) -> list[str]:
    """A note for each context class probed in both weeks that had too few days to test."""
    notes = []
    for cls in ("short", "long"):
        mine = days.filter(pl.col("context_class") == cls)
        before = mine.filter(pl.col("day") < week_start)
        after = mine.filter(pl.col("day") >= week_start)
        nb, na = (len(_error_days(x)[0]) for x in (before, after))
        if min(nb, na) < MIN_DAYS and (before.height or after.height):
            notes.append(
                f"{cls.capitalize()}-context TTFT and error rate not compared with last "
                f"week: {fmt.days(na)} this week and {fmt.days(nb)} last week with "
                f"probes, a comparison needs {MIN_DAYS} in each"
            )
    return notes


def week_moves(days: pl.DataFrame, *, week_start: datetime) -> WeekMoves:
    """Every provider's lines from ``class_days`` (provider, context_class, day, n, n_ok,
    ttft_p50; last week's days and this week's), chosen together across the report."""
    if days.height == 0:
        return WeekMoves({}, {}, 0, 0)
    by_provider = days.partition_by("provider", as_dict=True)
    candidates: list[Comparison] = []
    thin: list[_ThinErrors] = []
    notes: dict[str, list[str]] = {}
    for (provider,), mine in sorted(by_provider.items()):
        name = str(provider)
        tested, untested = _candidates(name, mine, week_start)
        candidates += tested
        thin += untested
        short = _short_weeks(name, mine, week_start)
        if short:
            notes[name] = short
    m = len(candidates)
    adjusted = (
        stats.false_discovery_control([c.test.pvalue() for c in candidates], method="bh")
        if m
        else []
    )
    chosen = [c for c, q in zip(candidates, adjusted, strict=True) if q <= FDR]
    r = len(chosen)
    alpha = max(r, 1) * FDR / max(m, 1)  # Benjamini-Yekutieli's FCR-adjusted level
    lines: dict[str, list[str]] = {}
    for c in chosen:
        line = c.line(alpha)
        if line is not None:
            lines.setdefault(c.provider, []).append(line)
    sizes: dict[str, list[str]] = {}
    for t in thin:
        size = t.floor.detectable(alpha)
        sizes.setdefault(t.comparison.provider, []).append(
            f"{size * 100:.0f} points ({t.comparison.context_class} context)"
        )
    for provider, said in sizes.items():
        notes.setdefault(provider, []).append(_thin_errors(said))
    return WeekMoves(lines, notes, m, r)


def _thin_errors(sizes: list[str]) -> str:
    """Error rates probed too thinly for this report's level: how big a change they
    could have shown, so that no line does not read as no change."""
    return (
        "Error rate vs last week: too few probes a day to show a change smaller than "
        f"about {' or '.join(sizes)}"
    )
