"""Daily-rate change points whose later level leans on the last, partial day of data.

Error, timeout, wrong-answer and sanity-flag change points are found on one rate per UTC
day (``analysis.metric_rows.rate_change_rows``), and each day counts as one point however
few hours it holds. The last change point of a series rests on the last day: its level
after, and its date when the change is that fresh (a monitor's newest change is dated
on the day the data put it, ``changepoints.edges``, which may be this one). What that
day holds is said in words, since two different things look alike in a count of hours:

- Hours not probed: the analysed data end mid-day (a running week), or this provider's
  probes stopped while others went on. The day is partial; while it is not over yet the
  change point is provisional and firms up once the day is complete and analysed.
- Hours probed whose every probe failed (an outage): those failures are the day's data,
  not a gap. They are counted as such, and a wrong-answer rate (over answers) is said to
  rest on the answers of the hours that had some.

Probes may run less often than hourly (every 3 or 6 hours, a cron twice a day): hours
without probes are then expected, not missing. A day counts as partial only when its
data end a whole expected gap before midnight (``expected_gap``, read from the
provider's own probes, so a warehouse without its config is judged the same way).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

import numpy as np
import polars as pl

from pipeline.report import fmt

__all__ = ["LastDay", "expected_gap", "last_day", "provisional_note"]

_HOUR = timedelta(hours=1)
_CADENCE_DAYS = 14  # how far back the probes' spacing is read
_GAP_QUANTILE = 0.9  # a long spacing of the schedule, not a stop (10 % of gaps may be)


@dataclass(frozen=True, slots=True)
class LastDay:
    """The UTC day one provider's analysed data end on, and what it holds.

    Attributes:
        day: its midnight.
        cut: where its probes end before midnight, when a probe was due after that and
            none came (None: the day is whole at the provider's cadence).
        data_end: the cut is the analysis's end (probes not yet run), not a stop.
        over: the analysis's data run to the day's end, so it can no longer fill up.
        probed: hours of the day with at least one probe.
        failed: of them, hours whose every probe failed.
    """

    day: datetime
    cut: datetime | None
    data_end: bool
    over: bool
    probed: int
    failed: int

    @property
    def covered(self) -> int:
        """Hours from midnight to the cut."""
        return (self.cut - self.day) // _HOUR if self.cut else 24


def expected_gap(hours: pl.Series) -> int:
    """A long spacing, in hours, between consecutive probed hours of the last
    ``_CADENCE_DAYS``: 1 for hourly or more often, 3 for every 3 hours, 12 for a cron
    twice a day. 1 when there are too few probed hours to tell."""
    recent = hours.filter(hours >= hours.max() - timedelta(days=_CADENCE_DAYS)).sort()  # type: ignore[operator]
    gaps = recent.diff().drop_nulls().dt.total_hours().to_numpy()
    if gaps.size < 2:
        return 1
    return max(1, int(np.quantile(gaps, _GAP_QUANTILE, method="higher")))


def last_day(hours: pl.DataFrame, until: datetime | None) -> LastDay | None:
    """What the last day of one provider's ``hours`` (``history_hours``) before the
    analysis's end ``until`` holds; None without such hours."""
    if until is None or hours.height == 0:
        return None
    seen = hours.filter(pl.col("hour") < until)
    last = seen["hour"].max()
    if not isinstance(last, datetime):
        return None
    day = datetime.combine(last.date(), time(), tzinfo=last.tzinfo)
    midnight = day + timedelta(days=1)
    gap = timedelta(hours=expected_gap(seen["hour"]))
    end = last + _HOUR
    today = seen.filter(pl.col("hour") >= day)
    failed = int(today.filter(pl.col("n_ok") == 0).height)
    cut = end if midnight - end >= gap else None
    # No probe was due before the analysis ended: they were not yet run.
    data_end = cut is not None and until < end + gap
    if data_end:
        cut = min(until, midnight)
    return LastDay(day, cut, data_end, until >= midnight, today.height, failed)


def _last_of_its_series(row: dict[str, Any], points: pl.DataFrame) -> bool:
    """No later change point of the same metric, context and detector: the rate after
    ``row`` runs to the end of the data."""
    later = points.filter(
        (pl.col("provider") == row["provider"])
        & pl.col("model").eq_missing(row["model"])
        & (pl.col("metric") == row["metric"])
        & pl.col("context_class").eq_missing(row["context_class"])
        & (pl.col("detector") == row["detector"])
        & (pl.col("at") > row["at"])
    )
    return later.height == 0


def _failures(last: LastDay) -> str:
    if last.failed == 0:
        return ""
    if last.failed == last.probed:
        return f"; probes ran and failed in all {last.probed} probed hours"
    return f"; probes ran and failed in {last.failed} of {last.probed} probed hours"


def _cut(last: LastDay, cut: datetime) -> str:
    when = f"{cut:%H:%M} UTC"
    why = f"data end at {when}" if last.data_end else f"no probes from {when}"
    lead = "" if last.over else "provisional: "
    held = f"{last.covered} of 24 hours{_failures(last)}"
    return f", {lead}last day {fmt.day(last.day)} partial: {why}, {held}"


def provisional_note(row: dict[str, Any], points: pl.DataFrame, last: LastDay | None) -> str:
    """The words on a daily-rate change point that rests on the last day when that day is
    partial, or, for a wrong-answer rate, when outages left it fewer answering hours;
    "" otherwise (latency change points are hourly and need no whole day)."""
    if last is None or not str(row["metric"]).endswith("_rate"):
        return ""
    if not _last_of_its_series(row, points):
        return ""
    if last.cut is not None:
        return _cut(last, last.cut)
    if row["metric"] == "wrong_rate" and last.failed:
        answered = last.probed - last.failed
        return (
            f", last day {fmt.day(last.day)} whole, but its answers come from {answered} of "
            f"its {last.probed} probed hours: probes ran and failed in the other {last.failed}"
        )
    return ""
