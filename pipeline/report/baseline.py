"""Which providers have the baseline the phase analysis compares every stretch against.

Phases (``pipeline.analysis.phases``) need a baseline of at least ``MIN_BASELINE_HOURS``
hours with short-context answers. Below that the analysis still writes phases (its
longest segment stands in as the baseline and is labelled stable), but they are no
finding: the report neither says nor draws them until the baseline exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import polars as pl

from pipeline.analysis.phases import MIN_BASELINE_HOURS
from pipeline.report.data import ReportData

__all__ = ["MIN_BASELINE_HOURS", "NoBaseline", "answered_hours", "without_baseline"]


@dataclass(frozen=True, slots=True)
class NoBaseline:
    """One provider's probes so far, too few hours of them for a baseline."""

    first: datetime  # the first probed hour
    end: datetime  # the end of the last probed hour
    hours: int  # hours with a short-context answer

    @property
    def words(self) -> str:
        return f"{self.hours} of the {MIN_BASELINE_HOURS} hours with short-context answers"


def answered_hours(hours: pl.DataFrame) -> int:
    """Hours with a short-context answer in one provider's ``history_hours`` rows."""
    return hours.filter(pl.col("n_short_ok") > 0).height if hours.height else 0


def without_baseline(data: ReportData) -> dict[str, NoBaseline]:
    """The providers of ``data`` with probes but too few answered hours for a baseline."""
    found = {}
    for provider in data.provider_names:
        hours = data.history_hours.filter(pl.col("provider") == provider)
        answered = answered_hours(hours)
        if hours.height and answered < MIN_BASELINE_HOURS:
            first, last = hours["hour"].min(), hours["hour"].max()
            if isinstance(first, datetime) and isinstance(last, datetime):
                found[provider] = NoBaseline(first, last + timedelta(hours=1), answered)
    return found
