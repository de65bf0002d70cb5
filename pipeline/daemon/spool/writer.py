"""``Spool``: the owner of a spool folder, appending (group-committed) to its active
segment, starting a new one on ``seal``, and carrying the acknowledged rows of a segment
deleted while open (its folder removed or replaced) into a new one."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from pipeline.daemon.spool.depth import pending_lines, waiting_segments
from pipeline.daemon.spool.disk import complete_lines, fsync_dir, write_all
from pipeline.daemon.spool.errors import SpoolError
from pipeline.daemon.spool.folder_lock import FolderLock
from pipeline.daemon.spool.group_commit import GroupCommit
from pipeline.daemon.spool.marks import drop_orphan_marks, marked_seqs
from pipeline.daemon.spool.segments import (
    Segment,
    list_segments,
    named_segments,
    read_segment,
    segment_name,
)

__all__ = ["Spool"]

log = logging.getLogger("pipeline.daemon.spool")


class Spool:
    """Owner of a spool directory: appends (group-committed) and segment rotation."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._commits = GroupCommit(self._write_lines)
        self._file_lock = threading.Lock()  # guards the active segment file
        self._active: Segment | None = None
        self._fh: int | None = None
        self._folder_lock = FolderLock(self.directory)
        self._torn = False  # the active segment ends with bytes of a failed write
        self._removed_said = False  # the log has said the active segment was deleted
        self.appended = 0
        self.seal_error: str | None = None  # why the last seal kept the active segment
        # segments whose rows are stored but which the kernel kept (the flush says so):
        # not waiting, even where the folder took no stored mark
        self.stored: frozenset[Path] = frozenset()

    # -- lifecycle ---------------------------------------------------------------------
    def open(self) -> None:
        """Take the directory lock and start a fresh segment after any existing ones."""
        self._folder_lock.take()
        drop_orphan_marks(self.directory)
        existing = named_segments(self.directory)  # odd entries too: their names are taken
        for segment in existing:
            if not segment.path.is_file():
                log.error("spool entry %s is not a regular file; left alone", segment.path)
        # a mark that could not be dropped takes its name too
        taken = [s.seq for s in existing] + marked_seqs(self.directory)
        self._start_segment(max(taken) + 1 if taken else 1)
        self._commits.start()

    def close(self) -> None:
        """Stop the writer after it has written everything queued so far."""
        self._commits.stop()
        with self._file_lock:
            if self._fh is not None and self._active is not None:
                try:
                    self._relink_if_removed()
                except OSError as exc:
                    lines = complete_lines(self._fh).count(b"\n")
                    log.error(
                        "spool segment %s was deleted while in use and cannot be written"
                        " again (%s); %d rows in it are lost", self._active.path, exc, lines
                    )  # fmt: skip
                if os.fstat(self._fh).st_size == 0:
                    with contextlib.suppress(OSError):
                        self._active.path.unlink(missing_ok=True)
            if self._fh is not None:
                os.close(self._fh)
                self._fh = None
            self._active = None
        self._folder_lock.release()

    def _relink_if_removed(self) -> None:
        """When the active segment was deleted while open (its folder removed, or swapped
        for a file), its acknowledged rows live only in this open file: write them again
        into a new segment (in the folder made again) before anything else. Raises
        ``OSError`` while the path cannot be a spool folder; the rows stay in memory."""
        assert self._fh is not None and self._active is not None
        if os.fstat(self._fh).st_nlink > 0:
            return
        if not self._removed_said:
            log.error(
                "spool segment %s was deleted while in use (its folder removed or replaced?);"
                " its rows are written again into a new segment",
                self._active.path,
            )
            self._removed_said = True
        try:
            self._folder_lock.take()
        except FileExistsError as exc:
            raise NotADirectoryError(
                exc.errno, "spool folder was replaced by a file", str(self.directory)
            ) from exc
        taken = [s.seq for s in named_segments(self.directory)] + [self._active.seq]
        self._start_segment(max(taken) + 1)
        self._removed_said = False

    def _start_segment(self, seq: int) -> None:
        """Make segment ``seq`` the active one. The new file is created (and made durable)
        before the old one is closed, so a directory that refuses new files (no inodes,
        a full disk, ``chattr +i``) leaves the current segment active, never none. When
        the active segment was deleted while open, its complete lines move to the new one."""
        path = self.directory / segment_name(seq)
        # read too: a segment deleted while open is read back through this descriptor
        fh = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        try:
            if self._fh is not None and os.fstat(self._fh).st_nlink == 0:
                write_all(fh, complete_lines(self._fh))
                os.fsync(fh)
            fsync_dir(self.directory)
        except OSError:
            os.close(fh)
            with contextlib.suppress(OSError):
                path.unlink()
            raise
        if self._fh is not None:
            os.close(self._fh)
        self._fh = fh
        self._active = Segment(seq, path)

    # -- appends -----------------------------------------------------------------------
    async def append(self, line: str) -> None:
        """Return once ``line`` is durable on disk (written and fsync'd)."""
        if "\n" in line:
            raise SpoolError("a spool line must not contain a newline")
        if not self._commits.running:
            raise SpoolError("spool is not open")
        await self._commits.submit((line + "\n").encode("utf-8"))

    def _write_lines(self, lines: list[bytes]) -> None:
        """One group commit's batch (called on the writer thread)."""
        with self._file_lock:
            if self._fh is None:
                raise SpoolError("spool is closed")
            self._write_durably(b"".join(lines))
            self.appended += len(lines)

    def _write_durably(self, data: bytes) -> None:
        """Write and fsync ``data`` at the end of the active segment, or leave the
        segment as it was: a failed (possibly partial) write is cut off again, which needs
        no free space, so a full disk leaves neither a torn line nor a new segment."""
        assert self._fh is not None and self._active is not None
        self._relink_if_removed()
        if self._torn:  # an earlier cut failed: its torn bytes stay last in that segment
            self._start_segment(self._active.seq + 1)
            self._torn = False
        size = os.fstat(self._fh).st_size
        try:
            write_all(self._fh, data)
            os.fsync(self._fh)
        except OSError as exc:
            try:
                os.ftruncate(self._fh, size)
            except OSError:
                self._torn = True
            if exc.errno != errno.EFBIG or size == 0 or self._torn:
                raise
            # the segment is at the process's file-size limit (ulimit -f, LimitFSIZE=):
            # go on in a new, empty one (which raises if the batch alone is too large)
            self._start_segment(self._active.seq + 1)
            self._write_durably(data)
            return
        try:
            self._relink_if_removed()  # deleted while we wrote: the batch moves too
        except OSError:
            with contextlib.suppress(OSError):  # not acknowledged: not carried later
                os.ftruncate(self._fh, size)
            raise

    # -- rotation ----------------------------------------------------------------------
    def seal(self) -> list[Segment]:
        """Start a new active segment; return every older (immutable) segment.

        When the directory refuses the new file, appends go on into the current segment
        and only the segments sealed before are returned; a later seal tries again.
        Safe to call from any thread: it serialises with the writer on the file lock.
        """
        with self._file_lock:
            if self._active is None or self._fh is None:
                raise SpoolError("spool is not open")
            if os.fstat(self._fh).st_size > 0:
                try:
                    self._relink_if_removed()
                    self._start_segment(self._active.seq + 1)
                except OSError as exc:
                    if self.seal_error is None:
                        log.error("spool cannot start a new segment, appending on: %s", exc)
                    self.seal_error = str(exc)
                else:
                    self._torn = False
                    if self.seal_error is not None:
                        log.info("spool starts new segments again")
                    self.seal_error = None
            active_seq = self._active.seq
        return [s for s in list_segments(self.directory) if s.seq < active_seq]

    # -- accounting --------------------------------------------------------------------
    def depth(self) -> int:
        """Rows waiting for the warehouse (not those of stored segments the kernel kept)."""
        return pending_lines(self.directory, self.stored)

    def iter_pending(self, unreadable: list[SpoolError] | None = None) -> Iterator[str]:
        """Every complete line currently in the spool, oldest first. Given ``unreadable``, a
        segment the kernel will not read (EIO) is skipped and its error kept there, so the
        other segments still count; without it, the error is raised. Stored segments the
        kernel kept are left out: their rows are in the warehouse."""
        for segment in waiting_segments(self.directory, self.stored):
            try:
                lines = read_segment(segment.path)
            except SpoolError as exc:
                if unreadable is None:
                    raise
                unreadable.append(exc)
                continue
            yield from lines
