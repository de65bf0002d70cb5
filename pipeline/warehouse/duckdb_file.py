"""The DuckDB warehouse: the only module that opens the database file.

DuckDB lets one process write *or* many processes read a file, never both. So nothing
here keeps the file open: every operation opens a connection, does its work in a short
transaction and closes it. A lock held by another process is retried briefly and then
reported as ``WarehouseBusy`` naming the holder, never as a raw DuckDB error.

The schema (migrations, views, bundled reference data) is ``pipeline.warehouse.migrations``; it is
applied on the first write connection of each ``Warehouse`` object.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from pipeline.warehouse.errors import SqlError, WarehouseBusy, WarehouseError, cannot_open
from pipeline.warehouse.extensions import offline
from pipeline.warehouse.migrations import (
    Migration,
    SchemaError,
    apply_migrations,
    refresh_bundled,
    refresh_views,
)

__all__ = [
    "SqlError",
    "Warehouse",
    "WarehouseBusy",
    "WarehouseError",
    "insert_new_sql",
]

_LOCK_PATTERNS = ("Could not set lock", "Conflicting lock")
_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.+?) \(PID (?P<pid>\d+)\)")
_ALIAS = "warehouse"  # the file's catalog name inside a resident instance
_INCOMING = "SELECT * FROM _incoming"  # a frame being inserted, registered under this name


# Tables that grow for ever, and the time every copy of one of their rows carries: the key
# check only needs the stored rows from the batch's earliest time on.
_KEY_SINCE = {
    "probe_results": "started_at",
    "daemon_events": "occurred_at",
    "alert_events": "occurred_at",
}


def insert_new_sql(table: str, source: str, *, key: str) -> str:
    """``INSERT`` (by column name) of the rows of the query ``source`` whose ``key`` is not
    in ``table`` yet, so replaying a batch adds nothing.

    The check is an anti-join, not ``ON CONFLICT``: after each attach (the flush process
    attaches per flush) DuckDB's ``ON CONFLICT`` costs in proportion to the stored keys,
    so every flush paid for the whole history: 500 rows took 75 ms of CPU with 2 M rows
    stored, 18 ms this way. For ``_KEY_SINCE`` tables only rows at or after the batch's
    earliest time are compared; zone maps skip older row groups (about 1.5 ms for 500
    rows against 10 M). The primary key still stands guard: a duplicate that got past the
    check fails the insert, it is never stored twice. Duplicates inside ``source`` are
    dropped.
    """
    existing = f"SELECT {key} FROM {table}"
    since = _KEY_SINCE.get(table)
    if since is not None:
        existing += f" WHERE {since} >= (SELECT min({since}) FROM _new)"
    return (
        f"INSERT INTO {table} BY NAME "
        f"WITH _new AS MATERIALIZED (SELECT DISTINCT ON ({key}) * FROM ({source})) "
        f"SELECT _new.* FROM _new ANTI JOIN ({existing}) _old USING ({key})"
    )


def _is_lock_error(exc: BaseException) -> bool:
    return any(pattern in str(exc) for pattern in _LOCK_PATTERNS)


def _busy_message(path: Path, exc: BaseException, waited_s: float) -> str:
    match = _HOLDER.search(str(exc))
    holder = f"process {match['pid']} ({match['exe']})" if match else "another process"
    return (
        f"warehouse {path} is locked by {holder}; waited {waited_s:.1f}s. "
        "Stop that process or retry when it is done."
    )


class Warehouse:
    """A DuckDB file plus the project's schema, opened briefly per operation."""

    def __init__(
        self,
        path: str | Path,
        *,
        lock_wait_s: float = 10.0,
        migrations: Sequence[Migration] | None = None,
        resident: bool = False,
    ) -> None:
        """``resident``: keep one in-memory DuckDB instance for writes and ATTACH the file
        to it per operation (a frequent writer: ~2 ms instead of ~12 ms to open). The file
        is still held only during the operation; DETACH checkpoints and releases it."""
        self.path = Path(path)
        self.lock_wait_s = lock_wait_s
        self._migrations = migrations
        self._migrated = False
        self.resident = resident
        self._instance: duckdb.DuckDBPyConnection | None = None
        self._attach_lock = threading.RLock()
        self._attached = 0

    # -- connections -----------------------------------------------------------------
    def _open(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        """Open the file, retrying while another process holds the lock."""

        def opened() -> duckdb.DuckDBPyConnection:
            con = offline(self._connect(read_only))
            # no progress bar: it would write to the stdout of whoever called us
            con.execute("SET enable_progress_bar = false")
            return con

        return self._retry_lock(opened)

    def _retry_lock(
        self, attempt: Callable[[], duckdb.DuckDBPyConnection]
    ) -> duckdb.DuckDBPyConnection:
        """Run ``attempt`` until it gets the file lock or ``lock_wait_s`` runs out."""
        deadline = time.monotonic() + self.lock_wait_s
        delay = 0.01
        started = time.monotonic()
        while True:
            try:
                return attempt()
            except duckdb.Error as exc:
                if not _is_lock_error(exc):
                    raise cannot_open(self.path, exc) from exc
                if time.monotonic() >= deadline:
                    waited = time.monotonic() - started
                    raise WarehouseBusy(_busy_message(self.path, exc, waited)) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.25)

    def _connect(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        """One connection. Inside one process DuckDB refuses a read-only connection while a
        read-write one to the same file is open (the demo reads while its daemon flushes);
        the process already owns the file then, so reading through read-write is safe."""
        try:
            return duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.ConnectionException as exc:
            if read_only and "different configuration" in str(exc):
                return duckdb.connect(str(self.path), read_only=False)
            raise

    @contextmanager
    def connect(self, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived connection; the schema is brought up to date first."""
        if read_only and not self.path.exists():
            self.migrate()
        if not read_only and not self._migrated:
            self.migrate()
        if self.resident and not read_only:
            with self._attach_lock:  # one thread at a time; nested calls share the attach
                con = self._attach() if self._attached == 0 else self._instance
                assert con is not None
                self._attached += 1
                failed = False
                try:
                    yield con
                except BaseException:
                    failed = True
                    raise
                finally:
                    self._attached -= 1
                    if self._attached == 0:
                        self._detach(rollback=failed)
            return
        con = self._open(read_only)
        try:
            yield con
        finally:
            con.close()

    def _attach(self) -> duckdb.DuckDBPyConnection:
        if self._instance is None:
            self._instance = offline(duckdb.connect(":memory:"))
            self._instance.execute("SET enable_progress_bar = false")
        instance = self._instance
        quoted = str(self.path).replace("'", "''")

        def attached() -> duckdb.DuckDBPyConnection:
            instance.execute(f"ATTACH '{quoted}' AS {_ALIAS}")
            instance.execute(f"USE {_ALIAS}")
            return instance

        try:
            return self._retry_lock(attached)
        except WarehouseError:
            self.close()
            raise

    def _detach(self, *, rollback: bool) -> None:
        """Checkpoint and release the file; if that fails, drop the instance (also releases)."""
        if self._instance is None:
            return
        try:
            if rollback:  # a failed caller may have left a transaction open
                with contextlib.suppress(duckdb.TransactionException):
                    self._instance.execute("ROLLBACK")
            self._instance.execute("USE memory")
            self._instance.execute(f"DETACH {_ALIAS}")
        except duckdb.Error as exc:
            self.close()
            raise WarehouseError(f"closing warehouse {self.path} failed: {exc}") from exc

    def close(self) -> None:
        """Drop the resident instance (a later write starts a new one)."""
        with self._attach_lock:
            if self._instance is not None:
                instance, self._instance = self._instance, None
                with contextlib.suppress(duckdb.Error):
                    instance.close()

    # -- schema ------------------------------------------------------------------------
    def migrate(self) -> list[str]:
        """Apply pending migrations and refresh changed views; return what was applied."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = self._open(read_only=False)
        try:
            applied = apply_migrations(con, self._migrations)
            refresh_views(con)
            refresh_bundled(con)
        except SchemaError as exc:
            raise WarehouseError(str(exc)) from exc
        finally:
            con.close()
        self._migrated = True
        return applied

    # -- writes ------------------------------------------------------------------------
    def insert_rows(self, table: str, rows: Sequence[Mapping[str, Any]], *, key: str) -> int:
        """Insert dict rows by column name; rows whose ``key`` exists are skipped."""
        if not rows:
            return 0
        frame = pl.DataFrame(list(rows), infer_schema_length=None)
        return self.insert_frame(table, frame, key=key)

    def insert_frame(self, table: str, frame: pl.DataFrame, *, key: str | None = None) -> int:
        """Insert a polars frame by column name in one transaction; return rows added.

        With ``key``, the insert is idempotent: duplicates inside the frame and rows
        already present are skipped, so replaying a batch is harmless.
        """
        if key is None:
            return self._insert(table, frame, [], f"INSERT INTO {table} BY NAME {_INCOMING}")
        frame = frame.unique(subset=[key], keep="first", maintain_order=True)
        return self._insert(table, frame, [], insert_new_sql(table, _INCOMING, key=key))

    def replace_rows(
        self, table: str, frame: pl.DataFrame, *, key: list[str], replace_where: str
    ) -> int:
        """Insert ``frame``; existing rows with the same key are replaced only if they match
        ``replace_where`` (others are kept and the incoming row skipped). One transaction.
        Returns the rows written (replacements included)."""
        cols = ", ".join(key)
        delete = (
            f"DELETE FROM {table} WHERE {replace_where} AND ({cols}) IN "
            f"(SELECT ({cols}) FROM _incoming)"
        )
        insert = f"INSERT INTO {table} BY NAME {_INCOMING} ON CONFLICT DO NOTHING"
        return self._insert(table, frame, [delete], insert)

    def _insert(self, table: str, frame: pl.DataFrame, before: list[str], insert: str) -> int:
        """Register ``frame`` as ``_incoming``, run ``before`` statements, then ``insert``,
        in one transaction."""
        if frame.height == 0:
            return 0
        with self.connect() as con:
            con.register("_incoming", frame)
            try:
                con.execute("BEGIN TRANSACTION")
                for statement in before:
                    con.execute(statement).fetchall()
                rows = con.execute(insert).fetchall()
                con.execute("COMMIT")
            except duckdb.Error as exc:
                con.execute("ROLLBACK")
                raise WarehouseError(f"insert into {table} failed: {exc}") from exc
            finally:
                con.unregister("_incoming")
            return int(rows[0][0]) if rows else 0

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> None:
        """Run one write statement (or a script without parameters) in a transaction."""
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                statements = con.extract_statements(sql)
                for i, statement in enumerate(statements):
                    last = i == len(statements) - 1
                    con.execute(statement, params if (last and params) else None)
                con.execute("COMMIT")
            except duckdb.Error as exc:
                con.execute("ROLLBACK")
                raise WarehouseError(str(exc)) from exc

    # -- reads -------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] | None = None) -> pl.DataFrame:
        """Run SQL on a read-only connection and return a polars frame.

        A script may hold several statements; parameters bind to the last one, whose
        result is returned.
        """
        with self.connect(read_only=True) as con:
            try:
                statements = con.extract_statements(sql)
                if not statements:
                    raise SqlError("no SQL statement given")
                for statement in statements[:-1]:
                    con.execute(statement)
                relation = con.sql(statements[-1].query, params=params)
                return relation.pl() if relation is not None else pl.DataFrame()
            except duckdb.Error as exc:
                raise SqlError(" ".join(str(exc).split())) from exc
