"""DuckDB extensions loaded from the installed wheels, never downloaded.

DuckDB normally fetches an extension from its repository the first time a statement
needs it. nerfwatch must run offline and reproducibly, so the extensions are pinned
Python wheels (``duckdb-extension-*`` 1.5.5, see pyproject.toml), every connection has
automatic install and load switched off (``offline``), and the lake loads each file by
path. The ``sqlite`` and ``postgres`` extensions come from the ``*-scanner`` wheels: their
files are named after the entry point (``sqlite_scanner``), which DuckDB derives from the
file name; the ``duckdb-extension-sqlite`` wheel ships the same bytes as
``sqlite.duckdb_extension`` and fails to load by path.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import duckdb

from pipeline.warehouse.errors import WarehouseError

__all__ = ["extension_file", "load_extension", "offline"]

# Extension name (as DuckDB knows it) -> the Python package of the wheel that ships it.
_WHEELS = {
    "ducklake": "duckdb_extension_ducklake",
    "httpfs": "duckdb_extension_httpfs",
    "postgres_scanner": "duckdb_extension_postgres_scanner",
    "sqlite_scanner": "duckdb_extension_sqlite_scanner",
}


def extension_file(name: str) -> Path:
    """The ``.duckdb_extension`` file of ``name`` for the running DuckDB version."""
    package = _WHEELS.get(name)
    if package is None:
        raise WarehouseError(f"DuckDB extension {name!r} is not one nerfwatch ships")
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise WarehouseError(
            f"DuckDB extension {name!r} is missing: install the {package.replace('_', '-')} "
            f"wheel for DuckDB {duckdb.__version__}"
        )
    found = Path(spec.origin).parent / "extensions" / f"v{duckdb.__version__}"
    path = found / f"{name}.duckdb_extension"
    if not path.is_file():
        raise WarehouseError(
            f"DuckDB extension {name!r}: no {path.name} for DuckDB {duckdb.__version__} "
            f"in {found.parent}; reinstall {package.replace('_', '-')}=={duckdb.__version__}"
        )
    return path


def offline(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Switch off automatic extension install and load for ``con``'s database.

    Set after connecting, not as connect-time config: DuckDB refuses a second connection
    to a file with a configuration other than the first one's, and the setting is
    database-wide anyway. Returns ``con``.
    """
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    return con


def load_extension(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Load ``name`` into ``con``'s database from its wheel (a no-op if already loaded)."""
    loaded = con.execute(
        "SELECT loaded FROM duckdb_extensions() WHERE extension_name = ?", [name]
    ).fetchall()
    if loaded and loaded[0][0]:
        return
    quoted = str(extension_file(name)).replace("'", "''")
    try:
        con.execute(f"LOAD '{quoted}'")
    except duckdb.Error as exc:
        raise WarehouseError(f"loading DuckDB extension {name!r} failed: {exc}") from exc
