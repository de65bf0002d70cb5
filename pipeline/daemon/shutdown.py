"""Stopping: signals, the stop request, the grace period for in-flight probes, the final
flush and releasing what the start opened."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from pipeline.daemon.caps import CapUsage
from pipeline.daemon.reload import Reloading

__all__ = ["Stopping"]

log = logging.getLogger("nerfwatch.daemon")


class Stopping(Reloading):
    def _install_signals(self) -> None:
        if not self.tuning.install_signals or self._loop is None:
            return
        loop = self._loop
        loop.add_signal_handler(signal.SIGTERM, self._request_stop, "SIGTERM")
        loop.add_signal_handler(signal.SIGINT, self._request_stop, "SIGINT")
        loop.add_signal_handler(signal.SIGHUP, self.reload)

    def _remove_signals(self) -> None:
        if not self.tuning.install_signals or self._loop is None:
            return
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            self._loop.remove_signal_handler(sig)

    def _request_stop(self, reason: str) -> None:
        if not self._stop.is_set():
            log.info("stop requested (%s)", reason)
            self.stats.stop_reason = reason
            self._stop.set()

    async def _wait_for_stop(
        self, stop_after_s: float | None, stop_event: asyncio.Event | None
    ) -> None:
        waiters = [asyncio.ensure_future(self._stop.wait())]
        if stop_event is not None:
            waiters.append(asyncio.ensure_future(stop_event.wait()))
        try:
            done, _ = await asyncio.wait(
                waiters, timeout=stop_after_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in waiters:
                waiter.cancel()
        if not self.stats.stop_reason:
            self.stats.stop_reason = "stop_after" if not done else "stop_event"

    async def _shutdown(self) -> None:
        """Stop scheduling, grant in-flight probes a grace period, abort the rest, flush."""
        self._stopping = True
        self._flush_wake.set()
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.pause()
        await self._end_in_flight()
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        await self._drain_background()
        self._remove_signals()
        await self.held_rows.retry()
        self.held_rows.abandon()  # what the spool still refuses is lost: counted, logged
        await self._spool_event("stop", self.stats.stop_reason)
        self.stats.lost = self.held_rows.abandon()
        outcome = await self.flush()
        if outcome.busy:
            log.warning("final flush deferred: %d rows stay in the spool", self.spool.depth())
        self.stats.caps = self._caps.usage if self._caps else CapUsage()
        await self._release()
        self.stats.spool_depth = self.spool.depth()
        log.info(
            "daemon stopped (%s): %d done, %d skipped, %d aborted, %d lost, spool depth %d",
            self.stats.stop_reason,
            self.stats.done,
            sum(self.stats.skipped.values()),
            self.stats.aborted,
            self.stats.lost,
            self.stats.spool_depth,
        )

    async def _end_in_flight(self) -> None:
        """Wait up to the grace period for running probes, then cancel the rest."""
        grace = self.config.daemon.shutdown_grace_s
        if self._outstanding:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), timeout=grace)
        if self._inflight:
            log.warning("grace period over: aborting %d in-flight probes", len(self._inflight))
            for entry in list(self._inflight):
                if entry.phase not in ("persisting", "persisted"):
                    entry.task.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), timeout=10.0)

    async def _release(self) -> None:
        """Close what ``_start`` opened (also after a failed start)."""
        self.spool.close()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._workers is not None:
            await asyncio.to_thread(self._workers.close)
            self._workers = None
        await asyncio.to_thread(self.flusher.close)
        self.metrics.close()

    async def _drain_background(self) -> None:
        """Wait for skipped-row writes and alert deliveries, then the flush loop."""
        while pending := {t for t in self._background if not t.done()}:
            await asyncio.wait(pending)
        if self._flush_task is not None:
            await self._flush_task
