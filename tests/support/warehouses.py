"""The ``warehouse`` fixture: a real, migrated warehouse for one test, on any backend.

Without parameters it is a DuckDB file in the test's temp dir. ``on_every_backend``
parametrizes it over ``BACKENDS``: the single DuckDB file, a DuckLake on a SQLite catalog
with local data, and
a DuckLake on a real PostgreSQL catalog with data on a real S3 server (SeaweedFS), the
last two started once per session (tests/support/postgres.py, tests/support/seaweedfs.py).

``warehouse_location`` is the same choice before anything is created, for tests that hand
a location to a daemon's config (``make_config(..., location=...)``) or to another
process; ``located_on_every_backend`` parametrizes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.warehouse import Lake, Warehouse
from tests.support.postgres import PostgresServer
from tests.support.seaweedfs import BUCKET, S3Server

__all__ = [
    "BACKENDS",
    "LAKE_BACKENDS",
    "located_on_every_backend",
    "location_for",
    "on_every_backend",
    "warehouse",
    "warehouse_location",
]

LAKE_BACKENDS = ("ducklake+sqlite+local", "ducklake+postgres+s3")
BACKENDS = ("duckdb", *LAKE_BACKENDS)

on_every_backend = pytest.mark.parametrize("warehouse", BACKENDS, indirect=True)
located_on_every_backend = pytest.mark.parametrize("warehouse_location", BACKENDS, indirect=True)


def location_for(backend: str, folder: Path, request: pytest.FixtureRequest) -> Path | Lake:
    """Where a fresh, empty warehouse of ``backend`` lives for one test."""
    if backend == "duckdb":
        return folder / "nerfwatch.duckdb"
    if backend == "ducklake+sqlite+local":
        return Lake(catalog=f"sqlite:{folder / 'catalog.sqlite'}", data_path=str(folder / "data"))
    if backend == "ducklake+postgres+s3":
        postgres: PostgresServer = request.getfixturevalue("postgres_server")
        s3: S3Server = request.getfixturevalue("s3_server")
        monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
        for name, value in s3.environment().items():
            monkeypatch.setenv(name, value)  # S3 settings come from the environment only
        database = postgres.new_database()
        return Lake(
            catalog=f"postgres:{postgres.conninfo(database)}",
            data_path=f"s3://{BUCKET}/{database}/",
        )
    raise ValueError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")


@pytest.fixture
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Warehouse]:
    """A migrated warehouse: a DuckDB file, or the backend the test is parametrized with."""
    wh = Warehouse(location_for(getattr(request, "param", "duckdb"), tmp_path, request))
    wh.migrate()
    yield wh
    wh.close()


@pytest.fixture
def warehouse_location(request: pytest.FixtureRequest, tmp_path: Path) -> Path | Lake:
    """Where a not-yet-created warehouse lives: a DuckDB file, or the parametrized backend."""
    return location_for(getattr(request, "param", "duckdb"), tmp_path, request)
