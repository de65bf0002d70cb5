"""Deleting flushed segments, durably; one the kernel keeps gets a stored mark instead."""

from __future__ import annotations

import contextlib
from pathlib import Path

from pipeline.daemon.spool.disk import fsync_dir
from pipeline.daemon.spool.errors import SpoolError
from pipeline.daemon.spool.marks import mark_stored, stored_mark

__all__ = ["remove_segments"]


def remove_segments(directory: Path, paths: list[Path]) -> dict[Path, str]:
    """Delete flushed segments (their rows are committed to the warehouse), durably, and
    return those the kernel will not delete (EPERM: immutable; EROFS; EACCES: a read-only
    folder) with the reason. One such segment does not keep the others; its rows are
    stored, so the caller only tries to delete it again, and it gets a stored mark where
    the folder takes one. A folder that cannot be synced is a ``SpoolError`` (the
    deletions may not last; a replay stores nothing twice)."""
    undeletable: dict[Path, str] = {}
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            undeletable[path] = exc.strerror or str(exc)
            mark_stored(path)
        else:
            with contextlib.suppress(OSError):
                stored_mark(path).unlink(missing_ok=True)
    if len(undeletable) == len(paths) and undeletable:
        with contextlib.suppress(OSError):  # only marks changed: a hint, not the rows
            fsync_dir(directory)
    elif len(undeletable) < len(paths):
        try:
            fsync_dir(directory)
        except OSError as exc:
            raise SpoolError(
                f"spool folder {directory} cannot be synced: {exc.strerror}; the rows are "
                "stored, and any segment back after a crash is skipped"
            ) from exc
    return undeletable
