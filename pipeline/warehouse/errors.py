"""The warehouse's errors, worded for the user, and the wording of a file that cannot open.

Every backend raises these and only these, so callers never see which engine said no.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

__all__ = [
    "LakeUnreachable",
    "NewerFile",
    "SqlError",
    "WarehouseBusy",
    "WarehouseError",
    "cannot_open",
    "one_line",
]

# DuckDB 1.5 reading a file written by a newer DuckDB (2.0 writes storage version 999).
_NEWER_FILE = re.compile(
    r"database file with version number (?P<found>\d+), "
    r"but we can only read versions between (?P<low>\d+) and (?P<high>\d+)"
)


class WarehouseError(Exception):
    """A problem with the warehouse or its contents, worded for the user."""


class SqlError(WarehouseError):
    """The SQL itself is wrong (syntax, unknown column...): the user's input, not the data."""


class LakeUnreachable(WarehouseError):
    """A lake's catalog failed under an attached store (removed, replaced, its server
    down); ``__cause__`` is DuckDB's error, to tell a busy catalog (worth another try)."""


class NewerFile(WarehouseError):
    """The file is in a newer DuckDB's storage format: this DuckDB can neither read nor
    write it, now or after any wait."""


class WarehouseBusy(WarehouseError):
    """Another process holds the DuckDB file longer than we are willing to wait."""


def make_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) for the warehouse's files, or say in one line why
    not (a file where a folder should be, no permission), before anything is written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WarehouseError(
            f"{folder}: cannot create the warehouse's folder: {exc.strerror or exc}"
        ) from None


def one_line(text: object) -> str:
    """An engine's message (DuckDB's often span lines: hints, S3 replies) as one line."""
    return " ".join(str(text).split())


def cannot_open(where: str | Path, exc: object) -> WarehouseError:
    """One line saying why ``where`` cannot be opened (``exc``: the engine's error, or its
    message already scrubbed of secrets) and, if we know, what to do.

    A file written by DuckDB 2.x cannot be read by the DuckDB 1.5 nerfwatch pins (the
    extension wheels the lake needs exist only for 1.5); DuckDB 2.x can copy it back into
    the 1.5 storage format, so the message says how.
    """
    newer = _NEWER_FILE.search(str(exc))
    if newer is not None:
        return NewerFile(
            f"warehouse {where} was written by a newer DuckDB (storage version "
            f"{newer['found']}; DuckDB {duckdb.__version__} reads {newer['low']} to "
            f"{newer['high']}). Copy it to the 1.5 format with DuckDB 2.x: ATTACH "
            f"'{where}' AS old (READ_ONLY); ATTACH 'copy.duckdb' AS new "
            "(STORAGE_VERSION 'v1.5.0'); COPY FROM DATABASE old TO new; then use copy.duckdb"
        )
    return WarehouseError(f"cannot open warehouse {where}: {one_line(exc)}")
