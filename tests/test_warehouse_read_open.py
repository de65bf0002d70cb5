"""A read opens the file once: the check for missing migrations uses the read's connection.

Each open of a DuckDB file costs ~12 ms and takes its lock; a reader (``nerfwatch sql``,
the report) used to open it once to read ``_migrations`` and again to read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import duckdb
import pytest

from pipeline.warehouse import Warehouse
from pipeline.warehouse.migrations import load_migrations


def _counting_opens(warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The ``read_only`` of every connection the warehouse's file store opens from now on
    (the store is real; only its ``connect`` is wrapped to count)."""
    store = warehouse._store
    real = store.connect
    opened: list[bool] = []

    @contextmanager
    def counted(*, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        opened.append(read_only)
        with real(read_only=read_only) as con:
            yield con

    def connect(*, read_only: bool) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        return counted(read_only=read_only)

    monkeypatch.setattr(store, "connect", connect)
    return opened


def test_a_first_read_of_an_up_to_date_file_opens_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "nerfwatch.duckdb"
    Warehouse(path).migrate()
    reader = Warehouse(path)
    opened = _counting_opens(reader, monkeypatch)
    assert reader.query("SELECT count(*) AS n FROM _migrations")["n"].to_list() == [
        len(load_migrations())
    ]
    assert opened == [True]  # the old code: [True, True]
    reader.query("SELECT 1")
    assert opened == [True, True]


def test_a_first_read_of_a_file_behind_migrates_it_then_reads(tmp_path: Path) -> None:
    path = tmp_path / "nerfwatch.duckdb"
    Warehouse(path, migrations=load_migrations()[:-1]).migrate()
    assert Warehouse(path).query("SELECT max(number) AS n FROM _migrations")["n"].to_list() == [
        load_migrations()[-1].number
    ]


def test_a_read_of_a_newer_warehouse_stays_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "nerfwatch.duckdb"
    Warehouse(path).migrate()
    reader = Warehouse(path, migrations=load_migrations()[:-1])  # an older nerfwatch
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    opened = _counting_opens(reader, monkeypatch)
    assert reader.query("SELECT count(*) AS n FROM probe_results")["n"].to_list() == [0]
    assert opened == [True]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
