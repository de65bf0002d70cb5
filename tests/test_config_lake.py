"""``[warehouse] backend = "ducklake"``: the config becomes a ``Lake`` the warehouse opens."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.config import load_config
from pipeline.warehouse import Lake
from tests.test_config import VALID


def lake_config(tmp_path: Path, lines: str) -> Path:
    path = tmp_path / "nerfwatch.toml"
    path.write_text(
        VALID.replace('path = "data/nw.duckdb"', f'path = "data/nw.duckdb"\n{lines}', 1),
        encoding="utf-8",
    )
    return path


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NW_TEST_KEY", "sk-test-secret-value")
    monkeypatch.setenv("NW_TEST_HOOK", "http://127.0.0.1:9/hook")


def test_the_default_backend_is_the_file(tmp_path: Path) -> None:
    config = load_config(lake_config(tmp_path, ""))
    assert config.warehouse.lake is None
    assert config.warehouse.location == tmp_path / "data" / "nw.duckdb"


def test_a_sqlite_lake_resolves_its_paths_from_the_config_folder(tmp_path: Path) -> None:
    config = load_config(
        lake_config(
            tmp_path,
            'backend = "ducklake"\ncatalog = "sqlite:lake/catalog.sqlite"\ndata_path = "lake/data"',
        )
    )
    assert config.warehouse.location == Lake(
        catalog=f"sqlite:{tmp_path / 'lake' / 'catalog.sqlite'}",
        data_path=f"{tmp_path / 'lake' / 'data'}/",
    )


def test_a_postgres_lake_on_s3_names_its_variables_never_their_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NW_S3_KEY", "key-id-value")
    monkeypatch.setenv("NW_S3_SECRET", "secret-value")
    config = load_config(
        lake_config(
            tmp_path,
            'backend = "ducklake"\ncatalog = "postgres:host=db.example port=5432 dbname=nw"\n'
            'data_path = "s3://nerfwatch/lake"\ns3_key_id_env = "NW_S3_KEY"\n'
            's3_secret_env = "NW_S3_SECRET"',
        )
    )
    lake = config.warehouse.lake
    assert lake is not None and lake.data_path == "s3://nerfwatch/lake/"
    assert (lake.s3_key_id_env, lake.s3_secret_env) == ("NW_S3_KEY", "NW_S3_SECRET")
    assert "value" not in repr(config.warehouse)


def test_config_check_names_the_lake_and_the_site_not_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lake config's plan said 'warehouse: .../nerfwatch-data/nerfwatch.duckdb', a file
    the daemon never writes; it names the lake (no secret) and the probe site instead."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "key-id-value")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-value")
    path = lake_config(
        tmp_path,
        'backend = "ducklake"\ncatalog = "postgres:host=db.example dbname=nw user=nw"\n'
        'data_path = "s3://nerfwatch/lake"\nprobe_site = "frankfurt"',
    )
    result = CliRunner().invoke(app, ["config", "check", "--config", str(path)])
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("warehouse:")]
    assert "lake postgres:host=db.example dbname=nw user=nw (data s3://nerfwatch/lake/)" in line
    assert "probe site frankfurt" in line and ".duckdb" not in line
    assert "value" not in result.output
