"""Judge a baseline's daily distances: the alarm rule, its null and its false-alarm rate."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.analysis.drift_alarm import (
    DEFAULT_RULE,
    AlarmRule,
    DayVerdict,
    FalseAlarms,
    NullModel,
    false_alarm_rate,
    judge_series,
    simulate_null,
)
from pipeline.analysis.logprob_tracking import LogprobTest, logprob_test
from pipeline.drift.baseline import Baseline

__all__ = ["DriftCheck", "check_baseline"]


@dataclass(frozen=True, slots=True)
class DriftCheck:
    rule: AlarmRule
    null: NullModel
    false_alarms: FalseAlarms
    days: list[tuple[str, DayVerdict]]
    logprobs: list[tuple[str, LogprobTest]]  # each day's LT window vs the reference window

    @property
    def alarm_days(self) -> list[str]:
        return [day for day, verdict in self.days if verdict.alarm]


def check_baseline(
    baseline: Baseline, rule: AlarmRule = DEFAULT_RULE, *, seed: int = 0, runs: int = 200
) -> DriftCheck:
    """Every sampled day with a distance, judged in order; the null is seeded, so the
    same file gives the same verdicts."""
    per_input = baseline.settings.per_input
    null = simulate_null(baseline.reference, per_input, seed=seed)
    sampled = [d for d in baseline.days if d.distance is not None]
    verdicts = judge_series([d.distance for d in sampled if d.distance is not None], null, rule)
    rate = false_alarm_rate(baseline.reference, per_input, rule=rule, runs=runs, seed=seed)
    logprobs = [
        (d.day, logprob_test(baseline.logprob_reference, d.logprobs, seed=seed))
        for d in baseline.days
        if d.logprobs and baseline.logprob_reference
    ]
    return DriftCheck(
        rule, null, rate, [(d.day, v) for d, v in zip(sampled, verdicts, strict=True)], logprobs
    )
