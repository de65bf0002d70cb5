"""The flush loop: moves the spool into DuckDB every ``flush_interval`` or as soon as
``flush_max_rows`` rows wait (a bounded batch keeps each hold of the file short), backing
off while a reader holds the file, and writes the heartbeat event."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from pipeline.daemon.core import DaemonCore
from pipeline.daemon.flush.daemon_side import FlushOutcome

__all__ = ["Flushing"]

log = logging.getLogger("nerfwatch.daemon")


class Flushing(DaemonCore):
    def reading(self) -> contextlib.AbstractContextManager[None]:
        """Hold off flushes while this process reads the warehouse, so a read never
        waits for (or collides with) a flush holding the file."""
        return self.flusher.paused()

    async def _flush_loop(self) -> None:
        interval = self.config.daemon.flush_interval_s
        delay = interval
        last_heartbeat = last_flush = time.monotonic()
        while not self._stopping:
            await self._wait_for_flush(delay, last_flush)
            if self._stopping:
                break
            if time.monotonic() - last_heartbeat >= self.tuning.heartbeat_s:
                self._record_event("heartbeat", None)
                last_heartbeat = time.monotonic()
            self._unflushed = 0
            await self.held_rows.retry()
            outcome = await self.flush()
            last_flush = time.monotonic()
            interval = self.config.daemon.flush_interval_s
            self._flush_deferred = outcome.busy
            if outcome.busy or outcome.error:
                delay = min(max(delay * 2, interval), self.tuning.flush_backoff_max_s)
            else:
                delay = interval

    async def _wait_for_flush(self, delay: float, last_flush: float) -> None:
        """Until ``delay`` passes or the row count (or shutdown) wakes the loop; a wake by
        the row count still leaves the file free ``flush_min_gap_s`` after the last flush."""
        try:
            await asyncio.wait_for(self._flush_wake.wait(), timeout=delay)
        except TimeoutError:
            return
        finally:
            self._flush_wake.clear()
        early = self.tuning.flush_min_gap_s - (time.monotonic() - last_flush)
        if early > 0 and not self._stopping:
            await asyncio.sleep(early)

    async def flush(self) -> FlushOutcome:
        """Move the spool into the warehouse now (a worker thread hands the sealed
        segments to the writer and waits for it)."""
        try:
            outcome = await asyncio.to_thread(self.flusher.flush_once)
        except Exception as exc:  # e.g. the spool directory failing: retried, never fatal
            if self._flush_failure is None:
                log.error("flush failed, retrying with back-off: %s", exc)
            self._flush_failure = str(exc)
            outcome = FlushOutcome(error=str(exc))
        else:
            if self._flush_failure is not None and outcome.error is None:
                log.info("flushing works again")
                self._flush_failure = None
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
            self.stats.flush_cpu_ms.append(outcome.cpu_s * 1000)
            self.metrics.flush_seconds.observe(outcome.seconds)
        self.metrics.spool_depth.set(outcome.depth)
