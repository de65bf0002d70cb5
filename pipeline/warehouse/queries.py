"""Canned questions in ``sql/queries/*.sql``, each opening with a header comment::

-- name: slowest_hours
-- answers: Which hours of the last 7 days had the slowest first token?
"""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.resources import sql_dir
from pipeline.text_files import NotUtf8, decode_utf8

__all__ = ["QueryError", "canned_queries", "query_header", "resolve_sql"]

_HEADER = re.compile(r"^--\s*(name|answers):\s*(.+?)\s*$", re.MULTILINE)


class QueryError(ValueError):
    """SQL input that cannot be resolved (missing file, unknown canned query)."""


def query_header(text: str) -> dict[str, str]:
    """The ``-- name:`` / ``-- answers:`` fields of a query file."""
    return {m[1]: m[2] for m in _HEADER.finditer(text)}


def canned_queries() -> dict[str, str]:
    """Name → the question it answers, for every shipped query."""
    out = {}
    for path in sorted((sql_dir() / "queries").glob("*.sql")):
        header = query_header(path.read_text(encoding="utf-8"))
        out[path.stem] = header.get("answers", "")
    return out


def resolve_sql(arg: str) -> str:
    """SQL text from a canned-query name, a ``.sql`` file path, or literal SQL."""
    canned = sql_dir() / "queries" / f"{arg}.sql"
    if re.fullmatch(r"[a-z0-9_]+", arg) and canned.is_file():
        return canned.read_text(encoding="utf-8")
    if arg.lower().endswith(".sql"):
        path = Path(arg)
        if not path.is_file():
            raise QueryError(f"{arg}: no such SQL file")
        try:
            return decode_utf8(path.read_bytes())
        except NotUtf8 as exc:
            raise QueryError(f"{arg}:{exc.line}: {exc}") from None
        except OSError as exc:
            raise QueryError(f"{arg}: cannot read: {exc.strerror or exc}") from None
    if re.fullmatch(r"[a-z0-9_]+", arg):
        raise QueryError(f"{arg}: not a canned query (see nerfwatch sql --list) nor SQL")
    return arg
