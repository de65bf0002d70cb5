"""Files we write for a reader who may look at any moment: whole or not at all.

A report a web server is serving, a query result another program is waiting for, a drift
baseline the next run loads: each is written to a temporary file beside its target and
renamed over it, so a full disk or a crash leaves the old file (or none), never half of a
new one, and no temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["replacing", "write_text_atomically"]


@contextmanager
def replacing(path: Path, *, make_folder: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block ends without an error it
    becomes ``path`` (readable by all, like a file a user creates), else it is removed.

    ``make_folder`` creates the missing folders first; without it a missing folder is the
    caller's ``FileNotFoundError``, as it would be for a plain ``open``."""
    if make_folder:
        path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        raise IsADirectoryError(21, "Is a directory", str(path))
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    temporary = Path(name)
    try:
        yield temporary
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_text_atomically(path: Path, text: str, *, make_folder: bool = False) -> None:
    """``path.write_text(text)`` in UTF-8, whole or not at all (see ``replacing``)."""
    with replacing(path, make_folder=make_folder) as temporary:
        temporary.write_text(text, encoding="utf-8")
