"""An outage under way at the end of the data, read from the probes themselves.

Phases need days of data to form, so a provider whose every probe has failed for the last
hours still reads as stable in them, with high confidence in that stable stretch. The fact
needs no model: the run of probed hours at the end of the data in which no probe got an
answer. Hours without probes neither break the run nor count in it. Two probed hours and
three probes at the least, so one lost probe, or one bad hour, is no outage.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from pipeline.report import fmt

__all__ = ["FailingNow", "failing_now"]

MIN_FAILING_HOURS = 2
MIN_FAILING_PROBES = 3


@dataclass(frozen=True, slots=True)
class FailingNow:
    since: datetime  # the first hour of the run
    until: datetime  # the last probed hour
    hours: int  # probed hours in the run
    probes: int
    last_answer: datetime | None  # the hour of the last answer before the run

    def words(self) -> str:
        text = (
            f"All {fmt.count(self.probes, 'probe')} since "
            f"{fmt.stamp(self.since)} failed ({fmt.count(self.hours, 'probed hour')})"
        )
        if self.last_answer is None:
            text += "; none has answered in the charted history"
        return text + "."


def failing_now(hours: pl.DataFrame) -> FailingNow | None:
    """The trailing run of probed hours with no answer in one provider's ``hour``, ``n``,
    ``n_ok`` rows, or None when it is shorter than the module's minimum."""
    probed = hours.filter(pl.col("n") > 0).sort("hour")
    answered = probed["n_ok"].to_list()
    run = 0
    while run < len(answered) and answered[-1 - run] == 0:
        run += 1
    if run < MIN_FAILING_HOURS:
        return None
    tail = probed.tail(run)
    probes = int(tail["n"].sum())
    if probes < MIN_FAILING_PROBES:
        return None
    last_answer = probed["hour"][-1 - run] if run < probed.height else None
    return FailingNow(tail["hour"][0], tail["hour"][-1], run, probes, last_answer)
