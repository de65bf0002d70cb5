"""Shared fixtures. Area-specific fixtures live in tests/support/ and are loaded here."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.warehouse import Warehouse
from tests.support.warehouses import location_for

pytest_plugins = [
    "tests.support.hang_guard",
    "tests.support.simulator",
    "tests.support.browser",
    "tests.support.pinned_date",
    "tests.support.llama_server",
]


@pytest.fixture
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Warehouse]:
    """A real, migrated warehouse in a temp dir: a DuckDB file, or the backend a test is
    parametrized with (``tests.support.warehouses.on_every_backend``)."""
    wh = Warehouse(location_for(getattr(request, "param", "duckdb"), tmp_path, request))
    wh.migrate()
    yield wh
    wh.close()


@pytest.fixture(autouse=True)
def _root_logging_restored() -> Iterator[None]:
    """``nerfwatch run`` installs its log handler on the root logger; under CliRunner that
    handler writes to a stream closed after the test. Each test leaves logging as it was."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
