"""A warehouse operation that fails for good names the warehouse it failed on.

``Warehouse._retrying`` said only ``"migration failed: ..."`` or ``"insert into X
failed: ..."``: on a host whose daemon writes a lake (or whose user keeps several
files), the line did not say which. It now carries ``Warehouse.where``: the file's path,
or ``lake <catalog> (data <path>)``, whose conninfo never holds a password (``Lake``
refuses one) and which never carries the S3 keys (they live in the environment).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.warehouse import Lake, Warehouse, WarehouseError
from pipeline.warehouse.migrations import Migration, load_migrations
from tests.support.warehouses import located_on_every_backend

_SECRETS = ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "PGPASSWORD")


@located_on_every_backend
def test_a_failed_migration_names_the_warehouse(warehouse_location: Path | Lake) -> None:
    broken = Migration(99, "099_broken", "CREATE TABLE half (a INTEGER);\nSELECT * FROM nowhere;")
    warehouse = Warehouse(warehouse_location, migrations=[*load_migrations(), broken])
    try:
        with pytest.raises(WarehouseError) as failed:
            warehouse.migrate()
    finally:
        warehouse.close()
    message = str(failed.value)
    assert message.startswith(f"migration on {warehouse.where} failed: "), message
    assert "099_broken" in message and "\n" not in message
    if isinstance(warehouse_location, Lake):
        assert warehouse.where.startswith("lake "), warehouse.where
    else:
        assert warehouse.where == str(warehouse_location)
    for name in _SECRETS:
        value = os.environ.get(name)
        assert not value or value not in message, f"{name}'s value is in: {message}"
