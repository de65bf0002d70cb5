"""Hours of the report's week without probes, in words: the data-quality notes on gaps.

A gap is counted against what was due, not against every clock hour:

- from the week's Monday (a Monday without data is a gap, not the start of the week), or
  from a provider's first probe ever when that came later (a provider added on Thursday
  was not missing on Monday: it is said to be new);
- to the end of the data; a provider whose probes stop before it (a renamed or removed
  provider) is said to have stopped, not to have a gap;
- at the provider's own cadence (``last_day.expected_gap``): a provider probed every 8
  hours has 7 quiet hours between probes by design.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import polars as pl

from pipeline.report import fmt
from pipeline.report.context import QualityNote
from pipeline.report.data import ReportData
from pipeline.report.last_day import expected_gap

__all__ = ["coverage_notes"]

_HOUR = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class _Gaps:
    """Runs of hours without probes longer than the cadence allows, in [start, end)."""

    missing: int  # hours in such runs
    longest: int
    longest_at: datetime | None


def _floor(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def _gaps(hours: list[datetime], start: datetime, end: datetime, every: int) -> _Gaps:
    """A run of missing hours counts when it is at least ``every`` long: with probes
    every ``every`` hours, ``every - 1`` quiet hours in a row are the schedule."""
    seen = set(hours)
    runs: list[tuple[int, datetime]] = []
    moment, run, run_at = start, 0, start
    while moment + _HOUR <= end:
        if moment in seen:
            if run:
                runs.append((run, run_at))
            run = 0
        else:
            run_at = moment if run == 0 else run_at
            run += 1
        moment += _HOUR
    if run:
        runs.append((run, run_at))
    counted = [(n, at) for n, at in runs if n >= every]
    if not counted:
        return _Gaps(0, 0, None)
    longest, at = max(counted, key=lambda r: r[0])
    return _Gaps(sum(n for n, _ in counted), longest, at)


def _first_ever(data: ReportData, provider: str) -> datetime | None:
    first = data.history_hours.filter(pl.col("provider") == provider)["hour"].min()
    return first if isinstance(first, datetime) else None


def _provider_note(
    data: ReportData, provider: str, part: pl.Series, span: tuple[datetime, datetime], down: int
) -> QualityNote | None:
    """One provider's note: new this week, stopped, or with more gaps than the prober's
    own downtime (``down`` hours); None when none of these."""
    start, end = span
    hours = sorted(part.to_list())
    first = _first_ever(data, provider) or hours[0]
    new = first > start
    last = hours[-1] + _HOUR
    every = expected_gap(part)
    found = _gaps(hours, max(start, first), min(end, last), every)
    words = []
    if new:
        words.append(f"first probed {fmt.stamp(first)} (new this week)")
    if end - last >= every * _HOUR:
        words.append(f"no probes after {fmt.stamp(data.last_probe(provider) or hours[-1])}")
    if found.missing > down:
        words.append(
            f"no probes in {found.missing} hour(s) (longest gap {found.longest} h from "
            f"{fmt.stamp(found.longest_at)})"
        )
    return QualityNote("info", f"{provider}: {'; '.join(words)}.") if words else None


def coverage_notes(data: ReportData) -> list[QualityNote]:
    """Downtime of the whole prober first, then what each provider's probes lack."""
    hours = data.week_hours
    if hours.height == 0:
        return []
    earliest = data.history_hours["hour"].min() if data.history_hours.height else None
    start = data.week.start
    if isinstance(earliest, datetime) and earliest > start:
        start = earliest  # the first probes ever: nothing was due before them
    end = _floor(data.now)  # whole hours only: the current one may still get its probe
    union = hours["hour"].unique().sort()
    all_hours = union.to_list()
    every = expected_gap(union)
    down = _gaps(all_hours, start, end, every)
    notes = []
    if down.missing:
        notes.append(
            QualityNote(
                "warn",
                f"No probes from any provider for {down.missing} hour(s) of this week "
                f"(longest gap {down.longest} h from {fmt.stamp(down.longest_at)}): the "
                "daemon was probably down.",
            )
        )
    for (provider,), part in hours.group_by("provider", maintain_order=True):
        note = _provider_note(data, str(provider), part["hour"], (start, end), down.missing)
        if note is not None:
            notes.append(note)
    return notes
