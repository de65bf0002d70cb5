"""What the last day under a fresh daily-rate change point holds, in words.

A day whose hours were probed and failed is an outage, not missing data; a day cut by
the data's end is provisional; a provider probed every 3 hours has a whole day with
16 hours unprobed. Reports go through the real path (DuckDB file, ``run_analysis``,
``render_report``) with ``now`` pinned; ``last_day`` itself is checked on small frames.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from pipeline.report.last_day import expected_gap, last_day, provisional_note
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame
from tests.test_report_odd_weeks import _FAILED, WEEK, _render, _verdict

DAY = datetime(2026, 11, 20, tzinfo=UTC)


def _alpha(wh: Warehouse, end: datetime, every_min: float, until: datetime) -> None:
    """60 days of alpha up to ``end``, every ``every_min`` minutes; every probe from
    ``DAY`` on fails, and none is kept from ``until`` on."""
    series = [Series("alpha", "alpha-short", "short"), Series("alpha", "alpha-long", "long")]
    frame = probe_frame(series, end=end, days=60, every_min=every_min)
    frame = frame.filter(pl.col("started_at") < until)
    rise = pl.col("started_at") >= DAY
    failed = frame.filter(rise).with_columns(**_FAILED)
    wh.insert_frame("probe_results", pl.concat([frame.filter(~rise), failed]), key="run_id")


def _beta(wh: Warehouse, end: datetime) -> None:
    frame = probe_frame([Series("beta", "beta-short", "short")], end=end, days=60, seed=1)
    wh.insert_frame("probe_results", frame, key="run_id")


def test_a_three_hourly_provider_s_whole_day_is_not_partial(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """Probes every 3 hours, the last at 21:00 of a day the data run to the end of: the
    day is whole. The old note read 'last day 2026-11-20 partial, 8 of 24 hours'."""
    end = DAY + timedelta(days=1)
    _alpha(warehouse, end, 180, end)
    verdict = _verdict(_render(warehouse, tmp_path, WEEK, end), "alpha")
    assert "busy-error rate went from" in verdict and "(change point)" in verdict, verdict
    assert "partial" not in verdict and "provisional" not in verdict, verdict


def test_a_three_hourly_provider_cut_by_the_data_end_is_provisional(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The same schedule, analysed at noon: 12:00 to midnight is not yet probed."""
    now = DAY + timedelta(hours=12)
    _alpha(warehouse, now, 180, now)
    verdict = _verdict(_render(warehouse, tmp_path, WEEK, now), "alpha")
    assert "provisional: last day 2026-11-20 partial: data end at" in verdict, verdict
    assert "probes ran and failed in all 4 probed hours" in verdict, verdict


def test_probes_that_stopped_while_others_ran_are_named(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """alpha's probes (failing since midnight) stop at 06:00, beta's run on to noon: the
    day is cut where alpha's probes stopped, not at the data's end."""
    now = DAY + timedelta(hours=12)
    _alpha(warehouse, now, 60, DAY + timedelta(hours=6))
    _beta(warehouse, now)
    verdict = _verdict(_render(warehouse, tmp_path, WEEK, now), "alpha")
    assert (
        "provisional: last day 2026-11-20 partial: no probes from 06:00 UTC, 6 of 24 hours; "
        "probes ran and failed in all 6 probed hours" in verdict
    ), verdict


def _hours(start: datetime, end: datetime, every_h: int, failing_from: datetime) -> pl.DataFrame:
    hours = pl.datetime_range(start, end, f"{every_h}h", eager=True, closed="left")
    return pl.DataFrame({"hour": hours, "n": 2}).with_columns(
        n_ok=pl.when(pl.col("hour") >= failing_from).then(0).otherwise(2)
    )


def test_expected_gap_reads_the_schedule() -> None:
    start = DAY - timedelta(days=20)
    for every in (1, 3, 6, 12):
        assert expected_gap(_hours(start, DAY, every, DAY)["hour"]) == every
    # a daemon stopped for two days once is not the schedule
    gapped = _hours(start, DAY, 1, DAY).filter(
        ~pl.col("hour").is_between(DAY - timedelta(days=5), DAY - timedelta(days=3))
    )
    assert expected_gap(gapped["hour"]) == 1


def test_a_whole_day_with_failed_hours_words_the_answers() -> None:
    """Hourly probes to midnight, failing from 18:00: a wrong-answer rate rests on the
    answers of 18 hours; the probes ran, so the day is not partial, and a busy-error
    rate (failures are its data) gets no note."""
    hours = _hours(DAY - timedelta(days=20), DAY + timedelta(days=1), 1, DAY + timedelta(hours=18))
    last = last_day(hours, DAY + timedelta(days=1))
    assert last is not None and last.cut is None and (last.probed, last.failed) == (24, 6)
    row = {"provider": "alpha", "model": "m", "context_class": "short", "detector": "offline"}
    points = pl.DataFrame([{**row, "metric": "wrong_rate", "at": DAY}])
    wrong = provisional_note({**row, "metric": "wrong_rate", "at": DAY}, points, last)
    assert wrong == (
        ", last day 2026-11-20 whole, but its answers come from 18 of its 24 probed hours: "
        "probes ran and failed in the other 6"
    ), wrong
    busy = provisional_note({**row, "metric": "error_rate", "at": DAY}, points, last)
    assert busy == "", busy


def test_a_day_over_is_not_provisional() -> None:
    """alpha's probes stopped at 06:00 on a day the analysis ran past: partial, but it
    will not fill up, so not provisional."""
    hours = _hours(DAY - timedelta(days=20), DAY + timedelta(hours=6), 1, DAY)
    last = last_day(hours, DAY + timedelta(days=2))
    assert last is not None and last.over and not last.data_end
    row = {"provider": "a", "model": "m", "context_class": None, "detector": "offline"}
    points = pl.DataFrame([{**row, "metric": "error_rate", "at": DAY}])
    note = provisional_note({**row, "metric": "error_rate", "at": DAY}, points, last)
    assert note.startswith(", last day 2026-11-20 partial: no probes from 06:00 UTC"), note
