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
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import logging
import os
import queue
import threading
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Segment",
    "Spool",
    "SpoolError",
    "SpoolLocked",
    "numbered_lines",
    "pending_lines",
    "read_segment",
    "remove_segments",
    "segment_bytes",
    "stored_mark",
    "waiting_segments",
]

log = logging.getLogger(__name__)

_PREFIX = "seg-"
_SUFFIX = ".jsonl"
_LOCK_NAME = ".lock"
_STORED_SUFFIX = ".stored"


class SpoolError(Exception):
    """The spool directory cannot be used."""


class SpoolLocked(SpoolError):
    """Another daemon already owns this spool directory."""


@dataclass(frozen=True, slots=True)
class Segment:
    seq: int
    path: Path


def _segment_name(seq: int) -> str:
    return f"{_PREFIX}{seq:012d}{_SUFFIX}"


def _named_segments(directory: Path) -> list[Segment]:
    """Every entry named like a segment, whatever it is, oldest first."""
    segments: list[Segment] = []
    if not directory.is_dir():
        return segments
    for path in directory.glob(f"{_PREFIX}*{_SUFFIX}"):
        digits = path.name[len(_PREFIX) : -len(_SUFFIX)]
        if digits.isdigit():
            segments.append(Segment(int(digits), path))
    return sorted(segments, key=lambda s: s.seq)


def stored_mark(segment: Path) -> Path:
    """The empty file that says ``segment``'s rows are in the warehouse although the
    kernel kept the segment: ``nerfwatch status`` runs in another process than the
    flush, and must not count those rows as waiting."""
    return segment.with_name(segment.name + _STORED_SUFFIX)


def _marked_seqs(directory: Path) -> list[int]:
    """Sequence numbers of the stored marks in ``directory``."""
    seqs = []
    for path in directory.glob(f"{_PREFIX}*{_SUFFIX}{_STORED_SUFFIX}"):
        digits = path.name[len(_PREFIX) : -len(_SUFFIX + _STORED_SUFFIX)]
        if digits.isdigit():
            seqs.append(int(digits))
    return seqs


def list_segments(directory: Path) -> list[Segment]:
    """All segment files, oldest first.

    An entry named like a segment that is not a regular file (a directory, a FIFO, a
    symlink to either) is left out: reading it fails or, for a FIFO, blocks for ever, and
    that must stop neither the flush of the real segments nor ``nerfwatch status``.
    ``Spool.open`` names such entries in the log; they are never deleted.
    """
    return [s for s in _named_segments(directory) if s.path.is_file()]


def read_segment(path: Path) -> list[str]:
    """Complete lines of a segment; a torn (newline-less) tail is dropped with a warning."""
    return [text for _, text in numbered_lines(path)]


def numbered_lines(path: Path) -> list[tuple[int, str]]:
    """``read_segment`` with each line's 1-based number in the file, for messages that must
    lead an operator to it (blank lines are skipped but counted, as an editor counts)."""
    data = segment_bytes(path)
    if not data:
        return []
    lines = data.split(b"\n")
    tail = lines.pop()  # empty when the file ends with a newline
    if tail:
        log.warning(
            "spool segment %s ends with a torn line (line %d, %d bytes); dropped",
            path,
            len(lines) + 1,
            len(tail),
        )
    return [(n, line.decode("utf-8", "replace")) for n, line in enumerate(lines, 1) if line]


