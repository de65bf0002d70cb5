"""``nerfwatch probe`` against the simulator: rows printed and stored; bad input exits 2."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.warehouse import Warehouse
from probes.simulator import SimulatorHandle


@pytest.fixture
def config_file(tmp_path: Path, simulator: SimulatorHandle) -> Path:
    path = tmp_path / "nerfwatch.toml"
    path.write_text(
        f"""
[warehouse]
path = "data/nerfwatch.duckdb"
spool_dir = "data/spool"

[[providers]]
name = "nova"
format = "openai"
preset = "simulator"
base_url = "{simulator.provider_url("nova")}"
model = "{simulator.scenario.provider("nova").model}"
price_input_per_mtok = 1.0
price_output_per_mtok = 4.0

[[providers]]
name = "sable"
format = "anthropic"
preset = "simulator"
base_url = "{simulator.provider_url("sable")}"
model = "{simulator.scenario.provider("sable").model}"

[[providers]]
name = "keyed"
format = "openai"
base_url = "{simulator.provider_url("nova")}"
model = "m"
api_key_env = "NERFWATCH_TEST_UNSET_KEY"

[[providers]]
name = "failing"
format = "openai"
preset = "simulator"
base_url = "{simulator.provider_url("nova")}"
model = "{simulator.scenario.provider("nova").model}"
headers = {{ "x-sim-error" = "unavailable" }}

[[probes]]
name = "short-arithmetic"
task = "arithmetic"
every = "10m"
max_output_tokens = 256
"""
    )
    return path


def test_probe_prints_and_stores_one_row(config_file: Path) -> None:
    result = CliRunner().invoke(app, ["probe", "nova", "--config", str(config_file)])
    assert result.exit_code == 0, result.output
    assert "error_class: ok" in result.output
    assert "score_strict: correct" in result.output
    db = Warehouse(config_file.parent / "data" / "nerfwatch.duckdb")
    rows = db.query("SELECT provider, probe, error_class FROM probe_results")
    assert rows.rows() == [("nova", "short-arithmetic", "ok")]


def test_probe_rows_carry_the_host_name_as_their_site_as_the_daemons_do(
    config_file: Path,
) -> None:
    """Without ``probe_site`` the daemon labels rows with the host name; ``nerfwatch probe``
    left it NULL, so one machine showed up as two probe sites in the report."""
    result = CliRunner().invoke(app, ["probe", "nova", "--config", str(config_file)])
    assert result.exit_code == 0, result.output
    db = Warehouse(config_file.parent / "data" / "nerfwatch.duckdb")
    assert db.query("SELECT probe_site FROM probe_results").rows() == [(socket.gethostname(),)]


def test_probe_repeat_with_task_and_context_prints_a_summary(config_file: Path) -> None:
    args = ["probe", "sable", "--task", "kv_lookup", "--context", "2k", "--repeat", "3"]
    result = CliRunner().invoke(app, [*args, "--config", str(config_file)])
    assert result.exit_code == 0, result.output
    assert "probe summary" in result.output and "adhoc-kv_lookup" in result.output
    db = Warehouse(config_file.parent / "data" / "nerfwatch.duckdb")
    frame = db.query("SELECT context_target_tokens, score_strict FROM probe_results")
    assert frame.height == 3
    assert set(frame["context_target_tokens"]) == {2_000}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["probe", "nobody"], "unknown provider"),
        (
            ["probe", "nvoa"],
            "unknown provider 'nvoa' (configured: nova, sable, keyed, failing); "
            'did you mean "nova"?',
        ),
        (["probe", "nova", "--task", "poetry"], "--task"),
        (["probe", "nova", "--context", "lots"], "--context"),
        (["probe", "nova", "--context", "9" * 300 + "k"], "--context: larger than any"),
        (["probe", "nova", "--context", "0"], "--context: must be positive: '0'"),
        (["probe", "keyed"], "NERFWATCH_TEST_UNSET_KEY"),
    ],
)
def test_bad_input_exits_2(config_file: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, [*args, "--config", str(config_file)])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_probe_exits_3_when_every_probe_failed(config_file: Path) -> None:
    args = ["probe", "failing", "--repeat", "2", "--config", str(config_file)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 3, result.output
    assert "every probe of failing failed: 2 " in result.output  # the class is named
    db = Warehouse(config_file.parent / "data" / "nerfwatch.duckdb")
    classes = db.query("SELECT error_class FROM probe_results WHERE provider = 'failing'")
    assert classes.height == 2 and "ok" not in classes["error_class"].to_list()
    assert f"failed: 2 {classes['error_class'][0]} (exit 3)" in result.output


def test_a_warehouse_that_cannot_be_created_stops_the_probe_before_it_is_sent(
    config_file: Path,
) -> None:
    """Its rows would have nowhere to go: nothing is probed (or paid for), one line, exit 1."""
    blocker = config_file.parent / "a-file"
    blocker.write_text("not a folder\n", encoding="utf-8")
    db = blocker / "nerfwatch.duckdb"
    args = ["probe", "nova", "--config", str(config_file), "--db", str(db)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "nothing probed" in result.output and str(blocker) in result.output
    assert "error_class" not in result.output  # no probe ran, so no row was shown
    assert result.exception is None or isinstance(result.exception, SystemExit)
