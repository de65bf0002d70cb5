"""What runs inside the flush process: one batch in, one reply out, until the pipe closes.

This module is the child's whole program (``process_handle`` starts it with the ``spawn``
method, so nothing of the daemon's state crosses over but ``Target``). The child ignores
SIGINT, SIGTERM and SIGHUP: a Ctrl-C, ``timeout``, ``kill -- -PGID`` or a closed terminal
signals the whole process group, and the daemon decides when to stop and sends its final
flush first (a child killed with it left the stop's rows in the spool until the next
start). It exits when the daemon closes the pipe or dies; the daemon kills it with
SIGKILL when it will not.
"""

from __future__ import annotations

import contextlib
import signal
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from pipeline.daemon.flush.segments import FlushBatch, SegmentWriter, Written
from pipeline.daemon.logs import setup_logging
from pipeline.daemon.spool import SpoolError
from pipeline.warehouse import Lake, Warehouse, WarehouseBusy, WarehouseError

__all__ = ["Reply", "Target", "serve"]

_GROUP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # the daemon's to act on

# ("ok", Written) | ("busy", why) | ("spool", why: a segment refused) | ("error", why)
Reply = tuple[str, Written | str]


@dataclass(frozen=True, slots=True)
class Target:
    """What the child needs to build its writer (plain values: they cross a pipe)."""

    warehouse: Path | Lake  # a Lake is a frozen dataclass: it pickles
    lock_wait_s: float
    spool_dir: Path
    log_level: int


def serve(conn: Connection, target: Target) -> None:
    """The child's loop: one batch in, one reply out, until the pipe closes."""
    for signum in _GROUP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    setup_logging(target.log_level)
    warehouse = Warehouse(target.warehouse, lock_wait_s=target.lock_wait_s, resident=True)
    with contextlib.suppress(WarehouseError):  # now, not inside the first flush; else later
        warehouse.migrate()
    writer = SegmentWriter(warehouse, target.spool_dir)
    try:
        while True:
            try:
                batch = conn.recv()
            except EOFError:  # the daemon is gone
                break
            if batch is None:
                break
            reply = _write(writer, batch)
            try:
                conn.send(reply)
            except OSError:  # the daemon died while we flushed; our work is committed
                break
    finally:
        writer.close()


def _write(writer: SegmentWriter, batch: FlushBatch) -> Reply:
    try:
        return "ok", writer.write(batch)
    except WarehouseBusy as exc:
        return "busy", str(exc)
    except SpoolError as exc:  # the spool's fault, not the warehouse's: said as such
        return "spool", str(exc)
    except WarehouseError as exc:
        return "error", str(exc)
    except Exception as exc:  # reported to the daemon; the segments stay in the spool
        return "error", f"{type(exc).__name__}: {exc}"
