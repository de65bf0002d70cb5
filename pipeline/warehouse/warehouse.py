"""The warehouse's public face: one ``Warehouse`` whatever holds the data.

Two backends stand behind it, chosen by what it is given: a path is the single DuckDB
file (``duckdb_file``, the embedded default), a ``Lake`` is a DuckLake warehouse
(``ducklake``: a SQLite or PostgreSQL catalog, Parquet on disk or S3). Callers use the
same methods and get the same errors; the schema (``migrations``) is applied through the
backend's ``translate``, and every idempotent insert is the same anti-join
(``inserts``), which is what keeps a lake, which has no keys, free of duplicates.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

import duckdb
import polars as pl

from pipeline.warehouse.duckdb_file import FileStore
from pipeline.warehouse.ducklake import LakeStore
from pipeline.warehouse.errors import LakeUnreachable, SqlError, WarehouseError, one_line
from pipeline.warehouse.inserts import insert_new_sql
from pipeline.warehouse.lake import Lake
from pipeline.warehouse.migrations import (
    Migration,
    SchemaError,
    apply_migrations,
    load_migrations,
    refresh_bundled,
    refresh_views,
)
from pipeline.warehouse.row_checks import checked_where
from pipeline.warehouse.transactions import rollback

__all__ = ["Warehouse"]

T = TypeVar("T")

log = logging.getLogger("nerfwatch.warehouse")

_INCOMING = "SELECT * FROM _incoming"  # a frame being inserted, registered under this name


class _Store(Protocol):
    """What a backend provides: connections, and how it runs the schema."""

    where: str

    def translate(self, statement: str) -> list[str]: ...
    def transient(self, exc: duckdb.Error) -> bool: ...
    def exists(self) -> bool: ...
    def connect(self, *, read_only: bool) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...
    def schema_connection(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...
    def close(self) -> None: ...


class Warehouse:
    """The project's schema on a DuckDB file or a DuckLake, opened briefly per operation."""

    def __init__(
        self,
        location: str | Path | Lake,
        *,
        lock_wait_s: float = 10.0,
        migrations: Sequence[Migration] | None = None,
        resident: bool = False,
    ) -> None:
        """``location``: a file path or a ``Lake``. ``lock_wait_s`` and ``resident`` concern
        the file (how long to wait for another process's lock; keep one instance and attach
        the file per operation, ~2 ms instead of ~12 ms). A lake has no lock and always
        keeps its instance."""
        self._store: _Store
        self.lake = location if isinstance(location, Lake) else None  # None: a single file
        if isinstance(location, Lake):
            self._store = LakeStore(location)
            self._file: FileStore | None = None
        else:
            self._file = FileStore(Path(location), lock_wait_s=lock_wait_s, resident=resident)
            self._store = self._file
        self.lock_wait_s = lock_wait_s
        self.resident = resident
        self._migrations = migrations
        self._migrated = False
        self._schema_read = False  # a reader has looked at an existing file's migrations

    @property
    def where(self) -> str:
        """The file path or the lake's description, for messages."""
        return self._store.where

    def scrub(self, exc: object) -> str:
        """An engine's message on one line, a lake's secrets replaced (``Lake.scrub``)."""
        return self.lake.scrub(exc) if self.lake is not None else one_line(exc)

    @property
    def location(self) -> Path | Lake:
        """What this warehouse was opened on: the lake, or the file."""
        return self.lake if self.lake is not None else self.path

    @property
    def path(self) -> Path:
        """The DuckDB file (a lake has none: that is a WarehouseError)."""
        if self._file is None:
            raise WarehouseError(f"{self.where} is a lake, not a single file")
        return self._file.path

    @contextmanager
    def connect(self, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived connection; the schema is brought up to date first."""
        if (read_only and not self._store.exists()) or (not read_only and not self._migrated):
            self.migrate()
        if read_only and not self._migrated and not self._schema_read:
            with self._store.connect(read_only=True) as con:
                if not self._behind(con):
                    yield _in_utc(con)
                    return
            self._migrate_to_read()  # the reading connection is closed: migrating needs it
        with self._store.connect(read_only=read_only) as con:
            yield _in_utc(con) if read_only else con

    def _migrate_to_read(self) -> None:
        """Migrate a file behind before reading it. One nobody here may write (a read-only
        mount, an archived copy) is read as it stands, with a warning, rather than not at
        all: its tables are still there to read."""
        try:
            self.migrate()
        except WarehouseError as exc:
            if self._file is None or self._file.writable():
                raise
            log.warning(
                "warehouse %s lacks migrations but cannot be written, so it is read as it "
                "stands; what they add is missing (%s)",
                self.where,
                exc,
            )

    def _behind(self, con: duckdb.DuckDBPyConnection) -> bool:
        """Whether an existing warehouse lacks one of this code's migrations, read on the
        connection the read will use (once per instance). After an upgrade a reader
        (``report``, ``sql``) would fail on a missing table or column, so it migrates first,
        as any writer would; a newer warehouse is not behind and stays read-only."""
        try:
            applied = _applied_migrations(con)
        except duckdb.Error:  # unreadable now (a lake's data away): the read says so itself
            return False
        self._schema_read = True
        known = self._migrations if self._migrations is not None else load_migrations()
        return any(m.number not in applied for m in known)

    def frozen_behind(self) -> tuple[int, int] | None:
        """(the file's schema version, this code's) if it lacks migrations and cannot be
        written, so a reader reads it as it stands (``_migrate_to_read``); else None. A
        reader that needs every table (the report) refuses such a file up front instead of
        failing on the first table the old schema lacks."""
        if self._file is None or not self._file.exists() or self._file.writable():
            return None
        with self._file.connect(read_only=True) as con:
            try:
                applied = _applied_migrations(con)
            except duckdb.Error:
                return None
        known = self._migrations if self._migrations is not None else load_migrations()
        if all(m.number in applied for m in known):
            return None
        return max(applied, default=0), max(m.number for m in known)

    def close(self) -> None:
        """Drop any instance kept between operations (a later one starts afresh)."""
        self._store.close()

    def migrate(self) -> list[str]:
        """Apply pending migrations and refresh changed views; return what was applied."""
        seen: set[int] = set()  # what the last attempt found applied

        def attempt() -> list[str]:
            nonlocal seen
            translate = self._store.translate
            with self._store.schema_connection() as con:
                seen = _applied_migrations(con)
                applied = apply_migrations(con, self._migrations, translate)
                refresh_views(con, translate)
                refresh_bundled(con, translate)
            return applied

        def moved_on() -> bool:
            """Another writer applied a migration meanwhile (two sites on a new lake): its
            tables exist now, so this attempt's CREATE failed; the next one skips them. A
            lake's catalog that cannot be reached is tried again only if it is busy (locked):
            one removed or replaced is not, and waiting ``lock_wait_s`` would not bring it
            back."""
            try:
                with self._store.schema_connection() as con:
                    return _applied_migrations(con) > seen
            except LakeUnreachable as exc:
                cause = exc.__cause__
                return isinstance(cause, duckdb.Error) and self._store.transient(cause)
            except duckdb.Error:
                return True

        applied = self._retrying("migration", attempt, moved_on=moved_on)
        self._migrated = True
        return applied

    def _retrying(
        self, what: str, operation: Callable[[], T], *, moved_on: Callable[[], bool] | None = None
    ) -> T:
        """``operation``, tried again while another writer makes its commit fail for now (a
        lake's catalog busy or in conflict, e.g. two sites or the daemon and its flush
        process migrating at once) until ``lock_wait_s`` runs out. Callers make
        ``operation`` idempotent: migrations re-read what is applied, inserts skip stored
        keys. ``moved_on`` says whether any other failure is one to try again too."""
        deadline = time.monotonic() + self.lock_wait_s
        delay = 0.01
        while True:
            try:
                return operation()
            except (duckdb.Error, SchemaError, LakeUnreachable) as exc:
                cause = exc if isinstance(exc, duckdb.Error) else exc.__cause__
                transient = isinstance(cause, duckdb.Error) and self._store.transient(cause)
                if not transient and moved_on is not None:
                    transient = moved_on()
                if not transient or time.monotonic() >= deadline:
                    if isinstance(exc, LakeUnreachable):
                        raise  # it names the lake already
                    # named: a daemon's flush may write to a lake shared by several sites
                    message = f"{what} on {self.where} failed: {self.scrub(exc)}"
                    raise WarehouseError(message) from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

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
        if key is None:  # the CHECKs still hold, on a lake too (row_checks)
            where = checked_where(table, frame.columns)
            return self._insert(table, frame, [], f"INSERT INTO {table} BY NAME {_INCOMING}{where}")
        frame = frame.unique(subset=[key], keep="first", maintain_order=True)
        return self._insert(
            table, frame, [], insert_new_sql(table, _INCOMING, key=key, columns=frame.columns)
        )

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
        return self._insert(
            table,
            frame,
            [delete],
            insert_new_sql(table, _INCOMING, key=cols, columns=frame.columns),
        )

    def _insert(self, table: str, frame: pl.DataFrame, before: list[str], insert: str) -> int:
        """Register ``frame`` as ``_incoming``, run ``before`` statements, then ``insert``,
        in one transaction.

        A commit another writer made fail for now is tried again (``_retrying``): every
        insert here is idempotent, so running it twice stores nothing twice.
        """
        if frame.height == 0:
            return 0
        return self._retrying(
            f"insert into {table}", lambda: self._insert_once(frame, before, insert)
        )

    def _insert_once(self, frame: pl.DataFrame, before: list[str], insert: str) -> int:
        with self.connect() as con:
            con.register("_incoming", frame)
            try:
                con.execute("BEGIN TRANSACTION")
                for statement in before:
                    con.execute(statement).fetchall()
                rows = con.execute(insert).fetchall()
                con.execute("COMMIT")
            except duckdb.Error:
                rollback(con)
                raise
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
                rollback(con)
                raise WarehouseError(self.scrub(exc)) from exc

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
                _refuse_writes_and_downloads(statements)
                for statement in statements[:-1]:
                    con.execute(statement)
                relation = con.sql(statements[-1].query, params=params)
                return relation.pl() if relation is not None else pl.DataFrame()
            except duckdb.Error as exc:
                if self.lake is not None and self.lake.quotes_its_data(str(exc)):
                    reason = f"cannot read the data of {self.where}: {self.scrub(exc)}"
                    raise LakeUnreachable(reason) from exc
                raise SqlError(self.scrub(exc)) from exc


def _in_utc(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """``con`` counting time in UTC, as the product does. DuckDB takes a session's zone
    from the process (``TZ``), so ``date_trunc('day', ts)`` on a machine in Kathmandu
    (+5:45) cut days at 18:15 UTC; set here, every reader gets UTC buckets without each
    query saying so."""
    con.execute("SET TimeZone = 'UTC'")
    return con


_WRITES_FILES = {
    duckdb.StatementType.COPY: "COPY",
    duckdb.StatementType.COPY_DATABASE: "COPY FROM DATABASE",
    duckdb.StatementType.EXPORT: "EXPORT DATABASE",
    duckdb.StatementType.ATTACH: "ATTACH",
}


# SET names that would let a query fetch extensions (connections start offline)
_EXTENSION_SETTING = re.compile(r"\b(auto(install|load)_known_extensions|extension_directory"
                                r"|allow_community_extensions|custom_extension_repository)\b",
                                re.IGNORECASE)  # fmt: skip


def _refuse_writes_and_downloads(statements: Sequence[duckdb.Statement]) -> None:
    """A read-only connection still lets COPY ... TO, EXPORT and ATTACH create files on
    disk, and INSTALL download an extension into ~/.duckdb; reads are documented to write
    nothing and download nothing, so such statements are refused by type (DuckDB's
    parser, not a text match), as is a SET that would switch automatic installs back on."""
    for statement in statements:
        if (name := _WRITES_FILES.get(statement.type)) is not None:
            raise SqlError(
                f"{name} is refused: queries here are read-only and write no files "
                "(save a result with --out, or use the duckdb client)"
            )
        if statement.type == duckdb.StatementType.LOAD or (
            statement.type == duckdb.StatementType.SET
            and _EXTENSION_SETTING.search(statement.query)
        ):
            raise SqlError(
                "INSTALL, LOAD and extension settings are refused: the extensions nerfwatch "
                "needs come with it and nothing is downloaded at run time"
            )


def _applied_migrations(con: duckdb.DuckDBPyConnection) -> set[int]:
    try:
        return {int(n) for (n,) in con.execute("SELECT number FROM _migrations").fetchall()}
    except duckdb.CatalogException:  # a new warehouse
        return set()
