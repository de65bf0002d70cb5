"""Background tasks the daemon must wait for before it stops (skipped-row writes,
alert deliveries, lifecycle events, reloads).

A task that nobody holds a reference to may be garbage-collected mid-flight, and a
stop that does not wait for these would lose their rows; so they all go through one
``BackgroundTasks``, which the stop drains.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

__all__ = ["BackgroundTasks"]


class BackgroundTasks:
    """Holds the tasks it spawned until they finish."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Future[Any]] = set()

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run ``coro`` on the current loop, keeping a reference until it is done."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait until no spawned task is pending (tasks may spawn more meanwhile)."""
        while pending := {t for t in self._tasks if not t.done()}:
            await asyncio.wait(pending)
