"""The warehouse on each backend, for tests that must hold on all of them.

``on_every_backend`` parametrizes the ``warehouse`` fixture (tests/conftest.py) over
``BACKENDS``: the single DuckDB file, a DuckLake on a SQLite catalog with local data, and
a DuckLake on a real PostgreSQL catalog with data on a real S3 server (SeaweedFS), the
last two started once per session (tests/support/postgres.py, tests/support/seaweedfs.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.warehouse import Lake

__all__ = ["BACKENDS", "LAKE_BACKENDS", "location_for", "on_every_backend"]

LAKE_BACKENDS = ("ducklake+sqlite+local",)
BACKENDS = ("duckdb", *LAKE_BACKENDS)

on_every_backend = pytest.mark.parametrize("warehouse", BACKENDS, indirect=True)


def location_for(backend: str, folder: Path, request: pytest.FixtureRequest) -> Path | Lake:
    """Where a fresh, empty warehouse of ``backend`` lives for one test."""
    if backend == "duckdb":
        return folder / "nerfwatch.duckdb"
    if backend == "ducklake+sqlite+local":
        return Lake(catalog=f"sqlite:{folder / 'catalog.sqlite'}", data_path=str(folder / "data"))
    raise ValueError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
