"""Shared fixtures. Area-specific fixtures live in tests/support/ and are loaded here."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

pytest_plugins = [
    "tests.support.hang_guard",
    "tests.support.simulator",
    "tests.support.browser",
    "tests.support.pinned_date",
    "tests.support.llama_server",
    "tests.support.postgres",
    "tests.support.seaweedfs",
    "tests.support.warehouses",  # the `warehouse` fixture, on any backend
]


@pytest.fixture(autouse=True)
def _root_logging_restored() -> Iterator[None]:
    """``nerfwatch run`` installs its log handler on the root logger; under CliRunner that
    handler writes to a stream closed after the test. Each test leaves logging as it was."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
