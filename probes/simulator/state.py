"""Server-wide simulator state and the one low-level trick it needs (TCP reset)."""

from __future__ import annotations

import asyncio
import itertools
import socket
import struct
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from starlette.requests import Request

from probes.simulator.scenario import Scenario

__all__ = ["TRANSPORT_KEY", "SimState", "reset_connection"]

# Scope key under which the server stores the connection's asyncio transport.
TRANSPORT_KEY = "sim.transport"


@dataclass
class SimState:
    """The scenario, its clock and requests in flight per provider."""

    scenario: Scenario
    start: datetime  # scenario day 0
    wall_start: float = field(default_factory=time.time)
    inflight: dict[str, int] = field(default_factory=dict)
    counter: itertools.count[int] = field(default_factory=itertools.count)

    def now(self) -> datetime:
        """The scenario instant for the current wall time (clock speed applied)."""
        elapsed = (time.time() - self.wall_start) * self.scenario.clock.speed
        return datetime.fromtimestamp(self.wall_start + elapsed, UTC)


async def reset_connection(request: Request) -> None:
    """Abort the TCP connection with RST (SO_LINGER 0)."""
    transport = request.scope.get(TRANSPORT_KEY)
    if transport is None:
        raise RuntimeError("transport unavailable: cannot reset the connection")
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    for _ in range(3):  # let the server notice the connection is gone
        await asyncio.sleep(0)
