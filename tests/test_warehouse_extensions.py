"""DuckDB 1.5.5 and its extensions from the installed wheels: loaded offline, never fetched;
a file from a newer DuckDB refused in one line."""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import pytest

from pipeline.warehouse import Warehouse, WarehouseError
from pipeline.warehouse.extensions import extension_file, load_extension, offline

SHIPPED = ("ducklake", "httpfs", "postgres_scanner", "sqlite_scanner")
DEAD_REPOSITORY = "http://127.0.0.1:9"  # the discard port: nothing listens, nothing is fetched
NEWER_FILE = Path(__file__).parent / "fixtures/duckdb/written_by_duckdb_2.0.0.duckdb.gz"


def offline_connection(extension_dir: Path) -> duckdb.DuckDBPyConnection:
    """A connection that could only download into ``extension_dir``, from a dead address."""
    con = offline(duckdb.connect(":memory:"))
    con.execute(f"SET extension_directory = '{extension_dir}'")
    con.execute(f"SET custom_extension_repository = '{DEAD_REPOSITORY}'")
    return con


def test_duckdb_is_the_pinned_version() -> None:
    assert duckdb.__version__ == "1.5.5"


@pytest.mark.parametrize("name", SHIPPED)
def test_each_extension_loads_from_its_wheel_with_no_network(name: str, tmp_path: Path) -> None:
    con = offline_connection(tmp_path / "ext")
    load_extension(con, name)
    load_extension(con, name)  # twice is harmless
    loaded = con.execute(
        "SELECT loaded FROM duckdb_extensions() WHERE extension_name = ?", [name]
    ).fetchone()
    assert loaded == (True,)
    assert extension_file(name).name == f"{name}.duckdb_extension"
    assert not (tmp_path / "ext").exists() or not any((tmp_path / "ext").rglob("*"))


def test_a_statement_needing_an_unloaded_extension_fails_instead_of_downloading(
    tmp_path: Path,
) -> None:
    con = offline_connection(tmp_path / "ext")
    with pytest.raises(duckdb.Error, match="sqlite"):
        con.execute(f"ATTACH 'sqlite:{tmp_path / 'x.sqlite'}' AS x")
    assert not (tmp_path / "ext").exists() or not any((tmp_path / "ext").rglob("*"))


def test_a_lake_attaches_on_a_sqlite_catalog_with_the_shipped_extensions(tmp_path: Path) -> None:
    con = offline_connection(tmp_path / "ext")
    load_extension(con, "ducklake")
    load_extension(con, "sqlite_scanner")
    con.execute(
        f"ATTACH 'ducklake:sqlite:{tmp_path / 'catalog.sqlite'}' AS lake "
        f"(DATA_PATH '{tmp_path / 'data'}/')"
    )
    con.execute("CREATE TABLE lake.t AS SELECT 42 AS x")
    assert con.execute("SELECT x FROM lake.t").fetchall() == [(42,)]


def test_an_unknown_extension_is_named_in_the_error() -> None:
    with pytest.raises(WarehouseError, match="'spatial' is not one nerfwatch ships"):
        extension_file("spatial")


def test_a_file_written_by_duckdb_2_is_refused_in_one_line_that_says_what_to_do(
    tmp_path: Path,
) -> None:
    path = tmp_path / "nerfwatch.duckdb"
    path.write_bytes(gzip.decompress(NEWER_FILE.read_bytes()))
    for read in (
        lambda: Warehouse(path).query("SELECT count(*) FROM probe_results"),
        lambda: Warehouse(path).migrate(),
    ):
        with pytest.raises(WarehouseError) as caught:
            read()
        message = str(caught.value)
        assert "\n" not in message
        assert f"warehouse {path} was written by a newer DuckDB (storage version 999" in message
        assert "STORAGE_VERSION 'v1.5.0'" in message
    assert path.read_bytes() == gzip.decompress(NEWER_FILE.read_bytes())  # left untouched
