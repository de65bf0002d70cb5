"""Set up, before the clock starts, what the transport otherwise sets up lazily inside the
first timed request of a process.

httpx builds its connection pool at client construction, but the first connect imports
anyio's asyncio backend (through httpcore's backend detection) and starts the event loop's
resolver thread. Measured at 85 ms on an idle machine (220-400 ms on a loaded one), all of
it landing between "request sent" and the first token of the first probe, once per
process. ``warm_transport`` does that work once per event loop by resolving the loopback
address through anyio: no packet leaves the machine and no provider sees a request.
"""

from __future__ import annotations

import asyncio
import socket
import weakref

import anyio

__all__ = ["WARMUP_LIMIT_S", "warm_transport"]

WARMUP_LIMIT_S = 2.0

_warmed: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


async def warm_transport(limit_s: float = WARMUP_LIMIT_S) -> None:
    """Load anyio's backend and start this loop's resolver thread (once per loop); bounded,
    and silent on failure: a real problem shows up in the timed request."""
    loop = asyncio.get_running_loop()
    if loop in _warmed:
        return
    _warmed.add(loop)
    try:
        async with asyncio.timeout(limit_s):
            await anyio.getaddrinfo("127.0.0.1", 80, type=socket.SOCK_STREAM)
    except (OSError, TimeoutError):
        pass
