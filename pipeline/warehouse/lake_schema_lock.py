"""One writer at a time changes a lake's schema: a lock every site can see.

Writers that start on a new lake at once all create its catalog and apply the same
migrations. The catalog lets one commit win and fails the others, and each loser tries
again; with four writers and sixteen migrations on a loaded machine that took longer than
any deadline (SQLite answers a stale writer "database is locked" at once, whatever its
busy timeout; DuckLake once failed a loser's commit with 'Table entry "probe_results" does
not have any columns'). Under this lock the first writer does all the work and the others
find it done. The lock lives where every writer of the lake can see it:

- PostgreSQL catalog: a session advisory lock in the catalog's database, taken through
  its own DuckDB connection and released when that connection closes (also when the
  process dies: PostgreSQL drops a lost session's locks).
- SQLite catalog (one machine): ``flock`` on a file beside the catalog.
"""

from __future__ import annotations

import contextlib
import fcntl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from pipeline.warehouse.errors import LakeUnreachable, WarehouseError, cannot_open, make_folder
from pipeline.warehouse.extensions import load_extension, offline
from pipeline.warehouse.lake import Lake, check_catalog

__all__ = ["schema_lock"]

# pg_advisory_lock's key: any constant; advisory locks are per database, so per lake.
_ADVISORY_KEY = 0x6E77_5343_4845  # "nwSCHE"
_POLL_S = 0.05


@contextmanager
def schema_lock(lake: Lake, wait_s: float) -> Iterator[None]:
    """Hold ``lake``'s schema lock for the block; WarehouseError naming the lake if another
    writer holds it for longer than ``wait_s``, LakeUnreachable if the catalog is."""
    kind, target = check_catalog(lake.catalog)
    lock = _file_lock(Path(target), wait_s) if kind == "sqlite" else _advisory(target, wait_s)
    try:
        with lock:
            yield
    except _Held:
        raise WarehouseError(
            f"{lake.where}: another writer has been changing the schema for {wait_s:g} s"
        ) from None
    except duckdb.Error as exc:  # the catalog out of reach, as ``LakeStore.connect`` says
        raise LakeUnreachable(str(cannot_open(lake.where, lake.scrub(exc)))) from exc


class _Held(Exception):
    """Another writer held the lock past the deadline."""


@contextmanager
def _file_lock(catalog: Path, wait_s: float) -> Iterator[None]:
    path = catalog.with_name(catalog.name + ".schema-lock")
    make_folder(path.parent)  # a new lake's: the attach would make it, after the lock
    try:
        handle = path.open("a")
    except OSError as exc:
        reason = exc.strerror or exc
        raise WarehouseError(f"{path}: cannot open the lake's schema lock: {reason}") from None
    with handle:
        _poll(lambda: _try_flock(handle.fileno()), wait_s)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _try_flock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextmanager
def _advisory(conninfo: str, wait_s: float) -> Iterator[None]:
    con = offline(duckdb.connect(":memory:"))
    try:
        load_extension(con, "postgres_scanner")
        quoted = conninfo.replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS nw_lock (TYPE postgres)")
        take = (
            "SELECT ok FROM postgres_query('nw_lock', "
            f"'SELECT pg_try_advisory_lock({_ADVISORY_KEY}) AS ok')"
        )
        _poll(lambda: (con.execute(take).fetchone() or (False,))[0] is True, wait_s)
        yield
    finally:
        with contextlib.suppress(duckdb.Error):
            con.close()  # closes its PostgreSQL session, which drops the lock


def _poll(attempt: Callable[[], bool], wait_s: float) -> None:
    """Try ``attempt`` until it succeeds, or raise _Held after ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while not attempt():
        if time.monotonic() >= deadline:
            raise _Held
        time.sleep(_POLL_S)
