"""Commands that read the warehouse: a missing file is refused, never created."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.warehouse import Warehouse

READING = [
    ["sql", "SELECT 1"],
    ["analyze"],
    ["report", "--week", "2026-W47"],
    ["status"],
    ["releases", "list"],
]


def invoke(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(cwd)  # no ./nerfwatch.toml here, and defaults would land here
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


@pytest.mark.parametrize("args", READING, ids=lambda a: " ".join(a))
def test_missing_db_is_refused_and_nothing_is_created(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "absent" / "deeper" / "nerfwatch.duckdb"
    code, out = invoke([*args, "--db", str(missing)], tmp_path, monkeypatch)
    assert code == 2, out
    assert out.strip().splitlines() == [
        f"error: --db: no warehouse at {missing} (reading commands never create one; "
        "`nerfwatch run`, `probe` or `demo` do)"
    ]
    assert not (tmp_path / "absent").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", READING, ids=lambda a: " ".join(a))
def test_missing_warehouse_of_a_config_names_the_config_key(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "nerfwatch.toml"
    config.write_text(
        '[warehouse]\npath = "data/w.duckdb"\nspool_dir = "data/spool"\n\n'
        '[[providers]]\nname = "nova"\nformat = "openai"\n'
        'base_url = "http://127.0.0.1:9/nova/v1"\nmodel = "m"\n\n'
        '[[probes]]\nname = "p"\ntask = "arithmetic"\nevery = "10m"\n'
    )
    code, out = invoke([*args, "--config", str(config)], tmp_path, monkeypatch)
    assert code == 2, out
    assert len(out.strip().splitlines()) == 1
    assert f"{config}: warehouse.path: no warehouse at {tmp_path / 'data' / 'w.duckdb'}" in out
    assert not (tmp_path / "data").exists()


def test_status_reads_a_warehouse_given_by_db(
    warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse.execute(
        "INSERT INTO probe_results (run_id, provider, model, probe, task_family, source, "
        "run_status, started_at, error_class) VALUES "
        "('r1', 'nova', 'nova-chat', 'p', 'arithmetic', 'live', 'done', "
        "TIMESTAMPTZ '2026-11-20 10:00:00+00', 'server_error')"
    )
    code, out = invoke(["status", "--db", str(warehouse.path)], warehouse.path.parent, monkeypatch)
    assert code == 0, out
    assert "nova" in out and "2026-11-20 10:00:00Z" in out and "server_error" in out
    assert "spool depth: 0" in out


def test_releases_list_suggests_a_vendor(warehouse: Warehouse, tmp_path: Path) -> None:
    args = ["releases", "list", "--db", str(warehouse.path), "--vendor"]
    result = CliRunner().invoke(app, [*args, "Antropic"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        "error: --vendor: unknown vendor 'Antropic'; did you mean \"Anthropic\"?"
    )
    result = CliRunner().invoke(app, [*args, "Zzyzx"])
    assert result.exit_code == 2 and "known: " in result.output and "Anthropic" in result.output
    result = CliRunner().invoke(app, [*args, "Anthropic", "--format", "csv"])
    assert result.exit_code == 0 and result.output.count("\nAnthropic,") > 1


def test_migrating_from_a_missing_warehouse_is_refused_before_the_target_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing, target = tmp_path / "typo.duckdb", tmp_path / "copy.duckdb"
    args = ["warehouse", "migrate", "--db", str(missing), "--to", "duckdb", "--path", str(target)]
    code, out = invoke(args, tmp_path, monkeypatch)
    assert code == 2, out
    assert out.strip().splitlines()[0].startswith(f"error: --db: no warehouse at {missing} ")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
