"""The daemon's weekly job end to end on every backend: it runs the analysis, renders
the report and hands the phase changes to the alerts (the job once looked the alerting
query up by name in a module that no longer held it, and quietly sent none)."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from apscheduler.schedulers.background import BackgroundScheduler

from pipeline.config import Config, ReportConfig
from pipeline.daemon.report_job import JOB_ID, add_report_job, analyse_and_render
from pipeline.warehouse import Lake, Warehouse
from tests.support.daemon import make_config
from tests.support.planted import START, PlantedPhase, PlantedProvider, generate
from tests.support.warehouses import located_on_every_backend


@located_on_every_backend
def test_the_weekly_job_reports_an_ongoing_degradation_as_a_phase_change(
    tmp_path: Path, warehouse_location: Path | Lake
) -> None:
    config = make_config(tmp_path, location=warehouse_location)
    config = replace(config, report=ReportConfig(out_dir=tmp_path / "reports"))
    ongoing = [PlantedProvider("nova", "Nova", [PlantedPhase(30, 99, 1.5, 1.5)])]
    Warehouse(config.warehouse.location).insert_frame(
        "probe_results", generate(ongoing, 40, seed=4)
    )
    outcome = analyse_and_render(config, contextlib.nullcontext(), now=START + timedelta(days=40))
    assert outcome.path.is_file()
    assert [c.provider for c in outcome.phase_changes] == ["nova"]
    assert outcome.phase_changes[0].phase != "stable"  # the stage it is in now
    assert outcome.phase_changes[0].detail["previous"] is None


def _tokyo_monday_8(tmp_path: Path) -> tuple[Config, datetime]:
    """A config whose report runs Monday 08:00 Asia/Tokyo, and its first run after
    START + 15 days (Tuesday 2026-01-20 00:00 UTC): Monday 08:00 there is Sunday 23:00 UTC,
    an hour before the UTC week ends, so the job waits until Monday 2026-01-26 00:00 UTC."""
    config = make_config(tmp_path)
    report = ReportConfig(out_dir=tmp_path / "reports", timezone="Asia/Tokyo")
    config = replace(config, report=report)
    scheduler = BackgroundScheduler()  # never started: only its job's trigger is read
    tuesday = START + timedelta(days=15)
    assert add_report_job(scheduler, config, lambda: None, now=tuesday)
    fire = scheduler.get_job(JOB_ID).trigger.get_next_fire_time(None, tuesday)
    assert fire == datetime(2026, 1, 26, 0, 0, tzinfo=UTC)
    return config, fire


def test_a_tokyo_monday_run_reports_the_week_just_ended(tmp_path: Path) -> None:
    """Monday 08:00 in Tokyo ran at Sunday 23:00 UTC and rendered 2026-W03, the week
    before the one just ended; the job now runs once the UTC week has ended: W04."""
    config, fire = _tokyo_monday_8(tmp_path)
    quiet = [PlantedProvider("nova", "Nova")]
    Warehouse(config.warehouse.location).insert_frame("probe_results", generate(quiet, 21))
    outcome = analyse_and_render(config, contextlib.nullcontext(), now=fire)
    assert outcome.path.name == "nerfwatch-2026-W04.html"


def test_a_run_just_after_the_utc_week_ends_reports_that_week(tmp_path: Path) -> None:
    config = replace(make_config(tmp_path), report=ReportConfig(out_dir=tmp_path / "reports"))
    quiet = [PlantedProvider("nova", "Nova")]
    Warehouse(config.warehouse.location).insert_frame("probe_results", generate(quiet, 21))
    monday_8_utc = START + timedelta(days=21, hours=8)  # 2026-W05 began 8 hours ago
    outcome = analyse_and_render(config, contextlib.nullcontext(), now=monday_8_utc)
    assert outcome.path.name == "nerfwatch-2026-W04.html"


@pytest.mark.parametrize("timezone", ["UTC", "America/New_York", "Asia/Tokyo"])
def test_no_schedule_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, timezone: str
) -> None:
    report = ReportConfig(out_dir=tmp_path / "reports", timezone=timezone)
    config = replace(make_config(tmp_path), report=report)
    with caplog.at_level(logging.WARNING, logger="nerfwatch.daemon"):
        add_report_job(BackgroundScheduler(), config, lambda: None, now=START)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_first_report_shows_the_week_in_progress_when_none_ended_with_probes(
    tmp_path: Path,
) -> None:
    """A daemon started on a Monday: the week that ended has no probes to report."""
    config = replace(make_config(tmp_path), report=ReportConfig(out_dir=tmp_path / "reports"))
    Warehouse(config.warehouse.location).insert_frame(
        "probe_results", generate([PlantedProvider("nova", "Nova")], 1)
    )
    outcome = analyse_and_render(config, contextlib.nullcontext(), now=START + timedelta(hours=30))
    assert outcome.path.name == "nerfwatch-2026-W02.html"  # START's week, in progress
