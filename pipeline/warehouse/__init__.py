"""The warehouse: where every probe is kept and queried.

What callers import is here: ``Warehouse`` (open, append, query), its errors, and
``insert_new_sql`` for idempotent appends. The rooms behind it: ``duckdb_file`` (the
single DuckDB file, the embedded default and the only module that opens it), ``errors``
(what every backend raises), ``extensions`` (DuckDB extensions loaded from the pinned
wheels, never downloaded), ``migrations`` (schema, views and bundled reference data),
``queries`` (the canned SQL in ``sql/queries``) and ``sql_output`` (result frames written
as table, CSV or JSON).
"""

from __future__ import annotations

from pipeline.warehouse.duckdb_file import Warehouse, insert_new_sql
from pipeline.warehouse.errors import SqlError, WarehouseBusy, WarehouseError

__all__ = ["SqlError", "Warehouse", "WarehouseBusy", "WarehouseError", "insert_new_sql"]
