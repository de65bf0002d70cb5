"""The warehouse's schema: migrations, views and the bundled reference data.

Migrations (``sql/schema/NNN_name.sql``) are applied by number, each in one transaction
together with its record in ``_migrations``. Views (``sql/views/*.sql``) and the shipped
release calendar are rebuilt inside the database whenever their text changes, so the plain
``duckdb`` CLI sees the same views. These functions work on a connection the warehouse
opened; they never open the file themselves. Each takes a ``translate`` for schema
statements: ``unchanged`` for the single file, ``lake_schema.for_ducklake`` for a lake.
The bookkeeping writes use no keys (delete then insert; anti-joins), so they run as they
are on both.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from pipeline.resources import data_dir, sql_dir
from pipeline.warehouse.inserts import insert_new_sql
from pipeline.warehouse.transactions import rollback

__all__ = [
    "Migration",
    "NewerSchema",
    "SchemaError",
    "Translate",
    "apply_migrations",
    "load_migrations",
    "refresh_bundled",
    "refresh_views",
    "unchanged",
]

# A schema statement -> the statements a backend runs for it.
Translate = Callable[[str], list[str]]

_MIGRATIONS_COLUMNS = (
    "(number INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
    " applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), checksum VARCHAR)"
)
_MIGRATION_NAME = re.compile(r"^(?P<number>\d{3})_(?P<name>[a-z0-9_]+)\.sql$")


class SchemaError(Exception):
    """A migration, view or reference file that cannot be applied."""


class NewerSchema(SchemaError):
    """The warehouse was written by newer software: migrated by a newer nerfwatch (a
    downgrade), or a file in a newer DuckDB's storage format (then it is the cause of a
    ``NewerFile``). Nothing here may write, and waiting will not change that."""


@dataclass(frozen=True, slots=True)
class Migration:
    number: int
    name: str
    sql: str


def load_migrations(directory: Path | None = None) -> list[Migration]:
    """Read ``NNN_name.sql`` files in order; refuse duplicate numbers and stray names."""
    directory = directory or sql_dir() / "schema"
    migrations: list[Migration] = []
    seen: dict[int, str] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if match is None:
            raise SchemaError(f"{path}: migration files must be named NNN_name.sql")
        number = int(match["number"])
        if number in seen:
            raise SchemaError(f"{path}: migration number {number:03d} also used by {seen[number]}")
        seen[number] = path.name
        migrations.append(Migration(number, path.stem, path.read_text(encoding="utf-8")))
    return migrations


def schema_catalog(query: str) -> list[tuple[Any, ...]]:
    """Rows of a catalog query (``duckdb_tables()``, ``duckdb_constraints()``, ...) on the
    schema the migrations define, so keys and checks are read from the SQL files rather
    than restated in Python. The tables live in database ``memory``."""
    with _schema_database().cursor() as cursor:
        return cursor.execute(query).fetchall()


@functools.cache
def _schema_database() -> duckdb.DuckDBPyConnection:
    """A scratch in-memory DuckDB with every migration applied, built once per process."""
    scratch = duckdb.connect(":memory:")
    for migration in load_migrations():
        scratch.execute(migration.sql)
    return scratch


def _load_views(directory: Path | None = None) -> dict[str, str]:
    """View files in dependency order: files are applied sorted by name."""
    directory = directory or sql_dir() / "views"
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(directory.glob("*.sql"))}


def unchanged(statement: str) -> list[str]:
    """The single file runs the schema as written."""
    return [statement]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def apply_migrations(
    con: duckdb.DuckDBPyConnection,
    migrations: Sequence[Migration] | None = None,
    translate: Translate = unchanged,
) -> list[str]:
    """Apply every migration not yet recorded, each in one transaction with its record.

    A migration that was applied and has changed since is refused: the database would
    silently miss the change. Schema changes go in a new migration. A database that records
    a migration this code does not have (written by a newer nerfwatch) is refused before
    anything is written to it.
    """
    migrations = migrations if migrations is not None else load_migrations()
    done = _recorded(con, migrations, translate)
    _complete_unchecked(con, done, migrations, translate)
    applied: list[str] = []
    for migration in migrations:
        if migration.number in done:
            recorded = done[migration.number]
            if recorded is not None and recorded != _digest(migration.sql):
                raise SchemaError(
                    f"migration {migration.name} changed after it was applied to this "
                    "database; put schema changes in a new migration file"
                )
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for parsed in con.extract_statements(migration.sql):
                for statement in translate(parsed.query):
                    con.execute(statement)
            con.execute(
                "INSERT INTO _migrations (number, name, checksum) VALUES (?, ?, ?)",
                [migration.number, migration.name, _digest(migration.sql)],
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            rollback(con)  # a lake's refused COMMIT leaves no transaction to roll back
            raise SchemaError(f"migration {migration.name} failed: {exc}") from exc
        applied.append(migration.name)
    return applied


def _recorded(
    con: duckdb.DuckDBPyConnection, migrations: Sequence[Migration], translate: Translate
) -> dict[int, str | None]:
    """Each recorded migration's checksum (None: recorded before checksums, 7e7eb9d).

    Creates ``_migrations`` on a new database and gives one written before checksums its
    column, but only once the database is known not to be newer than this code.
    """
    columns = _columns(con, "_migrations")
    if columns is None:
        for statement in translate(f"CREATE TABLE IF NOT EXISTS _migrations {_MIGRATIONS_COLUMNS}"):
            con.execute(statement)
        return {}
    checksum = "checksum" if "checksum" in columns else "NULL"
    rows = con.execute(f"SELECT number, name, {checksum} FROM _migrations").fetchall()
    _refuse_newer(rows, migrations)
    if checksum == "NULL":
        _add_checksums(con, translate)
    return {number: digest for number, _, digest in rows}


def _add_checksums(con: duckdb.DuckDBPyConnection, translate: Translate) -> None:
    """Give a ``_migrations`` from before checksums its column by copying it, in one
    transaction. Not ALTER TABLE ADD COLUMN: DuckDB 1.5 cannot replay that from its WAL on a
    table with a ``DEFAULT now()`` ("Failure while replaying WAL file ...
    GetDefaultDatabase"), so a crash before the next checkpoint left a file nothing opens."""
    con.execute("BEGIN TRANSACTION")
    try:
        for statement in [
            f"CREATE TABLE _migrations_checked {_MIGRATIONS_COLUMNS}",
            "INSERT INTO _migrations_checked"
            " SELECT number, name, applied_at, NULL FROM _migrations",
            "DROP TABLE _migrations",
            "ALTER TABLE _migrations_checked RENAME TO _migrations",
        ]:
            for translated in translate(statement):
                con.execute(translated)
        con.execute("COMMIT")
    except duckdb.Error as exc:
        rollback(con)
        raise SchemaError(f"adding checksums to _migrations failed: {exc}") from exc


# Migrations whose file was edited in place before checksums existed (7e7eb9d): a database
# that recorded them then (checksum NULL) may have the earlier text, so it gets what the
# edits added. 004 gained change_points.detected_at (914339b) and phases.start_lo/_hi
# (b8daffc); without them analysis failed on a warehouse from ace7eeb.
_EDITED_BEFORE_CHECKSUMS: dict[int, tuple[str, ...]] = {
    4: (
        "ALTER TABLE change_points ADD COLUMN IF NOT EXISTS detected_at TIMESTAMPTZ",
        "ALTER TABLE phases ADD COLUMN IF NOT EXISTS start_lo TIMESTAMPTZ",
        "ALTER TABLE phases ADD COLUMN IF NOT EXISTS start_hi TIMESTAMPTZ",
    ),
}


def _complete_unchecked(
    con: duckdb.DuckDBPyConnection,
    done: dict[int, str | None],
    migrations: Sequence[Migration],
    translate: Translate,
) -> None:
    """Bring each migration recorded without a checksum to its current text and record the
    checksum, one transaction each (no other file changed before checksums existed)."""
    for migration in migrations:
        if migration.number not in done or done[migration.number] is not None:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for statement in _EDITED_BEFORE_CHECKSUMS.get(migration.number, ()):
                for translated in translate(statement):
                    con.execute(translated)
            con.execute(
                "UPDATE _migrations SET checksum = ? WHERE number = ?",
                [_digest(migration.sql), migration.number],
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            rollback(con)
            raise SchemaError(f"completing migration {migration.name} failed: {exc}") from exc
        done[migration.number] = _digest(migration.sql)


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str] | None:
    """``table``'s column names, or None when it does not exist (works on a lake too)."""
    try:
        described = con.execute(f"SELECT * FROM {table} LIMIT 0").description
    except duckdb.CatalogException:
        return None
    return [column[0] for column in described or []]


def _refuse_newer(rows: Sequence[tuple[Any, ...]], migrations: Sequence[Migration]) -> None:
    """A database migrated past this code's last migration is a newer nerfwatch's: its
    schema may mean what this code cannot know, so nothing here may write to it."""
    known = max((m.number for m in migrations), default=0)
    newest = max(rows, key=lambda row: int(row[0]), default=None)
    if newest is not None and int(newest[0]) > known:
        last = next((m.name for m in migrations if m.number == known), "none")
        raise NewerSchema(
            f"warehouse has schema version {int(newest[0]):03d} ({newest[1]}), written by a "
            f"newer nerfwatch; this one knows up to {known:03d} ({last}). Upgrade nerfwatch "
            "to open it; nothing was written to it"
        )


def _refresh(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    digest: str,
    statements: Sequence[tuple[str, Sequence[Any] | None]],
    translate: Translate,
) -> None:
    """Run ``statements`` in one transaction unless ``kind`` was built from ``digest``."""
    for statement in translate(
        "CREATE TABLE IF NOT EXISTS _refreshed (kind VARCHAR PRIMARY KEY, "
        "digest VARCHAR NOT NULL, refreshed_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    ):
        con.execute(statement)
    # A lake has no keys, and two sites' inserts into one table both commit: two sites
    # refreshing at once (both starting on a new lake) each stored a full copy. So the
    # kind's row exists before any refresh (a duplicate placeholder is harmless), every
    # refresh deletes it, and of two refreshes deleting the same row the catalog commits
    # one; the other is a transient conflict, retried by the caller, and finds it done.
    con.execute(
        "INSERT INTO _refreshed (kind, digest) SELECT ?, '' WHERE NOT EXISTS"
        " (SELECT 1 FROM _refreshed WHERE kind = ?)",
        [kind, kind],
    )
    rows = con.execute("SELECT digest FROM _refreshed WHERE kind = ?", [kind]).fetchall()
    if rows and rows[0][0] == digest:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        for statement, params in statements:
            con.execute(statement, params)
        con.execute("DELETE FROM _refreshed WHERE kind = ?", [kind])
        con.execute("INSERT INTO _refreshed (kind, digest) VALUES (?, ?)", [kind, digest])
        con.execute("COMMIT")
    except duckdb.Error as exc:
        rollback(con)  # a lake's refused COMMIT leaves no transaction to roll back
        raise SchemaError(f"refreshing {kind} failed: {exc}") from exc


def refresh_views(con: duckdb.DuckDBPyConnection, translate: Translate = unchanged) -> None:
    """Recreate the views when their text changed."""
    views = _load_views()
    text = "\n".join(f"{name}\n{body}" for name, body in views.items())
    statements = [(s.query, None) for body in views.values() for s in con.extract_statements(body)]
    _refresh(con, "views", _digest(text), statements, translate)


def refresh_bundled(con: duckdb.DuckDBPyConnection, translate: Translate = unchanged) -> None:
    """Reload the shipped release calendar and incidents when the files changed.

    User rows are never touched; a user row with the same key wins over a bundled one.
    """
    releases, incidents = data_dir() / "releases.csv", data_dir() / "incidents.csv"
    digest = _digest(releases.read_text(encoding="utf-8") + incidents.read_text(encoding="utf-8"))
    statements: list[tuple[str, Sequence[Any] | None]] = [
        ("DELETE FROM releases WHERE origin = 'bundled'", None),
        ("DELETE FROM incidents WHERE origin = 'bundled'", None),
        (
            insert_new_sql(
                "releases",
                "SELECT vendor, model, release_date::DATE AS release_date, kind, source_url,"
                " confidence, 'bundled' AS origin"
                " FROM read_csv(?, header = true, all_varchar = true)",
                key="vendor, model, release_date",
            ),
            [str(releases)],
        ),
        (
            insert_new_sql(
                "incidents",
                "SELECT vendor, start_date::DATE AS start_date,"
                " nullif(end_date, '')::DATE AS end_date, summary, source_url,"
                " 'bundled' AS origin FROM read_csv(?, header = true, all_varchar = true)",
                key="vendor, start_date, summary",
            ),
            [str(incidents)],
        ),
    ]
    _refresh(con, "bundled_reference", digest, statements, translate)
