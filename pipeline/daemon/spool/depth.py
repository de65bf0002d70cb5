"""What still waits for the warehouse: the segments not known stored, and their rows."""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from pathlib import Path

from pipeline.daemon.spool.marks import stored_mark
from pipeline.daemon.spool.segments import Segment, list_segments

__all__ = ["pending_lines", "waiting_segments"]


def waiting_segments(directory: Path, stored: Collection[Path] = ()) -> list[Segment]:
    """The segments whose rows may not be in the warehouse yet: all but those in
    ``stored`` (the flush's own record) or with a stored mark."""
    return [
        s
        for s in list_segments(directory)
        if s.path not in stored and not stored_mark(s.path).exists()
    ]


def pending_lines(directory: Path, stored: Collection[Path] = ()) -> int:
    """How many results wait in the spool (complete lines over the waiting segments); a
    segment that cannot be read is not counted (the flush names it)."""
    total = 0
    for segment in waiting_segments(directory, stored):
        with contextlib.suppress(OSError):
            total += segment.path.read_bytes().count(b"\n")
    return total
