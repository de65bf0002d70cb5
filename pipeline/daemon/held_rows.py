"""Rows the spool refused, held in memory until it takes them again.

A spool directory can fail for a while (a full disk, no inodes left, a read-only
remount) and then recover. Dropping every result meanwhile would turn a short disk
problem into a gap in the measurements, so refused lines wait here, bounded, and are
retried on every flush tick (the flush loop's back-off paces the retries). Only lines
beyond the bound, or still held when the daemon stops, are lost; they are counted, and
the count is logged, kept in the stop summary and recorded in ``daemon_events``.

A held line is not durable: a crash loses it. That is no worse than dropping it, and
it is why the bound is small and each state change is logged once.
"""

from __future__ import annotations

import logging
from collections import deque

from pipeline.daemon.spool import Spool, SpoolError

__all__ = ["HeldRows"]

log = logging.getLogger("nerfwatch.daemon")


class HeldRows:
    """Appends through the spool, holding what it refuses; logs once per state change."""

    def __init__(self, spool: Spool, *, limit: int = 10_000) -> None:
        self.spool = spool
        self.limit = limit
        self._held: deque[str] = deque()
        self.lost = 0
        self.failing: str | None = None  # why the spool refuses lines, while it does

    @property
    def held(self) -> int:
        return len(self._held)

    async def append(self, line: str) -> bool:
        """Spool ``line`` now, or hold it; False when it had to be dropped (over the bound)."""
        if self.failing is None:
            try:
                await self.spool.append(line)
                return True
            except SpoolError as exc:
                self._fail(str(exc))
        if len(self._held) >= self.limit:
            if self.lost == 0:
                log.error("%d rows held in memory: dropping new ones until the spool recovers",
                          self.limit)  # fmt: skip
            self.lost += 1
            return False
        self._held.append(line)
        return True

    async def retry(self) -> None:
        """Move held lines into the spool until it refuses one again."""
        while self._held:
            try:
                await self.spool.append(self._held[0])
            except SpoolError as exc:
                self._fail(str(exc))
                return
            self._held.popleft()
        if self.failing is not None:
            log.info("spool writable again; rows held in memory were spooled")
            self.failing = None

    def abandon(self) -> int:
        """At stop: whatever is still held is lost; return how many rows that was."""
        if self._held:
            log.error("%d rows held in memory could not be spooled and are lost", len(self._held))
        self.lost += len(self._held)
        self._held.clear()
        return self.lost

    def _fail(self, why: str) -> None:
        if self.failing is None:
            log.error("spool refuses rows (%s); holding them in memory and retrying", why)
        self.failing = why
