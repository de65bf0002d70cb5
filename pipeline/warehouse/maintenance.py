"""Keeping a lake compact: flush inlined rows, merge small files, expire old snapshots.

Every small commit (a daemon's flush) adds inlined rows to the catalog or a small Parquet
file; left alone, reads slow down and the catalog grows. ``maintain`` runs DuckLake's own
maintenance, designed around its open upstream issues:

- Only one maintenance runs at a time, across sites: a lease row in
  ``_maintenance_lease`` taken in one lake transaction (read, delete, insert). Two sites
  taking it at once both delete the same row, so the catalog refuses the second commit;
  a lease past its time (a crashed holder) is taken over, and so is at once the lease of
  a holder on this host whose process is gone (a run killed mid-way).
- A flush of inlined data racing an insert can duplicate rows (upstream): after the
  flush, every keyed table is checked by its key and any duplicate is reduced to one
  copy in one transaction, so the race costs a repair, never a double count.
- Compaction holds the catalog transaction open and can make a writer's commit fail;
  writers retry such commits until their lock wait runs out (``Warehouse._insert``; the
  inserts are idempotent), so a writer is delayed, not harmed.
- Snapshots are expired and their files deleted only after ``keep`` (default a week), so
  a reader's snapshot taken before maintenance stays readable.

A single DuckDB file needs none of this (it compacts at its checkpoints).
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from datetime import timedelta

import duckdb

from pipeline.warehouse.errors import WarehouseError
from pipeline.warehouse.transactions import rollback
from pipeline.warehouse.transfer import table_keys
from pipeline.warehouse.warehouse import Warehouse

__all__ = ["Maintenance", "maintain", "this_process"]

_LEASE = "_maintenance_lease"
_LAKE = "warehouse"  # the lake's catalog name on the store's connections


@dataclass(frozen=True, slots=True)
class Maintenance:
    """What one run did, or why it did nothing (``skipped``)."""

    skipped: str | None = None
    duplicates_removed: int = 0
    steps: tuple[str, ...] = ()


def maintain(
    warehouse: Warehouse,
    *,
    holder: str,
    lease: timedelta = timedelta(hours=1),
    keep: timedelta = timedelta(days=7),
) -> Maintenance:
    """Compact ``warehouse`` if it is a lake and no other maintenance holds the lease."""
    if warehouse.lake is None:
        return Maintenance(skipped="a DuckDB file compacts itself at checkpoints")
    try:
        return _maintain(warehouse, holder=holder, lease=lease, keep=keep)
    except duckdb.Error as exc:  # a catalog or data file out of reach between the steps
        failed = f"maintenance of {warehouse.where} failed"
        raise WarehouseError(f"{failed}: {warehouse.scrub(exc)}") from exc


def _maintain(
    warehouse: Warehouse, *, holder: str, lease: timedelta, keep: timedelta
) -> Maintenance:
    """``maintain`` on a lake; DuckDB's own errors are left to the caller to word."""
    other = _take_lease(warehouse, holder, lease)
    if other is not None:
        return Maintenance(skipped=f"another maintenance holds the lease ({other})")
    try:
        steps = [_call(warehouse, f"ducklake_flush_inlined_data('{_LAKE}')", "flush inlined")]
        removed = sum(_deduplicate(warehouse, table, key) for table, key in _keyed().items())
        older = f"now() - INTERVAL '{int(keep.total_seconds())} seconds'"
        steps += [
            _call(warehouse, f"ducklake_merge_adjacent_files('{_LAKE}')", "merge files"),
            _call(
                warehouse,
                f"ducklake_expire_snapshots('{_LAKE}', older_than => {older})",
                "expire snapshots",
            ),
            _call(
                warehouse,
                f"ducklake_cleanup_old_files('{_LAKE}', older_than => {older})",
                "delete expired files",
            ),
        ]
        return Maintenance(duplicates_removed=removed, steps=tuple(steps))
    finally:
        _release_lease(warehouse, holder)


