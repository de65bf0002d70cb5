"""Group commit: one writer thread drains the appends queued meanwhile and hands them to
one write + fsync, keeping disk latency off the event loop; every appender of a batch
learns that batch's outcome."""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable

from pipeline.daemon.spool.errors import SpoolError

__all__ = ["GroupCommit"]

log = logging.getLogger("pipeline.daemon.spool")


class _Append:
    __slots__ = ("future", "line", "loop")

    def __init__(self, line: bytes, loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]):
        self.line = line
        self.loop = loop
        self.future = future


class GroupCommit:
    """The writer thread; ``write`` makes a batch of lines durable or raises."""

    def __init__(self, write: Callable[[list[bytes]], None]) -> None:
        self._write = write
        self._queue: queue.Queue[_Append | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._drain, name="spool-writer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread after it has written everything queued so far."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    async def submit(self, line: bytes) -> None:
        """Return once ``line`` is durable (its batch written and fsync'd)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._queue.put(_Append(line, loop, future))
        await asyncio.shield(future)

    def _drain(self) -> None:
        """Drain the queue in batches: one write and one fsync per batch."""
        stop = False
        while not stop:
            batch: list[_Append] = []
            item = self._queue.get()
            if item is None:
                stop = True
            else:
                batch.append(item)
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                else:
                    batch.append(item)
            if batch:
                self._write_batch(batch)

    def _write_batch(self, batch: list[_Append]) -> None:
        error: BaseException | None = None
        try:
            self._write([a.line for a in batch])
        except BaseException as exc:  # reported to every waiting appender
            error = exc
            log.debug("spool write failed: %s", exc)
        by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
        for item in batch:
            by_loop.setdefault(item.loop, []).append(item.future)
        for loop, futures in by_loop.items():  # one wake-up per batch, not per line
            loop.call_soon_threadsafe(_settle, futures, error)


def _settle(futures: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for future in futures:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(SpoolError(f"spool write failed: {error}"))
