"""Moving the spool into DuckDB: one place for both sides of the flush process boundary.

::

    daemon process                              │  flush process (nerfwatch-flush)
    ─────────────────────────────────────────── │ ──────────────────────────────────
    daemon_loop   FlushLoop: when to flush      │
                  (interval, row count, back-   │
                  off while a reader holds the  │
                  file, heartbeat, stats)       │
    daemon_side   Flusher: seal the active      │
                  segment, hand sealed paths    │
                  and side rows to a RowWriter  │
    process_handle FlushProcess: the RowWriter ─┼─► in_flush_process  serve(): one batch
                  that sends a FlushBatch down  │   in, one reply out, until the pipe
                  a pipe and waits for a reply  │   closes
                                                │   segments  SegmentWriter: insert by
                                                │   run_id, quarantine bad lines, delete
                                                │   the segments after the commit

Only plain values cross the boundary (``FlushBatch``: segment paths and side rows; the
reply: ``Written`` or why not). ``segments.SegmentWriter`` is the one piece that holds
the warehouse file; it runs in the flush process, or (``DaemonTuning(flush_process=
False)``, tests, benchmarks) in a thread of the daemon, as a ``RowWriter`` of its own.
"""

from __future__ import annotations

from pipeline.daemon.flush.daemon_side import Flusher, FlushOutcome, RowWriter
from pipeline.daemon.flush.process_handle import FlushProcess
from pipeline.daemon.flush.segments import FlushBatch, SegmentWriter, SideRows, Written

__all__ = [
    "FlushBatch",
    "FlushOutcome",
    "FlushProcess",
    "Flusher",
    "RowWriter",
    "SegmentWriter",
    "SideRows",
    "Written",
]
