"""Where every run's one row goes: into the spool (or held while it refuses), then counted.

A row counts (``DaemonStats.done/skipped/aborted``) only once it is durably appended;
``on_spooled`` tells the flush loop that one more row waits.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime

from pipeline.daemon.contract import DaemonStats
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.rows import bare_row
from pipeline.daemon.schedule import JobSpec
from probes.result import ProbeResult

__all__ = ["RowSink"]

_CHUNK = 256  # rows in flight at once when writing many: one spool fsync, a short loop hold


class RowSink:
    """Appends result rows and the bare rows of runs that did not measure anything."""

    def __init__(
        self,
        rows: HeldRows,
        *,
        stats: DaemonStats,
        metrics: Metrics,
        site: str,
        on_spooled: Callable[[], None] = lambda: None,
    ) -> None:
        self._rows = rows
        self._stats, self._metrics = stats, metrics  # where a spooled row is counted
        self._site = site
        self._on_spooled = on_spooled

    def bare_row(self, spec: JobSpec, when: datetime, status: str, reason: str) -> ProbeResult:
        """A ``skipped``/``aborted`` row for ``spec`` at ``when`` (see ``rows.bare_row``)."""
        return bare_row(spec, when, status, reason, site=self._site)

    async def skip(self, spec: JobSpec, when: datetime, reason: str) -> None:
        """The row of a run that could not start, and why."""
        self._metrics.skipped.labels(spec.provider.name, reason).inc()
        await self.persist(self.bare_row(spec, when, "skipped", reason))

    async def skip_all(self, spec: JobSpec, whens: Iterable[datetime], reason: str) -> None:
        """The rows of many runs that could not start (a long suspend's misfires), a
        chunk at a time: the spool commits a chunk with one fsync, and the event loop
        runs between chunks instead of queueing a task per row."""
        chunk: list[Awaitable[None]] = []
        for when in whens:
            chunk.append(self.skip(spec, when, reason))
            if len(chunk) >= _CHUNK:
                await asyncio.gather(*chunk)
                chunk = []
        await asyncio.gather(*chunk)

    async def persist(self, result: ProbeResult) -> None:
        """Durably append one row (or hold it while the spool refuses it); only then
        does it count."""
        if not await self._rows.append(result.to_json()):
            self._stats.lost = self._rows.lost
            return
        self._on_spooled()
        if result.run_status == "done":
            self._stats.done += 1
        elif result.run_status == "aborted":
            self._stats.aborted += 1
        else:
            self._stats.skipped[result.skip_reason or "unknown"] += 1
