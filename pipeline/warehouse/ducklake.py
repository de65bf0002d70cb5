"""A DuckLake warehouse: the backend for several probe sites and concurrent readers.

Unlike the single file there is no lock to wait for: the catalog (SQLite or PostgreSQL)
gives every transaction a snapshot, so readers and writers never block each other and
several processes write at once. Opening is the costly part (loading the extensions,
attaching the catalog), so each store keeps one in-memory DuckDB instance per access mode
with the lake attached as ``warehouse``, and every operation gets its own cursor on it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from pipeline.warehouse.errors import LakeUnreachable, WarehouseError, cannot_open, make_folder
from pipeline.warehouse.extensions import load_extension, offline
from pipeline.warehouse.lake import Lake, LakeSpecError, check_catalog
from pipeline.warehouse.lake_schema import for_ducklake
from pipeline.warehouse.lake_schema_lock import schema_lock

__all__ = ["LakeStore", "attach_lake"]

_ALIAS = "warehouse"
_BUSY_TIMEOUT_MS = 10_000
_ATTACH_WAIT_S = 30.0
# How long a writer waits for another to finish creating or migrating the lake's schema
# (sixteen migrations on a new lake take seconds; far longer on a loaded machine).
_SCHEMA_WAIT_S = 300.0
_CATALOG_EXTENSION = {"sqlite": "sqlite_scanner", "postgres": "postgres_scanner"}
# A commit that failed because another writer was busy in the catalog, or changed what this
# transaction read, or a PostgreSQL catalog's lock_timeout (set in the conninfo's options)
# ran out behind another session's lock; DuckLake retries conflicts itself
# (ducklake_max_retry_count) but not these.
_TRANSIENT = (
    "database is locked",
    "Transaction conflict",
    "could not serialize access",
    "canceling statement due to lock timeout",
)
# Two writers creating a new catalog's schema at once: SQLite says locked; on PostgreSQL
# the loser's CREATE TABLE meets the winner's ("duplicate key value violates unique
# constraint pg_type_typname_nsp_index", or "already exists"). Either way, try again.
_FIRST_SCHEMA_RACE = ("duplicate key value violates unique constraint", "already exists")
# A new SQLite catalog probed while another writer creates its schema: the probe's read
# fails on the lock inside the attach's transaction, and DuckLake reports only that the
# transaction was aborted. The next attach reads the finished schema.
_PROBE_RACE = ("Failed to probe DuckLake metadata", "Current transaction is aborted")
_SECRET = "nerfwatch_lake_s3"  # noqa: S105 (the name DuckDB files the S3 secret under)


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class LakeStore:
    """Cursors on a DuckLake attached once per access mode and kept for the store's life."""

    def translate(self, statement: str) -> list[str]:
        return for_ducklake(statement)

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self.where = lake.where
        self._instances: dict[bool, duckdb.DuckDBPyConnection] = {}
        self._lock = threading.Lock()

    def transient(self, exc: duckdb.Error) -> bool:
        return any(text in str(exc) for text in _TRANSIENT)

    def exists(self) -> bool:
        return self.lake.catalog_exists()

    @contextmanager
    def connect(self, *, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor with the lake as its default catalog, closed afterwards.

        The lake stays attached between operations, so its catalog may have gone since
        (removed, a folder in its place, the server down): ``USE`` is the first statement
        to meet that, and says so in one line. The instance is kept: once the catalog is
        back, the next operation works (attaching anew could create an empty catalog)."""
        cursor = self._instance(read_only).cursor()
        try:
            try:
                cursor.execute(f"USE {_ALIAS}")
            except duckdb.Error as exc:
                message = str(cannot_open(self.where, self.lake.scrub(exc)))
                raise LakeUnreachable(message) from exc
            yield cursor
        finally:
            cursor.close()

    @contextmanager
    def schema_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A writing cursor under the lake's schema lock (``lake_schema_lock``): writers
        that find a new lake at once create its catalog and migrate it one at a time."""
        with schema_lock(self.lake, _SCHEMA_WAIT_S), self.connect(read_only=False) as cursor:
            yield cursor

    def close(self) -> None:
        with self._lock:
            instances, self._instances = list(self._instances.values()), {}
        for instance in instances:
            with contextlib.suppress(duckdb.Error):
                instance.close()

    def _instance(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        with self._lock:
            if read_only not in self._instances:
                self._instances[read_only] = self._attach(read_only)
            return self._instances[read_only]

    def _attach(self, read_only: bool) -> duckdb.DuckDBPyConnection:
        """A fresh instance with the lake attached as ``warehouse``.

        Writers that find a new lake at once all initialise its catalog; SQLite's busy
        timeout does not cover that first schema, and on PostgreSQL the losers' CREATE
        TABLEs fail; so such an attach is tried again for up to ``_ATTACH_WAIT_S`` (the
        winner's schema is then simply read)."""
        deadline = time.monotonic() + _ATTACH_WAIT_S
        delay = 0.02
        while True:
            con = offline(duckdb.connect(":memory:"))
            try:
                con.execute("SET enable_progress_bar = false")
                attach_lake(con, self.lake, _ALIAS, read_only=read_only)
            except WarehouseError as exc:
                con.close()
                if not _attach_race(str(exc)) or time.monotonic() >= deadline:
                    raise
            else:
                return con
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def _attach_race(message: str) -> bool:
    """Whether a failed attach lost a race with another writer (worth another try)."""
    if any(text in message for text in _TRANSIENT):
        return True
    if all(text in message for text in _PROBE_RACE):
        return True
    first_schema = "Failed to initialize DuckLake" in message
    return first_schema and any(text in message for text in _FIRST_SCHEMA_RACE)


def attach_lake(con: duckdb.DuckDBPyConnection, lake: Lake, alias: str, *, read_only: bool) -> None:
    """Load the extensions, set up S3 and ATTACH ``lake`` as ``alias`` on ``con``'s
    database (also a DuckDB file's, to copy between backends). Errors are one line."""
    kind, target = check_catalog(lake.catalog)
    for folder in lake.local_paths():
        make_folder(folder)
    try:
        load_extension(con, "ducklake")
        load_extension(con, _CATALOG_EXTENSION[kind])
        if lake.on_s3:
            load_extension(con, "httpfs")
            _create_s3_secret(con, lake)
        options = [f"DATA_PATH {_quoted(lake.data_path)}"]
        if kind == "sqlite":  # readers beside a writer, and writers wait for each other
            options += ["META_JOURNAL_MODE 'WAL'", f"META_BUSY_TIMEOUT {_BUSY_TIMEOUT_MS}"]
        if read_only:
            options.append("READ_ONLY")
        con.execute(
            f"ATTACH {_quoted(f'ducklake:{kind}:{target}')} AS {alias} ({', '.join(options)})"
        )
    except (duckdb.Error, LakeSpecError) as exc:
        raise cannot_open(lake.where, lake.scrub(exc)) from None


def _create_s3_secret(con: duckdb.DuckDBPyConnection, lake: Lake) -> None:
    """A temporary (in-memory) secret from the environment; a failure never echoes it."""
    settings = lake.s3_settings()
    options = ", ".join(
        f"{name} {value if name == 'USE_SSL' else _quoted(value)}"
        for name, value in settings.items()
    )
    try:
        con.execute(f"CREATE OR REPLACE TEMPORARY SECRET {_SECRET} (TYPE s3, {options})")
    except duckdb.Error as exc:
        raise WarehouseError(f"S3 settings for {lake.where} refused: {lake.scrub(exc)}") from None
