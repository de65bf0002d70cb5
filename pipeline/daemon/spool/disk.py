"""Low-level file-descriptor steps the spool's durability rests on."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["complete_lines", "fsync_dir", "same_file", "write_all"]


def fsync_dir(directory: Path) -> None:
    """Make the folder's entries (new or deleted files) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def same_file(fd: int, path: Path) -> bool:
    """Whether ``path`` still names the file open as ``fd``."""
    try:
        there = path.stat()
    except OSError:
        return False
    here = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def write_all(fh: int, data: bytes) -> None:
    """``os.write`` until every byte is written (a write may be short)."""
    view = memoryview(data)
    while view:
        written = os.write(fh, view)
        view = view[written:]


def complete_lines(fh: int) -> bytes:
    """The bytes of an open segment up to its last newline (a torn tail is left out)."""
    size = os.fstat(fh).st_size
    data = os.pread(fh, size, 0)
    return data[: data.rfind(b"\n") + 1]
