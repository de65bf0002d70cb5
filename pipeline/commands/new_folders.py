"""Folders a command may create, and their removal when the command fails.

A writing command creates the warehouse's folder before DuckDB (or a lake's catalog)
opens anything; when the open then fails (a catalog out of reach, a name too long), the
command used to exit with an empty folder the user never asked for. ``nerfwatch`` notes,
before the command runs, which folders of the paths it was given are missing, and on a
failed exit removes those of them that are still empty. A folder that existed before is
never noted, so never removed; one holding anything is kept.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["forget", "note_folder", "note_parent", "remove_empty_new_folders"]

_missing: set[Path] = set()  # absolute folders that did not exist when noted


def note_parent(file: Path) -> None:
    """Note the missing folders above ``file`` (a warehouse, a catalog)."""
    note_folder(file.parent)


def note_folder(folder: Path) -> None:
    """Note ``folder`` and each of its missing parents, up to the first that exists."""
    current = Path(os.path.abspath(folder))
    try:
        while not current.exists() and current != current.parent:
            _missing.add(current)
            current = current.parent
    except OSError:
        return  # a name too long to look up: nothing can be created there either


def remove_empty_new_folders() -> None:
    """Remove the noted folders that are empty now, deepest first, then forget them all.
    ``rmdir`` removes only an empty folder, so anything written in one keeps it."""
    for folder in sorted(_missing, key=lambda path: len(path.parts), reverse=True):
        with contextlib.suppress(OSError):  # not empty, never created, or not ours
            folder.rmdir()
    forget()


def forget() -> None:
    """Drop what was noted (a command that succeeded keeps what it created)."""
    _missing.clear()
