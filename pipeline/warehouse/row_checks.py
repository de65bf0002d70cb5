"""The schema's CHECK constraints as a guard that any insert can carry.

A lake cannot hold CHECK constraints (DuckLake 1.0 refuses them; ``lake_schema`` drops
them), so a row the single file refuses, such as a legacy spool line with an unknown
``run_status``, would land in a lake unchecked. ``insert_new_sql`` adds the table's
checks as a filter that raises, as a failed CHECK does, on the first row that breaks
one; so both backends refuse the same rows and the flush quarantines them alike. A CHECK
passes on NULL (SQL's unknown), and so does the guard.

The checks are read from the migrations themselves (``schema_catalog``): the SQL files
stay the single source.
"""

from __future__ import annotations

import functools
from collections.abc import Collection

__all__ = ["checked_where"]


@functools.cache
def _checks() -> dict[str, tuple[tuple[str, frozenset[str]], ...]]:
    """Per table, each CHECK's expression and the columns it reads."""
    # Imported here: the migrations' own inserts of reference data use insert_new_sql.
    from pipeline.warehouse.migrations import schema_catalog

    rows = schema_catalog(
        "SELECT table_name, expression, constraint_column_names FROM duckdb_constraints()"
        " WHERE constraint_type = 'CHECK' ORDER BY table_name, constraint_index"
    )
    checks: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {}
    for table, expression, columns in rows:
        checks[table] = (*checks.get(table, ()), (expression, frozenset(columns)))
    return checks


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def checked_where(table: str, columns: Collection[str] | None = None) -> str:
    """A ``WHERE`` clause (with its leading space) for a ``SELECT`` feeding an insert into
    ``table``: true where every CHECK passes, an error naming the check where one fails;
    ``""`` when no check applies.

    ``columns``: the columns the inserted rows carry (None: all of them). A check on a
    column they lack is left out: the insert gives that column its default, which the
    schema's own checks allow."""
    checks = [
        expr for expr, reads in _checks().get(table, ()) if columns is None or reads <= set(columns)
    ]
    if not checks:
        return ""
    cases = " ".join(
        f"WHEN NOT coalesce({expr}, true) THEN "
        f"error({_quoted(f'CHECK constraint failed on {table}: {expr}')})"
        for expr in checks
    )
    return f" WHERE CASE {cases} ELSE true END"
