"""The daemon side of one flush: moves spooled results into DuckDB in short,
idempotent transactions.

A flush seals the active spool segment and hands every sealed segment (and the queued
side rows) to a writer: the daemon's flush process (``process_handle``) or, where a
process is not worth it, a ``SegmentWriter`` in the calling thread. The writer inserts
the rows keyed by ``run_id`` and deletes the segments only after the commit. When a
reader holds the file the writer raises ``WarehouseBusy`` after its (short) lock wait:
the segments stay, probing goes on, and the next flush retries with a growing back-off.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pipeline.daemon.flush.segments import FlushBatch, SideRows, Written
from pipeline.daemon.spool import Spool, SpoolError
from pipeline.warehouse import WarehouseBusy, WarehouseError
from pipeline.warehouse.lake_faults import lake_fault

__all__ = ["FlushOutcome", "Flusher", "RowWriter"]

log = logging.getLogger(__name__)

# Failed flushes between two log lines of one outage: at the back-off's 30 s cap, an hour.
_FAILURE_REMINDER = 120


class RowWriter(Protocol):
    """Writes a batch under one hold of the warehouse file (``SegmentWriter``,
    ``FlushProcess``); raises ``WarehouseBusy``/``WarehouseError`` and keeps the segments,
    or ``SpoolError`` for a segment the kernel refuses to read or cut."""

    def start(self) -> None: ...

    def write(self, batch: FlushBatch) -> Written: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class FlushOutcome:
    """What one flush did; ``busy`` means a reader held the file and nothing moved."""

    rows: int = 0
    inserted: int = 0
    segments: int = 0
    seconds: float = 0.0
    busy: bool = False
    error: str | None = None
    held_s: float = 0.0  # how long the DuckDB file was held (open to close)
    cpu_s: float = 0.0  # CPU the writer used (a thread writer: the whole process's)
    depth: int = 0  # rows left in the spool afterwards


class Flusher:
    """Owns the spool → warehouse move; thread-safe, one flush at a time."""

    def __init__(self, spool: Spool, writer: RowWriter) -> None:
        self.spool = spool
        self.writer = writer
        self._lock = threading.Lock()
        self._side: list[SideRows] = []
        self._side_lock = threading.Lock()
        self.consecutive_busy = 0
        self.consecutive_failures = 0  # flushes the warehouse refused in a row (an outage)
        self._failing: type[Exception] | None = None  # what the last failure was
        # segments stored in the warehouse that the kernel would not delete: path -> why
        self.undeletable: dict[Path, str] = {}

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No flush runs inside this block (e.g. while a report reads the file)."""
        with self._lock:
            yield

    def add_side_rows(self, table: str, rows: list[dict[str, Any]], *, key: str) -> None:
        """Queue rows for another table (daemon events, alert events); best effort."""
        with self._side_lock:
            self._side.append(SideRows(table, key, rows))

    def close(self) -> None:
        """Stop the writer (the flush process exits); call after the last flush."""
        with self._lock:
            self.writer.close()

    def flush_once(self) -> FlushOutcome:
        """Seal, insert and delete; never raises for a busy or failing warehouse.

        ``seconds`` runs from the seal to the deletion of the flushed segments: it covers
        opening the file, the insert and its commit, closing (checkpoint, lock release)
        and the spool bookkeeping; ``held_s`` is the part during which the file was held.
        """
        with self._lock:
            started = time.perf_counter()
            segments = self.spool.seal()
            with self._side_lock:
                side, self._side = self._side, []
            if not segments and not side:
                return FlushOutcome(seconds=time.perf_counter() - started)
            try:
                paths = [s.path for s in segments]
                stored = [p for p in paths if p in self.undeletable]
                written = self.writer.write(FlushBatch(paths, side, stored))
            except WarehouseBusy as exc:
                self._requeue(side)
                self.consecutive_busy += 1
                if self.consecutive_busy == 1 or self.consecutive_busy % 30 == 0:
                    log.warning("flush deferred, spool keeps the rows: %s", exc)
                seconds = time.perf_counter() - started
                return FlushOutcome(busy=True, seconds=seconds, depth=self.spool.depth())
            except (WarehouseError, SpoolError) as exc:  # SpoolError: a segment refused
                self._requeue(side)
                self._failed(exc)
                seconds = time.perf_counter() - started
                return FlushOutcome(error=str(exc), seconds=seconds, depth=self.spool.depth())
            self._note_undeletable(paths, written.undeletable)
            if written.replayed:
                log.info("flush skipped %d rows already stored (replay)", written.replayed)
            if self.consecutive_busy:
                log.info(
                    "warehouse available again after %d deferred flushes", self.consecutive_busy
                )
            self.consecutive_busy = 0
            if self.consecutive_failures:
                log.info(
                    "warehouse reachable again after %d failed flushes; the spool drains",
                    self.consecutive_failures,
                )
            self.consecutive_failures = 0
            self._failing = None
            return FlushOutcome(
                rows=written.rows,
                inserted=written.inserted,
                segments=len(segments),
                seconds=written.finished_at - started,
                held_s=written.held_s,
                cpu_s=written.cpu_s,
                depth=self.spool.depth(),
            )

    def _failed(self, exc: WarehouseError | SpoolError) -> None:
        """Log an outage once, not once per retried flush (a catalog down for hours would
        fill the log): the first failure of each kind (spool, warehouse), then a reminder
        every ``_FAILURE_REMINDER``. A spool fault's message names the segment's path."""
        self.consecutive_failures += 1
        count = self.consecutive_failures
        kind = SpoolError if isinstance(exc, SpoolError) else WarehouseError
        first, self._failing = kind is not self._failing, kind
        if first and kind is SpoolError:
            log.error("flush met a spool fault: %s", exc)
        elif first:  # what failed, in words, when the lake's message shows it
            fault = lake_fault(str(exc))
            log.error(
                "flush failed%s, the spool keeps the rows until a flush succeeds: %s",
                f" ({fault})" if fault else "",
                exc,
            )
        elif count % _FAILURE_REMINDER == 0:
            log.error("flushes still failing (%d in a row), spool keeps the rows: %s", count, exc)

    def _note_undeletable(self, paths: list[Path], undeletable: dict[Path, str]) -> None:
        """Remember segments stored but not deleted, so later flushes only try to delete
        them (their rows are not inserted again); say so once per segment, and once more
        when one is finally deleted."""
        for path, why in undeletable.items():
            if path not in self.undeletable:
                log.error(
                    "spool segment %s cannot be deleted: %s; its rows are stored in the"
                    " warehouse, later flushes only try to delete it again",
                    path,
                    why,
                )
        for path in self.undeletable.keys() - undeletable.keys():
            if path in paths:
                log.info("spool segment %s, stored earlier, is deleted at last", path)
        self.undeletable = dict(undeletable)
        self.spool.stored = frozenset(undeletable)  # not waiting: left out of the depth

    def _requeue(self, side: list[SideRows]) -> None:
        """Side rows wait for the next flush (their inserts are idempotent)."""
        if side:
            with self._side_lock:
                self._side = side + self._side
