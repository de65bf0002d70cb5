"""Real file-system conditions for tests: a folder nobody may write to.

As root, permission bits do not stop writes, so a read-only tmpfs is mounted instead.
Where that is impossible the test is skipped with the reason, except in CI (``CI=true``),
where a skip would hide a check that never ran: there it fails.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["unavailable", "unwritable_folder"]


def unavailable(reason: str) -> None:
    """Skip locally; fail in CI, where every real-system test must run."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


@contextmanager
def unwritable_folder(parent: Path) -> Iterator[Path]:
    """A folder under ``parent`` that refuses new entries, for root too."""
    folder = parent / "unwritable"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o500)
        try:
            yield folder
        finally:
            folder.chmod(0o700)
        return
    mount = ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)]
    done = subprocess.run(mount, capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        unavailable(f"cannot mount a read-only tmpfs: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], timeout=30, check=False)
