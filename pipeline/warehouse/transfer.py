"""Copying a warehouse to another backend: a file into a lake, or a lake back into a file.

The target is migrated first, then the source is attached read-only beside it and each
table is copied in one transaction by DuckDB itself (streamed, not through Python), only
the rows whose key the target lacks. So a copy can be run again at any time: after an
interruption it resumes (tables already copied add nothing), and while the source keeps
growing it brings the target up to date. Afterwards every table is verified: no source
key may be missing from the target.

Keys come from the schema itself (a scratch database with the migrations applied): the
primary key where the file has one, else ``analysis_id`` (analysis results are written
and copied per analysis run, each table atomically).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline.warehouse.ducklake import attach_lake
from pipeline.warehouse.errors import WarehouseError, cannot_open, one_line
from pipeline.warehouse.lake import Lake
from pipeline.warehouse.migrations import schema_catalog
from pipeline.warehouse.transactions import rollback
from pipeline.warehouse.warehouse import Warehouse

__all__ = ["TableCopy", "copy_warehouse", "table_keys"]

_SOURCE = "nw_source"
_BOOKKEEPING = ("_migrations", "_refreshed")  # each warehouse keeps its own


@dataclass(frozen=True, slots=True)
class TableCopy:
    """One table after a copy: rows in each side, rows copied this time, source keys the
    target still lacks (0 unless something is wrong)."""

    table: str
    source_rows: int
    target_rows: int
    copied: int
    missing: int


def table_keys() -> dict[str, list[str]]:
    """Every data table and the columns that identify its rows, from the migrations."""
    rows = schema_catalog(
        "SELECT t.table_name, any_value(k.constraint_column_names),"
        " bool_or(c.column_name = 'analysis_id')"
        " FROM duckdb_tables() t JOIN duckdb_columns() c USING (database_name, table_name)"
        " LEFT JOIN duckdb_constraints() k ON k.database_name = t.database_name"
        " AND k.table_name = t.table_name AND k.constraint_type = 'PRIMARY KEY'"
        " WHERE t.database_name = 'memory' GROUP BY ALL ORDER BY 1"
    )
    keys: dict[str, list[str]] = {}
    for table, primary, has_analysis_id in rows:
        if table in _BOOKKEEPING:
            continue
        if primary is None and not has_analysis_id:
            raise WarehouseError(f"table {table} has no key to copy it by")
        keys[table] = list(primary) if primary is not None else ["analysis_id"]
    return keys


def copy_warehouse(source: Path | Lake, target: Path | Lake) -> list[TableCopy]:
    """Copy every table of ``source`` into ``target`` (created if missing); idempotent."""
    if isinstance(source, Path) and not source.is_file():
        raise WarehouseError(f"no warehouse at {source}")
    if isinstance(source, Lake) and not source.catalog_exists():
        raise WarehouseError(f"no warehouse at {source.where}")
    origin = Warehouse(source)
    try:
        origin.migrate()  # the same schema version on both sides
    finally:
        origin.close()
    into = Warehouse(target)
    into.migrate()
    try:
        with into.connect() as con:
            _attach_source(con, source)
            return _copy_attached(con, _Sides(source, target))
    finally:
        into.close()


def _copy_attached(con: duckdb.DuckDBPyConnection, sides: _Sides) -> list[TableCopy]:
    """Copy every table from the attached source, then detach it; a failed detach never
    hides the error of a failed copy."""
    try:
        copies = [_copy_table(con, table, key, sides) for table, key in table_keys().items()]
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.execute(f"DETACH {_SOURCE}")
        raise
    try:
        con.execute(f"DETACH {_SOURCE}")
    except duckdb.Error as exc:
        raise WarehouseError(f"detaching {sides.source} failed: {sides.scrub(exc)}") from exc
    return copies


@dataclass(frozen=True, slots=True)
class _Sides:
    """Both ends of a copy, for messages: where each is, and their secrets scrubbed."""

    source_at: Path | Lake
    target_at: Path | Lake

    @property
    def source(self) -> str:
        return _where(self.source_at)

    @property
    def target(self) -> str:
        return _where(self.target_at)

    def scrub(self, exc: BaseException) -> str:
        text = one_line(exc)
        for side in (self.source_at, self.target_at):
            if isinstance(side, Lake):
                text = side.scrub(text)
        return text


def _where(location: Path | Lake) -> str:
    return location.where if isinstance(location, Lake) else f"warehouse {location}"


def _attach_source(con: duckdb.DuckDBPyConnection, source: Path | Lake) -> None:
    if isinstance(source, Lake):
        attach_lake(con, source, _SOURCE, read_only=True)
        return
    try:
        con.execute(
            f"ATTACH '{str(source).replace(chr(39), chr(39) * 2)}' AS {_SOURCE} (READ_ONLY)"
        )
    except duckdb.Error as exc:
        raise cannot_open(source, exc) from None


def _copy_table(
    con: duckdb.DuckDBPyConnection, table: str, key: list[str], sides: _Sides
) -> TableCopy:
    """Copy ``table``'s missing rows in one transaction, then count both sides. A failed
    count leaves the committed copy in place: running the copy again resumes."""
    using = ", ".join(key)
    src = f"{_SOURCE}.main.{table}"
    con.execute("BEGIN TRANSACTION")
    try:
        copied = con.execute(
            f"INSERT INTO {table} BY NAME SELECT _src.* FROM {src} _src"
            f" ANTI JOIN (SELECT DISTINCT {using} FROM {table}) _have USING ({using})"
        ).fetchall()
        con.execute("COMMIT")
    except duckdb.Error as exc:
        with contextlib.suppress(duckdb.Error):  # a lake out of reach may refuse it too
            rollback(con)
        raise WarehouseError(
            f"copying {table} into {sides.target} failed: {sides.scrub(exc)}"
        ) from exc
    try:
        counts = con.execute(
            f"SELECT (SELECT count(*) FROM {src}), (SELECT count(*) FROM {table}),"
            f" (SELECT count(*) FROM {src} ANTI JOIN {table} USING ({using}))"
        ).fetchall()[0]
    except duckdb.Error as exc:
        raise WarehouseError(
            f"{table} was copied into {sides.target} but checking it against "
            f"{sides.source} failed (run the copy again to resume): {sides.scrub(exc)}"
        ) from exc
    return TableCopy(table, int(counts[0]), int(counts[1]), int(copied[0][0]), int(counts[2]))
