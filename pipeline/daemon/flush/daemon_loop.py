"""When the daemon flushes: every ``flush_interval``, or as soon as ``flush_max_rows``
rows wait (a bounded batch keeps each hold of the file short) but never sooner than
``flush_min_gap_s`` after the last flush (readers get their turn); backing off while a
reader holds the file or the warehouse fails. Between flushes it retries rows the spool
refused and beats the session's heartbeat."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.config import DaemonConfig
from pipeline.daemon.contract import DaemonStats, DaemonTuning
from pipeline.daemon.flush.daemon_side import Flusher, FlushOutcome
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.metrics import Metrics

__all__ = ["FlushLoop", "FlushPacing", "account_flush"]

log = logging.getLogger("nerfwatch.daemon")


@dataclass(frozen=True, slots=True)
class FlushPacing:
    """The numbers flushes are paced by: ``[daemon]`` settings and ``DaemonTuning``."""

    interval_s: float
    max_rows: int
    min_gap_s: float
    backoff_max_s: float
    heartbeat_s: float

    @classmethod
    def of(cls, settings: DaemonConfig, tuning: DaemonTuning) -> FlushPacing:
        return cls(
            interval_s=settings.flush_interval_s,
            max_rows=tuning.flush_max_rows,
            min_gap_s=tuning.flush_min_gap_s,
            backoff_max_s=tuning.flush_backoff_max_s,
            heartbeat_s=tuning.heartbeat_s,
        )


def account_flush(stats: DaemonStats, metrics: Metrics, outcome: FlushOutcome) -> None:
    """Count one flush in the daemon's stats and metrics."""
    stats.flushes += 1
    if outcome.busy:
        stats.busy_flushes += 1
    elif outcome.rows:
        stats.flushed_rows += outcome.inserted
        stats.flush_ms.append(outcome.seconds * 1000)
        stats.flush_held_ms.append(outcome.held_s * 1000)
        stats.flush_cpu_ms.append(outcome.cpu_s * 1000)
        metrics.flush_seconds.observe(outcome.seconds)
    metrics.spool_depth.set(outcome.depth)


class FlushLoop:
    """Paces the ``Flusher``; ``on_flushed`` hears of every flush (``account_flush``)."""

    def __init__(
        self,
        flusher: Flusher,
        pacing: FlushPacing,
        *,
        held: HeldRows,
        on_flushed: Callable[[FlushOutcome], None] = lambda outcome: None,
        heartbeat: Callable[[], None] = lambda: None,
    ) -> None:
        self._wake = asyncio.Event()  # set by enough waiting rows, and by stop
        self._flusher = flusher
        self._pacing = pacing
        self._held = held
        self._on_flushed = on_flushed
        self._heartbeat = heartbeat
        self._stopping = False
        self._unflushed = 0  # rows spooled since the last flush started
        self._deferred = False  # a reader holds the file: wait out the back-off
        self._failure: str | None = None  # why flushes fail, while they do

    def configure(self, pacing: FlushPacing) -> None:
        """A new ``flush_interval`` (reload) applies from the next wait."""
        self._pacing = pacing

    def note_spooled(self) -> None:
        """One more row waits; enough of them wake the loop early."""
        self._unflushed += 1
        if self._unflushed >= self._pacing.max_rows and not self._deferred:
            self._wake.set()

    def stop(self) -> None:
        """End ``run`` (the final flush is the stopper's call to ``flush``)."""
        self._stopping = True
        self._wake.set()

    async def run(self) -> None:
        """Flush until ``stop``."""
        delay = self._pacing.interval_s
        last_heartbeat = last_flush = time.monotonic()
        while not self._stopping:
            await self._wait(delay, last_flush)
            if self._stopping:
                break
            if time.monotonic() - last_heartbeat >= self._pacing.heartbeat_s:
                self._heartbeat()
                last_heartbeat = time.monotonic()
            self._unflushed = 0
            await self._held.retry()
            outcome = await self.flush()
            last_flush = time.monotonic()
            interval = self._pacing.interval_s
            self._deferred = outcome.busy
            if outcome.busy or outcome.error:
                delay = min(max(delay * 2, interval), self._pacing.backoff_max_s)
            else:
                delay = interval

    async def _wait(self, delay: float, last_flush: float) -> None:
        """Until ``delay`` passes or the row count (or stop) wakes the loop; a wake by
        the row count still leaves the file free ``flush_min_gap_s`` after the last flush."""
        try:
            await asyncio.wait_for(self._wake.wait(), timeout=delay)
        except TimeoutError:
            return
        finally:
            self._wake.clear()
        early = self._pacing.min_gap_s - (time.monotonic() - last_flush)
        if early > 0 and not self._stopping:
            await asyncio.sleep(early)

    async def flush(self) -> FlushOutcome:
        """Move the spool into the warehouse now (a worker thread hands the sealed
        segments to the writer and waits for it)."""
        try:
            outcome = await asyncio.to_thread(self._flusher.flush_once)
        except Exception as exc:  # e.g. the spool directory failing: retried, never fatal
            if self._failure is None:
                log.error("flush failed, retrying with back-off: %s", exc)
            self._failure = str(exc)
            outcome = FlushOutcome(error=str(exc))
        else:
            if self._failure is not None and outcome.error is None:
                log.info("flushing works again")
                self._failure = None
        self._on_flushed(outcome)
        return outcome
