"""Fixtures that start the simulator on a free 127.0.0.1 port and stop it afterwards.

``simulator``: one server for the whole test session, playing the bundled
training_cycle scenario *quietly* (no random errors, faults or wrong answers; ask for
them per request with the ``x-sim-fault`` / ``x-sim-error`` / ``x-sim-quality``
headers) and 100x faster than real time (``time_scale = 0.01``).

``simulator_factory``: start extra servers with any scenario and overrides, e.g.
``simulator_factory(path, time_scale=0.001, quiet=False)``; all are stopped at the end
of the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from probes.simulator import Scenario, SimulatorHandle, running

TEST_TIME_SCALE = 0.01


@pytest.fixture(scope="session")
def simulator() -> Iterator[SimulatorHandle]:
    """The bundled scenario, quiet and fast, shared by the session."""
    with running(None, time_scale=TEST_TIME_SCALE, quiet=True) as handle:
        yield handle


@pytest.fixture
def simulator_factory() -> Iterator[Callable[..., SimulatorHandle]]:
    """Start simulators on demand: ``simulator_factory(scenario=None, **overrides)``."""
    with ExitStack() as stack:

        def start(
            scenario: Scenario | str | Path | None = None, **overrides: Any
        ) -> SimulatorHandle:
            overrides.setdefault("time_scale", TEST_TIME_SCALE)
            return stack.enter_context(running(scenario, **overrides))

        yield start
