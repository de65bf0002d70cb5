"""Optional probe worker threads, each with its own event loop and HTTP client.

With thousands of probes a minute, streaming and scoring them keeps one event loop so
busy that timers fire late: the schedule drifts and the spool waits. Running the probes
on worker loops leaves the daemon's loop to scheduling and bookkeeping; the GIL still
serialises Python code, but it is handed over every few milliseconds, so a due job
starts within a few switch intervals instead of after the whole ready queue.
Cancelling the awaiting task cancels the probe on its worker loop.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from typing import Any

import httpx

from pipeline.config import ProbeConfig, ProviderConfig
from probes.adapters.transport import probe_client
from probes.result import ProbeResult

__all__ = ["ProbeWorkers"]


class _Worker:
    def __init__(self, index: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.client: httpx.AsyncClient | None = None
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._main, name=f"probe-worker-{index}", daemon=True)
        self.thread.start()
        self._ready.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.client = daemon_client()
        self._ready.set()
        self.loop.run_forever()
        self.loop.close()

    def stop(self) -> None:
        if self.client is not None:
            asyncio.run_coroutine_threadsafe(self.client.aclose(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


# No cap on connections (the gate caps concurrency per provider), 64 kept alive.
DAEMON_LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=64)


def daemon_client() -> httpx.AsyncClient:
    """The daemon's probe client: connections that count what they receive, so a port
    where something other than HTTP answers is told from one that closed in silence."""
    return probe_client(DAEMON_LIMITS)


class ProbeWorkers:
    """Round-robin dispatch of probe coroutines to ``count`` worker loops."""

    def __init__(self, count: int) -> None:
        self._workers = [_Worker(i) for i in range(count)]
        self._next = itertools.cycle(self._workers)

    async def run(
        self, fn: Any, provider: ProviderConfig, probe: ProbeConfig, **kwargs: Any
    ) -> ProbeResult:
        """Run ``fn(provider, probe, client=<worker's>, **kwargs)`` on a worker loop."""
        worker = next(self._next)
        assert worker.client is not None
        coro = fn(provider, probe, client=worker.client, **kwargs)
        future = asyncio.run_coroutine_threadsafe(coro, worker.loop)
        result: ProbeResult = await asyncio.wrap_future(future)
        return result

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
