"""run_analysis end to end on every backend (a DuckDB file, a lake on SQLite + local data, a
lake on PostgreSQL + S3): every table written, re-runnable, failures recorded, phase
changes exposed for alerts; and the ``nerfwatch analyze`` command on a file."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.analysis.metric_rows import ONLINE_ARL0_HOURS, ONLINE_K
from pipeline.analysis.orchestrate import run_analysis
from pipeline.analysis.phase_changes import phase_changes_since
from pipeline.cli import app
from pipeline.warehouse import Warehouse, WarehouseError
from tests.support.planted import START, PlantedPhase, PlantedProvider, generate, releases_frame
from tests.support.warehouses import on_every_backend

PROVIDERS = [
    PlantedProvider("nova", "Nova", [PlantedPhase(20, 35, 1.4, 2.0, errors=4)], releases=[35]),
    PlantedProvider("sable", "Sable"),
]


@pytest.fixture
def history(warehouse: Warehouse) -> Warehouse:
    warehouse.insert_frame("probe_results", generate(PROVIDERS, 45, seed=3))
    warehouse.insert_frame("releases", releases_frame(PROVIDERS))
    return warehouse


@on_every_backend
def test_run_writes_every_table_under_one_id(history: Warehouse) -> None:
    aid = run_analysis(history)
    run = history.query("SELECT * FROM analysis_runs WHERE analysis_id = ?", [aid])
    assert run["status"][0] == "done" and run["until"][0] is not None
    params = json.loads(run["params"][0])  # what a rerun needs to reproduce the alarms
    assert params["online_arl0_hours"] == ONLINE_ARL0_HOURS and params["online_k"] == ONLINE_K
    tables = ["seasonality", "hour_of_week", "change_points", "phases", "degraded_probability"]
    tables += ["warning_signs", "release_cycles", "cycle_tests"]
    for table in tables:
        sql = f"SELECT count(*) AS n FROM {table} WHERE analysis_id = ?"
        assert history.query(sql, [aid])["n"][0] > 0, table
    phases = history.query(
        "SELECT provider, label, stage, start_at, start_lo, start_hi FROM phases "
        "WHERE analysis_id = ? AND label = 'degraded' ORDER BY start_at",
        [aid],
    )
    assert phases["provider"].to_list() == ["nova"]
    onset = phases["start_at"][0]
    assert abs(onset - (START + timedelta(days=20))) <= timedelta(hours=24)
    # the dated onset carries its interval
    assert phases["start_lo"][0] <= onset <= phases["start_hi"][0]
    assert phases["start_hi"][0] - phases["start_lo"][0] <= timedelta(days=3)
    errors = history.query(
        "SELECT \"at\", effect FROM change_points WHERE analysis_id = ? AND provider = 'nova' "
        "AND metric = 'error_rate' AND context_class = 'short' ORDER BY \"at\"",
        [aid],
    )
    assert errors.height >= 1 and errors["effect"][0] > 1.0  # errors x4 from day 20
    assert abs(errors["at"][0] - (START + timedelta(days=20))) <= timedelta(days=1)
    cycles = history.query("SELECT lead_days FROM release_cycles WHERE analysis_id = ?", [aid])
    assert cycles["lead_days"][0] == pytest.approx(15, abs=1)


@on_every_backend
def test_rerun_gets_a_new_id_and_phase_changes_compare_runs(history: Warehouse) -> None:
    first = run_analysis(history)
    changes = phase_changes_since(history, first)
    assert [(c.provider, c.previous_stage) for c in changes] == []  # stable at the end
    second = run_analysis(history)
    assert second != first
    assert phase_changes_since(history, second) == []
    counts = history.query("SELECT count(DISTINCT analysis_id) AS n FROM phases")["n"][0]
    assert counts == 2


@on_every_backend
def test_ongoing_degradation_is_a_phase_change(warehouse: Warehouse) -> None:
    ongoing = [PlantedProvider("nova", "Nova", [PlantedPhase(30, 99, 1.5, 1.5)])]
    warehouse.insert_frame("probe_results", generate(ongoing, 40, seed=4))
    aid = run_analysis(warehouse)
    changes = phase_changes_since(warehouse)
    assert len(changes) == 1 and changes[0].analysis_id == aid
    assert changes[0].previous_stage is None and changes[0].label == "degraded"
    forecasts = warehouse.query("SELECT * FROM release_forecasts WHERE analysis_id = ?", [aid])
    assert forecasts.height == 1 and not forecasts["conclusive"][0]


@on_every_backend
def test_no_forecast_once_the_release_has_come(warehouse: Warehouse) -> None:
    """Degraded from day 20, a release on day 30, still degraded at day 40: the release a
    forecast would name has come, so no window is offered (it would lie in the past)."""
    ongoing = [PlantedProvider("nova", "Nova", [PlantedPhase(20, 99, 1.5, 1.5)], releases=[30])]
    warehouse.insert_frame("probe_results", generate(ongoing, 40, seed=4))
    warehouse.insert_frame("releases", releases_frame(ongoing))
    aid = run_analysis(warehouse)
    forecasts = warehouse.query("SELECT * FROM release_forecasts WHERE analysis_id = ?", [aid])
    assert forecasts.height == 1 and forecasts["window_lo"][0] is None
    assert forecasts["basis"][0].startswith("no forecast: ") and "released" in forecasts["basis"][0]


@on_every_backend
def test_failure_is_recorded(history: Warehouse) -> None:
    history.execute("DROP TABLE phases")
    with pytest.raises((WarehouseError, duckdb.Error)):
        run_analysis(history)
    run = history.query("SELECT status, detail FROM analysis_runs")
    assert run["status"][0] == "failed" and "phases" in run["detail"][0]


@on_every_backend
def test_empty_warehouse_is_a_done_run(warehouse: Warehouse) -> None:
    aid = run_analysis(warehouse)
    assert warehouse.query("SELECT status FROM analysis_runs")["status"][0] == "done"
    assert phase_changes_since(warehouse, aid) == []


def test_cli_analyze(history: Warehouse, tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["analyze", "--db", str(history.path), "--since", "2026-01-01"])
    assert ok.exit_code == 0, ok.output
    assert "analysis" in ok.output and "done" in ok.output
    bad = runner.invoke(app, ["analyze", "--db", str(history.path), "--since", "someday"])
    assert bad.exit_code == 2 and "--since" in bad.output
    bad_source = runner.invoke(app, ["analyze", "--db", str(history.path), "--source", "x"])
    assert bad_source.exit_code == 2
