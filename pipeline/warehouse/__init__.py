"""The warehouse: where every probe is kept and queried.

What callers import is here: ``Warehouse`` (open, append, query) on a file path or a
``Lake``, its errors, and ``insert_new_sql`` for idempotent appends. The rooms behind it:
``warehouse`` (the face), ``duckdb_file`` (the single DuckDB file, the embedded default
and the only module that opens it), ``ducklake`` with ``lake`` and ``lake_schema`` (a
DuckLake: catalog on SQLite or PostgreSQL, data on disk or S3; its description; the
schema translated for it), ``inserts`` (the anti-join that keeps rows unique),
``transactions`` (ending a failed one), ``errors`` (what every backend raises),
``extensions`` (DuckDB extensions loaded from the pinned wheels, never downloaded),
``migrations`` (schema, views and bundled reference data), ``transfer`` (copying between
backends), ``maintenance`` (compacting a lake), ``queries`` (the canned SQL in
``sql/queries``) and ``sql_output`` (result frames written as table, CSV or JSON).
"""

from __future__ import annotations

from pipeline.warehouse.errors import SqlError, WarehouseBusy, WarehouseError
from pipeline.warehouse.inserts import insert_new_sql
from pipeline.warehouse.lake import Lake, LakeSpecError
from pipeline.warehouse.warehouse import Warehouse

__all__ = [
    "Lake",
    "LakeSpecError",
    "SqlError",
    "Warehouse",
    "WarehouseBusy",
    "WarehouseError",
    "insert_new_sql",
]