def segment_bytes(path: Path) -> bytes:
    """A segment's bytes (none if it is gone); a ``SpoolError`` naming it when the kernel
    refuses the read (EIO, a segment swapped for a folder)."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise SpoolError(f"spool segment {path} cannot be read: {exc.strerror}") from exc


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
            _mark_stored(path)
        else:
            with contextlib.suppress(OSError):
                stored_mark(path).unlink(missing_ok=True)
    if len(undeletable) == len(paths) and undeletable:
        with contextlib.suppress(OSError):  # only marks changed: a hint, not the rows
            _fsync_dir(directory)
    elif len(undeletable) < len(paths):
        try:
            _fsync_dir(directory)
        except OSError as exc:
            raise SpoolError(
                f"spool folder {directory} cannot be synced: {exc.strerror}; the rows are "
                "stored, and any segment back after a crash is skipped"
            ) from exc
    return undeletable


def _mark_stored(segment: Path) -> None:
    """Leave a stored mark beside ``segment``; a folder that refuses it (read-only, no
    space) leaves the segment counted as waiting by other processes, no worse."""
    with contextlib.suppress(OSError):
        os.close(os.open(stored_mark(segment), os.O_WRONLY | os.O_CREAT, 0o644))


def _drop_orphan_marks(directory: Path) -> None:
    """Remove the stored marks whose segment is gone (deleted after all, or a crash
    between the two deletes), so that no new segment of that name counts as stored."""
    for seq in _marked_seqs(directory):
        segment = directory / _segment_name(seq)
        if not segment.exists():
            with contextlib.suppress(OSError):
                stored_mark(segment).unlink()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Append:
    __slots__ = ("future", "line", "loop")

    def __init__(self, line: bytes, loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]):
        self.line = line
        self.loop = loop
        self.future = future


class Spool:
    """Owner of a spool directory: appends (group-committed) and segment rotation."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._queue: queue.Queue[_Append | None] = queue.Queue()
        self._file_lock = threading.Lock()  # guards the active segment file
        self._active: Segment | None = None
        self._fh: int | None = None
        self._lock_fd: int | None = None
        self._thread: threading.Thread | None = None
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
        self._take_folder()
        _drop_orphan_marks(self.directory)
        existing = _named_segments(self.directory)  # odd entries too: their names are taken
        for segment in existing:
            if not segment.path.is_file():
                log.error("spool entry %s is not a regular file; left alone", segment.path)
        # a mark that could not be dropped takes its name too
        taken = [s.seq for s in existing] + _marked_seqs(self.directory)
        self._start_segment(max(taken) + 1 if taken else 1)
        self._thread = threading.Thread(target=self._writer, name="spool-writer", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the writer after it has written everything queued so far."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None
        with self._file_lock:
            if self._fh is not None and self._active is not None:
                try:
                    self._relink_if_removed()
                except OSError as exc:
                    lines = _complete_lines(self._fh).count(b"\n")
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
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _take_folder(self) -> None:
        """Create the directory if need be and take its lock (again, after the folder
        was removed under the daemon: a new folder has a new lock file)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        lock_path = self.directory / _LOCK_NAME
        if self._lock_fd is not None and _same_file(self._lock_fd, lock_path):
            return  # ours already (taken before a later step failed)
        lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            raise SpoolLocked(f"spool {self.directory} is in use by another daemon") from None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
        self._lock_fd = lock_fd

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
            self._take_folder()
        except FileExistsError as exc:
            raise NotADirectoryError(
                exc.errno, "spool folder was replaced by a file", str(self.directory)
            ) from exc
        taken = [s.seq for s in _named_segments(self.directory)] + [self._active.seq]
        self._start_segment(max(taken) + 1)
        self._removed_said = False

    def _start_segment(self, seq: int) -> None:
        """Make segment ``seq`` the active one. The new file is created (and made durable)
        before the old one is closed, so a directory that refuses new files (no inodes,
        a full disk, ``chattr +i``) leaves the current segment active, never none. When
        the active segment was deleted while open, its complete lines move to the new one."""
        path = self.directory / _segment_name(seq)
        # read too: a segment deleted while open is read back through this descriptor
        fh = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        try:
            if self._fh is not None and os.fstat(self._fh).st_nlink == 0:
                _write_all(fh, _complete_lines(self._fh))
                os.fsync(fh)
            _fsync_dir(self.directory)
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
        if self._thread is None:
            raise SpoolError("spool is not open")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._queue.put(_Append((line + "\n").encode("utf-8"), loop, future))
        await asyncio.shield(future)

    def _writer(self) -> None:
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
            with self._file_lock:
                if self._fh is None:
                    raise SpoolError("spool is closed")
                self._write_durably(b"".join(a.line for a in batch))
                self.appended += len(batch)
        except BaseException as exc:  # reported to every waiting appender
            error = exc
            log.debug("spool write failed: %s", exc)
        by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
        for item in batch:
            by_loop.setdefault(item.loop, []).append(item.future)
        for loop, futures in by_loop.items():  # one wake-up per batch, not per line
            loop.call_soon_threadsafe(_settle, futures, error)

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
            _write_all(self._fh, data)
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


def _same_file(fd: int, path: Path) -> bool:
    try:
        there = path.stat()
    except OSError:
        return False
    here = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _write_all(fh: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fh, view)
        view = view[written:]


def _complete_lines(fh: int) -> bytes:
    """The bytes of an open segment up to its last newline (a torn tail is left out)."""
    size = os.fstat(fh).st_size
    data = os.pread(fh, size, 0)
    return data[: data.rfind(b"\n") + 1]


def _settle(futures: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for future in futures:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(SpoolError(f"spool write failed: {error}"))
