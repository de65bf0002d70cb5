"""Stored marks: an empty ``seg-<seq>.jsonl.stored`` beside a segment whose rows are in
the warehouse although the kernel kept the segment. ``nerfwatch status`` runs in another
process than the flush, and must not count those rows as waiting."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from pipeline.daemon.spool.segments import PREFIX, SUFFIX, segment_name

__all__ = ["drop_orphan_marks", "mark_stored", "marked_seqs", "stored_mark"]

_STORED_SUFFIX = ".stored"


def stored_mark(segment: Path) -> Path:
    """The empty file that says ``segment``'s rows are in the warehouse although the
    kernel kept the segment: ``nerfwatch status`` runs in another process than the
    flush, and must not count those rows as waiting."""
    return segment.with_name(segment.name + _STORED_SUFFIX)


def marked_seqs(directory: Path) -> list[int]:
    """Sequence numbers of the stored marks in ``directory``."""
    seqs = []
    for path in directory.glob(f"{PREFIX}*{SUFFIX}{_STORED_SUFFIX}"):
        digits = path.name[len(PREFIX) : -len(SUFFIX + _STORED_SUFFIX)]
        if digits.isdigit():
            seqs.append(int(digits))
    return seqs


def mark_stored(segment: Path) -> None:
    """Leave a stored mark beside ``segment``; a folder that refuses it (read-only, no
    space) leaves the segment counted as waiting by other processes, no worse."""
    with contextlib.suppress(OSError):
        os.close(os.open(stored_mark(segment), os.O_WRONLY | os.O_CREAT, 0o644))


def drop_orphan_marks(directory: Path) -> None:
    """Remove the stored marks whose segment is gone (deleted after all, or a crash
    between the two deletes), so that no new segment of that name counts as stored."""
    for seq in marked_seqs(directory):
        segment = directory / segment_name(seq)
        if not segment.exists():
            with contextlib.suppress(OSError):
                stored_mark(segment).unlink()
