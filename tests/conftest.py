"""Shared fixtures. Area-specific fixtures live in tests/support/ and are loaded here."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.warehouse import Warehouse

pytest_plugins = ["tests.support.simulator", "tests.support.browser"]


@pytest.fixture
def warehouse(tmp_path: Path) -> Warehouse:
    """A real, migrated DuckDB file in a temp dir."""
    wh = Warehouse(tmp_path / "nerfwatch.duckdb")
    wh.migrate()
    return wh
