"""When does a daily border-input distance become an alarm, and how often by chance?

The rule (B3IT's, with its defaults): day t is *out* when |TV_t - mean| > max(0.2, 4 sd),
where mean and sd come from the sampled days t-18 .. t-5 (a 14-day window that leaves out
the 4 most recent days, so the first days of a change do not hide it). An *alarm* is 3 out
days in a row, and no new alarm follows for 10 days. "Days" are consecutive sampling days.

Before 7 days of history exist, mean and sd come from the null itself: the same reference
and daily sample sizes, re-sampled as seeded multinomials from the reference distribution
(a parametric bootstrap of "nothing changed"). ``false_alarm_rate`` runs the whole rule on
such simulated null histories; it assumes the calls of a day are independent draws from
one fixed distribution, which sticky routing or a cache would violate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

__all__ = [
    "DEFAULT_RULE",
    "AlarmRule",
    "DayVerdict",
    "FalseAlarms",
    "NullModel",
    "false_alarm_rate",
    "judge_series",
    "null_p_value",
    "simulate_null",
]

Reference = Mapping[str, Mapping[str, int]]


@dataclass(frozen=True, slots=True)
class AlarmRule:
    window_days: int = 14
    exclude_days: int = 4
    min_history_days: int = 7
    min_abs: float = 0.2
    sigmas: float = 4.0
    consecutive: int = 3
    cooldown_days: int = 10

    def describe(self) -> str:
        return (
            f"|TV - mean| > max({self.min_abs:g}, {self.sigmas:g} sd) on {self.consecutive} "
            f"days in a row; mean, sd over a {self.window_days}-day window leaving out the "
            f"last {self.exclude_days} days (the simulated null until "
            f"{self.min_history_days} days exist); {self.cooldown_days}-day cooldown"
        )


DEFAULT_RULE = AlarmRule()


@dataclass(frozen=True, slots=True)
class NullModel:
    """Mean and sd of the daily distance when nothing changed."""

    mean: float
    sd: float
    draws: int


@dataclass(frozen=True, slots=True)
class DayVerdict:
    distance: float
    baseline_mean: float
    threshold: float
    baseline: str  # "history" | "null"
    out: bool
    alarm: bool


@dataclass(frozen=True, slots=True)
class FalseAlarms:
    """Alarms on simulated unchanged histories; ``upper95`` is a one-sided 95 % bound on
    the per-day rate (Clopper-Pearson; about 3/n when none was seen)."""

    alarms: int
    days: int
    runs_with_alarm: int
    runs: int
    upper95: float

    @property
    def per_day(self) -> float:
        return self.alarms / self.days if self.days else 0.0


def _tables(reference: Reference) -> list[tuple[list[str], np.ndarray, int]]:
    tables = []
    for token_counts in reference.values():
        tokens = sorted(token_counts)
        values = np.array([token_counts[t] for t in tokens], dtype=float)
        if values.sum() > 0:
            tables.append((tokens, values / values.sum(), int(values.sum())))
    return tables


def _mean_tv(
    rng: np.random.Generator,
    tables: list[tuple[list[str], np.ndarray, int]],
    per_input: int,
    draws: int,
    pseudo_refs: list[np.ndarray] | None = None,
) -> np.ndarray:
    """``draws`` daily distances; each input's reference is re-drawn per day unless fixed."""
    total = np.zeros(draws)
    for i, (_, p, n_ref) in enumerate(tables):
        day = rng.multinomial(per_input, p, size=draws) / per_input
        if pseudo_refs is None:
            ref = rng.multinomial(n_ref, p, size=draws) / n_ref
        else:
            ref = pseudo_refs[i][None, :]
        total += 0.5 * np.abs(day - ref).sum(axis=1)
    return total / max(len(tables), 1)


def simulate_null(
    reference: Reference, per_input: int, *, seed: int, draws: int = 4000
) -> NullModel:
    """Daily distances between two independent samples of the reference distribution:
    one the size of the reference, one of ``per_input`` calls per input."""
    tables = _tables(reference)
    values = _mean_tv(np.random.default_rng(seed), tables, per_input, draws)
    return NullModel(float(values.mean()), float(values.std(ddof=1)), draws)


def null_p_value(
    reference: Reference, per_input: int, observed: float, *, seed: int, draws: int = 4000
) -> float:
    """P(a day's distance >= ``observed`` | nothing changed), from the same seeded null
    draws as ``simulate_null``: (1 + #exceeding) / (1 + draws), so never 0."""
    values = _mean_tv(np.random.default_rng(seed), _tables(reference), per_input, draws)
    return float((1 + np.sum(values >= observed - 1e-12)) / (1 + draws))


def judge_series(
    distances: Sequence[float], null: NullModel, rule: AlarmRule = DEFAULT_RULE
) -> list[DayVerdict]:
    """The rule applied to each day in order."""
    verdicts: list[DayVerdict] = []
    out_run, cooldown = 0, 0
    for t, tv in enumerate(distances):
        end = t - rule.exclude_days
        history = distances[max(0, end - rule.window_days) : max(0, end)]
        if len(history) >= rule.min_history_days:
            mean, sd, source = float(np.mean(history)), float(np.std(history, ddof=1)), "history"
        else:
            mean, sd, source = null.mean, null.sd, "null"
        threshold = max(rule.min_abs, rule.sigmas * sd)
        out = abs(tv - mean) > threshold
        out_run = out_run + 1 if out else 0
        cooldown = max(cooldown - 1, 0)
        alarm = out_run >= rule.consecutive and cooldown == 0
        if alarm:
            cooldown = rule.cooldown_days + 1
        verdicts.append(DayVerdict(tv, mean, threshold, source, out, alarm))
    return verdicts


def false_alarm_rate(
    reference: Reference,
    per_input: int,
    *,
    rule: AlarmRule = DEFAULT_RULE,
    days: int = 60,
    runs: int = 200,
    seed: int = 0,
) -> FalseAlarms:
    """Run the rule on ``runs`` simulated unchanged histories of ``days`` days. Each run
    fixes its own reference sample (as a real reference is fixed once taken)."""
    rng = np.random.default_rng(seed)
    tables = _tables(reference)
    null = simulate_null(reference, per_input, seed=seed + 1)
    alarms = runs_with_alarm = 0
    for _ in range(runs):
        refs = [rng.multinomial(n, p) / n for _, p, n in tables]
        series = _mean_tv(rng, tables, per_input, days, pseudo_refs=refs)
        fired = sum(v.alarm for v in judge_series(series.tolist(), null, rule))
        alarms += fired
        runs_with_alarm += fired > 0
    total = days * runs
    return FalseAlarms(alarms, total, runs_with_alarm, runs, _upper95(alarms, total))


def _upper95(events: int, trials: int) -> float:
    """One-sided 95 % Clopper-Pearson upper bound of a binomial rate."""
    if trials == 0:
        return 1.0
    if events >= trials:
        return 1.0
    return float(beta.ppf(0.95, events + 1, trials - events))
