"""The daemon's handle on its flush process (daemon side): start it, hand it a batch,
wait for the reply, replace it when it dies.

Why a process: at thousands of probes a minute the probe threads keep the GIL busy, and
a flush thread in the same process waits for it between every step, holding the
DuckDB file several times longer than the work takes (measured: 25 ms idle, 150+ ms
under load). A child process has its own interpreter; the daemon only seals segments
and hands over their paths, and the child's resident DuckDB instance attaches the file,
inserts, detaches and deletes the segments.

The child's own program is ``in_flush_process``; it ignores SIGINT and exits when the
daemon closes the pipe or dies. SIGTERM still ends it (the systemd unit sends it to the
daemon only, ``KillMode=mixed``). If the child dies, even mid-flush, the flush reports an error, the
segments stay in the spool (the insert is idempotent), and the next flush starts a new
child.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from pipeline.daemon.flush.in_flush_process import Target, serve
from pipeline.daemon.flush.segments import FlushBatch, Written
from pipeline.daemon.spool import SpoolError
from pipeline.warehouse import Lake, WarehouseBusy, WarehouseError

__all__ = ["FlushProcess"]

log = logging.getLogger(__name__)


class FlushProcess:
    """A ``SegmentWriter`` in a child process, with the same ``write``/``close`` API."""

    def __init__(
        self, warehouse: Path | Lake, *, lock_wait_s: float, spool_dir: Path, reply_timeout_s: float
    ) -> None:
        self._target = Target(
            warehouse, lock_wait_s, spool_dir, logging.getLogger().getEffectiveLevel()
        )
        self._reply_timeout_s = reply_timeout_s
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        """Start the child (returns at once; its imports overlap with the daemon's start)."""
        if self._process is not None:
            if self._process.is_alive():
                return
            self._discard("exited between flushes")
        context = multiprocessing.get_context("spawn")  # never fork a threaded daemon
        ours, theirs = context.Pipe()
        process = context.Process(
            target=serve, args=(theirs, self._target), name="nerfwatch-flush", daemon=True
        )
        process.start()
        theirs.close()
        self._process, self._conn = process, ours

    def write(self, batch: FlushBatch) -> Written:
        """Send the batch, wait for the child's reply; raise like ``SegmentWriter``
        (``SpoolError`` too: the child's spool faults are not the warehouse's)."""
        self.start()
        assert self._conn is not None
        try:
            self._conn.send(batch)
            if not self._conn.poll(self._reply_timeout_s):
                self._discard(f"did not answer within {self._reply_timeout_s:.0f} s")
                raise WarehouseError("flush process did not answer; it was restarted")
            tag, payload = self._conn.recv()
        except (EOFError, OSError) as exc:
            code = self._discard(f"exited ({type(exc).__name__})")
            raise WarehouseError(f"flush process exited with status {code}") from None
        if tag == "ok":
            assert isinstance(payload, Written)
            return payload
        if tag == "busy":
            raise WarehouseBusy(str(payload))
        if tag == "spool":
            raise SpoolError(str(payload))
        raise WarehouseError(str(payload))

    def close(self) -> None:
        """Let the child finish and exit; kill it if it does not."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.send(None)
            conn.close()
        if process is not None:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
                process.join()

    def _discard(self, why: str) -> int | None:
        """Forget a child that failed; the next write starts a new one."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        code = None
        if process is not None:
            if process.is_alive():
                process.kill()
            process.join(timeout=30)
            code = process.exitcode
        log.error("flush process %s (exit status %s); the spool keeps the rows", why, code)
        return code
