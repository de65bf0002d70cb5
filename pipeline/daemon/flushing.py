"""The flush loop: moves the spool into DuckDB every ``flush_interval``, backing off
while a reader holds the file, and writes the heartbeat event."""

from __future__ import annotations

import asyncio
import contextlib
import time

from pipeline.daemon.core import DaemonCore
from pipeline.daemon.flusher import FlushOutcome

__all__ = ["Flushing"]


class Flushing(DaemonCore):
    def reading(self) -> contextlib.AbstractContextManager[None]:
        """Hold off flushes so this process may open the warehouse read-only.

        DuckDB refuses a read-only and a read-write connection to one file inside one
        process; other processes just retry the lock.
        """
        return self.flusher.paused()

    async def _flush_loop(self) -> None:
        interval = self.config.daemon.flush_interval_s
        delay = interval
        last_heartbeat = time.monotonic()
        while not self._stopping:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._flush_wake.wait(), timeout=delay)
            self._flush_wake.clear()
            if self._stopping:
                break
            if time.monotonic() - last_heartbeat >= self.tuning.heartbeat_s:
                self._record_event("heartbeat", None)
                last_heartbeat = time.monotonic()
            outcome = await self.flush()
            interval = self.config.daemon.flush_interval_s
            if outcome.busy:
                delay = min(max(delay * 2, interval), self.tuning.flush_backoff_max_s)
            else:
                delay = interval

    async def flush(self) -> FlushOutcome:
        """Move the spool into the warehouse now (in a worker thread)."""
        outcome = await asyncio.to_thread(self.flusher.flush_once)
        self._account_flush(outcome)
        return outcome

    def _account_flush(self, outcome: FlushOutcome) -> None:
        self.stats.flushes += 1
        if outcome.busy:
            self.stats.busy_flushes += 1
        elif outcome.rows:
            self.stats.flushed_rows += outcome.inserted
            self.stats.flush_ms.append(outcome.seconds * 1000)
            self.stats.flush_held_ms.append(outcome.held_s * 1000)
            self.metrics.flush_seconds.observe(outcome.seconds)
        self.metrics.spool_depth.set(outcome.depth)
