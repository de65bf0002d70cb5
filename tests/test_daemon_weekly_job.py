"""The daemon's weekly job end to end on every backend: it runs the analysis, renders
the report and hands the phase changes to the alerts (the job once looked the alerting
query up by name in a module that no longer held it, and quietly sent none)."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from pipeline.config import ReportConfig
from pipeline.daemon.report_job import analyse_and_render
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
