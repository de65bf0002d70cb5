"""The schema's SQL, translated for DuckLake in this one place.

The migrations in ``sql/schema`` are written for the single DuckDB file. DuckLake 1.0
refuses what a lake cannot enforce across writers that never see each other: PRIMARY KEY,
UNIQUE and CHECK constraints ("not supported in DuckLake") and indexes; it has no
sequences either (the schema uses none). So, per statement:

- ``CREATE TABLE``: executed in a scratch in-memory DuckDB, then re-issued from the scratch
  catalog as names, types, NOT NULL and DEFAULT only. Keys and CHECKs are dropped: rows
  stay unique by the anti-join of every insert (``pipeline.warehouse.inserts``), and every
  insert carries the table's CHECKs as a guard of its own (``row_checks``).
- ``CREATE INDEX`` / ``DROP INDEX``: skipped (a lake prunes by file statistics).
- everything else (``ALTER TABLE ... ADD COLUMN``, views, inserts): unchanged.

The SQL files stay the single source; a new migration needs nothing here unless it uses
something else DuckLake refuses, which the lake tests would show.
"""

from __future__ import annotations

import re

import duckdb

__all__ = ["for_ducklake"]

_COMMENT = re.compile(r"--[^\n]*(\n|$)")
_SKIPPED = re.compile(r"(CREATE\s+(UNIQUE\s+)?INDEX|DROP\s+INDEX)\b", re.IGNORECASE)
_CREATE_TABLE = re.compile(r"CREATE\s+TABLE\s+(?P<if_not>IF\s+NOT\s+EXISTS\s+)?", re.IGNORECASE)


def for_ducklake(statement: str) -> list[str]:
    """What to run on a lake for one schema statement (none, itself, or a plain table)."""
    head = _COMMENT.sub("", statement).strip()
    if _SKIPPED.match(head):
        return []
    create = _CREATE_TABLE.match(head)
    if create is None:
        return [statement]
    return [_plain_table(statement, if_not_exists=create["if_not"] is not None)]


def _plain_table(statement: str, *, if_not_exists: bool) -> str:
    """``statement``'s table as columns with types, NOT NULL and defaults, nothing else."""
    scratch = duckdb.connect(":memory:")
    try:
        scratch.execute(statement)
        (table,) = scratch.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'memory'"
        ).fetchall()
        columns = scratch.execute(
            "SELECT column_name, data_type, is_nullable, column_default FROM duckdb_columns()"
            " WHERE database_name = 'memory' AND table_name = ? ORDER BY column_index",
            [table[0]],
        ).fetchall()
    finally:
        scratch.close()
    defs = []
    for name, data_type, nullable, default in columns:
        text = f'"{name}" {data_type}'
        text += "" if nullable else " NOT NULL"
        text += "" if default is None else f" DEFAULT {default}"
        defs.append(text)
    guard = "IF NOT EXISTS " if if_not_exists else ""
    return f'CREATE TABLE {guard}"{table[0]}" ({", ".join(defs)})'
