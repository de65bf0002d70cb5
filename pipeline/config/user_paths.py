"""Paths as a user types them: ``~`` for the home folder, and the stray space a pasted
name carries. One place, so every path option and every path key in the config agree."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["HomeUnknown", "expand_home", "name_too_long", "stray_space"]

_BLANKS = {" ": "a space", "\t": "a tab", "\n": "a line break", "\r": "a carriage return"}


class HomeUnknown(ValueError):
    """``~`` was given but this process knows no home folder (no HOME, no passwd entry)."""


def expand_home(value: str | Path) -> Path:
    """``value`` with a leading ``~`` or ``~user`` replaced by that home folder.

    A shell expands ``~`` only at the start of a word: ``--db=~/x``, a quoted ``'~/x'`` and
    a config file's ``"~/x"`` arrive as written, and taken literally a writing command made
    a folder named ``~`` in the working folder. A relative path stays relative.
    """
    path = Path(value)
    try:
        return path.expanduser()
    except RuntimeError:
        raise HomeUnknown(f"{value}: cannot expand ~ (no home folder is known)") from None


def name_too_long(path: Path) -> str:
    """``"the name ... is longer than the file system's N bytes"`` for the first part of
    ``path`` its file system cannot hold, else ``""``.

    Checked before anything is created: under a missing folder the system reports the
    missing folder first, so a writer made the folder and then failed on the name.
    """
    existing = Path(os.path.abspath(path))
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    try:
        limit = os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError):
        return ""  # no limit known here: the open says what is wrong
    for part in Path(path).parts:
        size = len(os.fsencode(part))
        if size > limit:
            shown = part if len(part) <= 24 else f"{part[:20]}..."
            return f"the name {shown!r} is {size} bytes, longer than the file system's {limit}"
    return ""


def stray_space(path: str | Path) -> str:
    """Why ``path`` may not be found though it looks right: ``"the name ends with a space"``
    (or begins with one, or a folder's name does), else ``""``.

    ``'nerfwatch.toml '`` pasted with its space was only "file not found", and the space is
    invisible in that message.
    """
    parts = Path(path).parts
    for index, part in reversed(list(enumerate(parts))):
        whose = "the name" if index == len(parts) - 1 else f"the folder name {part!r}"
        if part[-1:] in _BLANKS:
            return f"{whose} ends with {_BLANKS[part[-1]]}"
        if part[:1] in _BLANKS:
            return f"{whose} begins with {_BLANKS[part[0]]}"
    return ""
