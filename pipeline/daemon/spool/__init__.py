"""The spool: an fsync'd, append-only journal of probe results awaiting the warehouse.

A result counts as done only once its JSON line is on disk. DuckDB may be held by a
reader for hours, and the process may be killed at any instant, so the spool is the
durable record until a flush has committed the rows.

Layout: ``seg-<seq>.jsonl`` files in one directory. The writer appends to the newest
segment it opened itself; ``seal()`` starts a fresh one, so every older segment is
immutable and can be flushed. A segment is deleted only after its rows are committed
to the warehouse, and the warehouse insert is idempotent by ``run_id``: a crash between
commit and delete replays rows that are then skipped, so each acknowledged result
ends up stored exactly once. One the kernel will not delete gets an empty
``seg-<seq>.jsonl.stored`` beside it, so that no reader counts its rows as waiting.
A process never appends to a segment left by an earlier process, so a torn last line
(a write cut by ``kill -9``) stays the last line of its segment and is recognised and
dropped on replay; it was never acknowledged.

Appends go through one writer thread that batches concurrent lines into one
``write`` + ``fsync`` (group commit), keeping disk latency off the event loop.

Modules: ``segments`` (segment files: names, listing, reading), ``marks`` (stored marks),
``removal`` (deleting flushed segments), ``depth`` (what still waits), ``folder_lock``
(one daemon per folder), ``group_commit`` (the writer thread) and ``writer`` (``Spool``).
"""

from __future__ import annotations

from pipeline.daemon.spool.depth import pending_lines, waiting_segments
from pipeline.daemon.spool.errors import SpoolError, SpoolLocked
from pipeline.daemon.spool.marks import stored_mark
from pipeline.daemon.spool.removal import remove_segments
from pipeline.daemon.spool.segments import (
    Segment,
    list_segments,
    numbered_lines,
    read_segment,
    segment_bytes,
)
from pipeline.daemon.spool.writer import Spool

__all__ = [
    "Segment",
    "Spool",
    "SpoolError",
    "SpoolLocked",
    "list_segments",
    "numbered_lines",
    "pending_lines",
    "read_segment",
    "remove_segments",
    "segment_bytes",
    "stored_mark",
    "waiting_segments",
]