def _release_lease(warehouse: Warehouse, holder: str) -> None:
    """Give the lease back. Best effort: when the lake is out of reach, the error of the
    step that failed is the one to report, and the lease then runs out by itself."""
    with contextlib.suppress(duckdb.Error, WarehouseError):
        warehouse.execute(f"DELETE FROM {_LEASE} WHERE holder = ?", [holder])


def _take_lease(warehouse: Warehouse, holder: str, lease: timedelta) -> str | None:
    """Take the lease; the other holder's description if it is taken."""
    warehouse.execute(f"CREATE TABLE IF NOT EXISTS {_LEASE} (holder VARCHAR, until TIMESTAMPTZ)")
    with warehouse.connect() as con:
        con.execute("BEGIN TRANSACTION")
        held = con.execute(
            "SELECT holder, strftime(until AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S UTC')"
            f" FROM {_LEASE} WHERE until > now() AND holder <> ?",
            [holder],
        ).fetchall()
        held = [row for row in held if not _crashed_here(row[0])]
        if held:
            rollback(con)
            return f"{held[0][0]} until {held[0][1]}"
        con.execute(f"DELETE FROM {_LEASE}")
        seconds = int(lease.total_seconds())
        con.execute(
            f"INSERT INTO {_LEASE} VALUES (?, now() + INTERVAL '{seconds} seconds')", [holder]
        )
        try:
            con.execute("COMMIT")
        except duckdb.Error as exc:  # another site deleted the same row first
            rollback(con)
            return f"taken at the same moment: {warehouse.scrub(exc)}"
    return None


def this_process() -> str:
    """The lease holder's name for this process, ``host:pid``, which ``_crashed_here``
    reads back."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _crashed_here(holder: str) -> bool:
    """Whether ``holder`` (``host:pid``, as ``this_process`` names a run)
    ran on this host and its process is gone: a run killed mid-way leaves its lease
    behind, and the next run here need not wait the rest of the hour for it."""
    host, sep, pid = holder.rpartition(":")
    if not sep or host != socket.gethostname() or not pid.isdigit() or int(pid) <= 0:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, under another user
        return False
    return False


def _call(warehouse: Warehouse, function: str, step: str) -> str:
    with warehouse.connect() as con:
        try:
            done = con.execute(f"SELECT count(*) FROM {function}").fetchall()[0][0]
        except duckdb.Error as exc:
            failed = f"maintenance step {step!r} failed"
            raise WarehouseError(f"{failed}: {warehouse.scrub(exc)}") from exc
    return f"{step}: {done} result rows"


def _keyed() -> dict[str, list[str]]:
    """Tables whose rows are unique by a key (analysis results are per run, not keyed)."""
    return {table: key for table, key in table_keys().items() if key != ["analysis_id"]}


def _deduplicate(warehouse: Warehouse, table: str, key: list[str]) -> int:
    """Reduce rows sharing a key to one copy, in one transaction; rows removed."""
    cols = ", ".join(key)
    dups = f"SELECT {cols} FROM {table} GROUP BY ALL HAVING count(*) > 1"
    with warehouse.connect() as con:
        if not con.execute(f"SELECT count(*) FROM ({dups})").fetchall()[0][0]:
            return 0
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(
                f"CREATE TEMP TABLE _keep AS SELECT DISTINCT ON ({cols}) * FROM {table}"
                f" SEMI JOIN ({dups}) _d USING ({cols})"
            )
            deleted = con.execute(
                f"DELETE FROM {table} WHERE ({cols}) IN (SELECT ({cols}) FROM _keep)"
            ).fetchall()[0][0]
            kept = con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _keep").fetchall()
            con.execute("DROP TABLE _keep")
            con.execute("COMMIT")
        except duckdb.Error as exc:
            rollback(con)
            raise WarehouseError(
                f"removing duplicates from {table} failed: {warehouse.scrub(exc)}"
            ) from exc
    return int(deleted) - int(kept[0][0])
