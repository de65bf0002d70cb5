"""A degradation's severity in words, and when the answers behind it are too few to size it.

The analysis sizes a phase as the shift of the hourly median of one latency signal
(``phases.severity_signal``: short- or long-context TTFT, or output speed) against the
baseline, with a 95 % interval from a moving-block bootstrap of 24-hour blocks
(``effects.relative_shift_ci``). Only answered probes have a latency. After an outage in
which nearly every probe failed, that number rests on the few that got through (and on
the healthy hours before the failures began), so the report counts the answers first.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import polars as pl

from pipeline.analysis.phases import severity_signal
from pipeline.report import fmt

__all__ = ["MIN_SEVERITY_HOURS", "SeverityBasis", "describe", "severity_basis"]

MIN_SEVERITY_HOURS = 24
"""Hours with an answer on the severity signal a degradation needs before the report
prints its latency severity.

The interval resamples 24-hour blocks of hourly medians: with fewer answered hours the
whole phase is one block, every resample repeats it, and the printed interval shows only
the baseline's spread, a narrow range from a handful of answers. Such a phase (an outage,
or a degradation a few hours old) is described by how many of its probes failed instead;
that count is known as well as its probe count allows, which the confidence grade checks."""

_SEVERITY_OF = {
    "ttft_short": "short-context TTFT",
    "ttft_long": "long-context TTFT",
    "output_speed": "output speed",
}
# The answered-probe count of each severity signal in ``ReportData.history_hours``
# (output speed is measured on short-context answers).
_ANSWERS_OF = {"ttft_short": "n_short_ok", "ttft_long": "n_long_ok", "output_speed": "n_short_ok"}


@dataclass(frozen=True, slots=True)
class SeverityBasis:
    """The probes inside one phase that its severity can rest on.

    Attributes:
        signal: the phase's severity signal (``phases.severity_signal``).
        probes: attempted probes of the provider inside the phase.
        failed: those that failed.
        answers: answered probes of the severity signal's context class.
        answered_hours: hours with at least one such answer.
        since: the phase's start: its failure count is the phase's, not the week's.
    """

    signal: str
    probes: int
    failed: int
    answers: int
    answered_hours: int
    since: datetime | None = None

    @property
    def sizeable(self) -> bool:
        """Enough answered hours for a latency severity (``MIN_SEVERITY_HOURS``)."""
        return self.answered_hours >= MIN_SEVERITY_HOURS


def severity_basis(hours: pl.DataFrame, phase: dict[str, Any], end: datetime) -> SeverityBasis:
    """Count the probes of one provider's ``hours`` (``history_hours``) inside ``phase``."""
    signal = severity_signal(phase["stage"], phase["signals"] or [])
    inside = hours.filter((pl.col("hour") >= phase["start_at"]) & (pl.col("hour") < end))
    column = _ANSWERS_OF[signal]
    probes = int(inside["n"].sum())
    return SeverityBasis(
        signal=signal,
        probes=probes,
        failed=probes - int(inside["n_ok"].sum()),
        answers=int(inside[column].sum()),
        answered_hours=inside.filter(pl.col(column) > 0).height,
        since=phase["start_at"],
    )


def _failures(b: SeverityBasis) -> str:
    """The phase's failures, named as the phase's: the table beside the card counts the
    week, and two unlabelled "failed" shares side by side read as one number twice."""
    share = fmt.pct(b.failed / b.probes, 0) if b.probes else fmt.DASH
    scope = f"since the phase began {fmt.day(b.since)}" if b.since else "in this phase"
    return f"{b.failed:,} of {b.probes:,} probes failed {scope} ({share})"


def describe(phase: dict[str, Any], b: SeverityBasis) -> str:
    """The severity of a degraded or recovering phase in words; "" for a stable one. A
    phase with too few answers is described by its failures, whether or not the analysis
    sized it (an outage from its first hour leaves it nothing to size)."""
    if phase["label"] == "stable":
        return ""
    name = _SEVERITY_OF[b.signal]
    if not b.sizeable:
        unsized = (
            f"{name} change not sized: answers in only {fmt.count(b.answered_hours, 'hour')} "
            f"({fmt.count(b.answers, 'answer')}), a severity needs {MIN_SEVERITY_HOURS}"
        )
        return f"{_failures(b)}; {unsized}" if b.failed else unsized
    if phase["severity"] is None:
        return _failures(b) if b.failed else ""
    text = f"{name} {fmt.rel(phase['severity'])}"
    if phase["severity_lo"] is not None and phase["severity_hi"] is not None:
        text += f" (95 % CI {fmt.rel(phase['severity_lo'])} to {fmt.rel(phase['severity_hi'])})"
    if "error_rate" in (phase["signals"] or []):  # the latency is that of the survivors
        text += f", from the {fmt.count(b.answers, 'answer')} that got through; {_failures(b)}"
    return text
