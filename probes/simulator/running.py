"""Start the simulator: in a background thread (tests, demo) or in the foreground (CLI).

``running(...)`` binds 127.0.0.1 (port 0 = a free port), serves from a uvicorn server
in a daemon thread with its own event loop, waits until it accepts connections and
stops it on exit. Only loopback is ever bound.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import uvicorn

from probes.simulator.loader import bundled_scenario, load_scenario
from probes.simulator.scenario import Scenario
from probes.simulator.server import create_app
from probes.simulator.state import SimState

__all__ = ["SimulatorHandle", "configure", "running", "serve"]

HOST = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class SimulatorHandle:
    """A running simulator: where it listens and its state (scenario, clock)."""

    port: int
    state: SimState

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def scenario(self) -> Scenario:
        return self.state.scenario

    def provider_url(self, name: str) -> str:
        """A ProviderConfig ``base_url``: ``http://127.0.0.1:PORT/{name}/v1``."""
        self.state.scenario.provider(name)  # KeyError for an unknown provider
        return f"{self.base_url}/{name}/v1"


def configure(
    scenario: Scenario | str | Path | None = None,
    *,
    time_scale: float | None = None,
    quiet: bool | None = None,
    start: date | None = None,
) -> Scenario:
    """Load ``scenario`` (None = bundled training_cycle) and apply overrides."""
    if scenario is None:
        scenario = bundled_scenario()
    if not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    changes: dict[str, Any] = {}
    if time_scale is not None:
        changes["time_scale"] = time_scale
    if quiet is not None:
        changes["quiet"] = quiet
    if start is not None:
        changes["clock"] = dataclasses.replace(scenario.clock, start=start)
    return dataclasses.replace(scenario, **changes) if changes else scenario


def _state(scenario: Scenario) -> SimState:
    return SimState(scenario=scenario, start=scenario.clock.start_at())


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    return sock


def _server(state: SimState) -> uvicorn.Server:
    config = uvicorn.Config(
        create_app(state),
        host=HOST,
        http="h11",
        lifespan="off",
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
    )
    return uvicorn.Server(config)


@contextmanager
def running(
    scenario: Scenario | str | Path | None = None,
    port: int = 0,
    *,
    time_scale: float | None = None,
    quiet: bool | None = None,
    start: date | None = None,
    startup_timeout_s: float = 10.0,
) -> Iterator[SimulatorHandle]:
    """Serve ``scenario`` on 127.0.0.1:``port`` for the duration of the ``with`` block."""
    state = _state(configure(scenario, time_scale=time_scale, quiet=quiet, start=start))
    server = _server(state)
    sock = _bind(port)
    bound = sock.getsockname()[1]
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"simulator:{bound}", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + startup_timeout_s
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"simulator did not start on {HOST}:{bound}")
            time.sleep(0.005)
        yield SimulatorHandle(port=bound, state=state)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def serve(scenario: Scenario, port: int, on_ready: Callable[[int], None] | None = None) -> None:
    """Serve in the foreground until interrupted (``nerfwatch simulate serve``).

    ``on_ready`` gets the bound port (useful with port 0) before serving starts."""
    sock = _bind(port)
    try:
        if on_ready is not None:
            on_ready(sock.getsockname()[1])
        _server(_state(scenario)).run(sockets=[sock])
    finally:
        sock.close()
