"""One daemon per spool folder: an ``flock`` on ``<folder>/.lock``, taken again when the
folder was removed under the daemon (a new folder has a new lock file).

The holder writes its PID into the lock file, so that a second daemon started on the
same folder by mistake is refused with a line naming the lock and the process holding
it, the one an operator has to look at. The PID is a hint: the ``flock`` alone decides.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from pipeline.daemon.spool.disk import same_file
from pipeline.daemon.spool.errors import SpoolLocked

__all__ = ["FolderLock"]

_LOCK_NAME = ".lock"


class FolderLock:
    """The lock of one spool folder, held by this process from ``take`` to ``release``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._fd: int | None = None

    def take(self) -> None:
        """Create the directory if need be and take its lock (again, after the folder
        was removed under the daemon: a new folder has a new lock file)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        lock_path = self.directory / _LOCK_NAME
        if self._fd is not None and same_file(self._fd, lock_path):
            return  # ours already (taken before a later step failed)
        lock_fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(lock_fd)
            os.close(lock_fd)
            raise SpoolLocked(
                f"spool {self.directory} is in use by another daemon:"
                f" {lock_path} is held by {holder}"
            ) from None
        with contextlib.suppress(OSError):  # a full disk keeps the lock, not the hint
            os.ftruncate(lock_fd, 0)
            os.pwrite(lock_fd, f"{os.getpid()}\n".encode(), 0)
        if self._fd is not None:
            os.close(self._fd)
        self._fd = lock_fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _holder(lock_fd: int) -> str:
    """Who holds the lock, as its file says (an older nerfwatch wrote no PID)."""
    try:
        text = os.pread(lock_fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"pid {text}" if text.isdigit() else "another process (its PID not recorded)"
