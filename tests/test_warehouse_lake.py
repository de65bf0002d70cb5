"""The DuckLake backend beyond what every backend shares (tests/test_warehouse.py):
several sites writing at once, readers never waiting for writers, replays stored once,
the schema translated, and the lake opened through the config and the plain CLI."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.analysis.orchestrate import run_analysis
from pipeline.cli import app
from pipeline.warehouse import Lake, Warehouse, WarehouseError
from pipeline.warehouse.ducklake import _attach_race
from pipeline.warehouse.errors import LakeUnreachable
from pipeline.warehouse.extensions import extension_file
from pipeline.warehouse.lake_schema import for_ducklake
from pipeline.warehouse.migrations import SchemaError, refresh_bundled
from probes.ids import new_run_id
from probes.result import ProbeResult
from probes.simulator import bundled_scenario, configure
from probes.simulator.store import write_history
from tests.support.postgres import USER, PostgresServer
from tests.support.seaweedfs import BUCKET, WRITE_ONLY_KEY_ID, WRITE_ONLY_SECRET, S3Server
from tests.support.waiting import read_line, wait_until
from tests.support.warehouses import LAKE_BACKENDS
from tests.test_config import VALID
from tests.test_duckdb_cli import cli_rows

T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)
WRITERS_DEADLINE_S = 240.0
READ_DEADLINE_S = 20.0
GONE_DEADLINE_S = 20.0  # a removed catalog fails well before its lock_wait_s below
GONE_LOCK_WAIT_S = 60.0
COMMIT_TOGETHER_DEADLINE_S = 60.0

on_every_lake = pytest.mark.parametrize("warehouse", LAKE_BACKENDS, indirect=True)


def rows(n: int, *, site: str = "here", start: datetime = T0) -> list[dict[str, object]]:
    return [
        ProbeResult(
            run_id=new_run_id(),
            started_at=start + timedelta(seconds=i),
            provider="alpha",
            model="m",
            probe="short",
            task_family="arithmetic",
            error_class="ok",
            ttft_ms=100.0 + i,
            probe_site=site,
        ).as_row()
        for i in range(n)
    ]


def lake_of(warehouse: Warehouse) -> Lake:
    store = warehouse._store  # the test needs the same lake for a second process
    assert hasattr(store, "lake")
    lake = store.lake
    assert isinstance(lake, Lake)
    return lake


def test_create_table_keeps_columns_types_not_null_and_defaults_only() -> None:
    (plain,) = for_ducklake(
        "-- a comment\nCREATE TABLE t (id VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL"
        " DEFAULT 'a' CHECK (kind IN ('a', 'b')), n INTEGER, UNIQUE (n))"
    )
    assert plain == (
        'CREATE TABLE "t" ("id" VARCHAR NOT NULL, "kind" VARCHAR NOT NULL DEFAULT \'a\', '
        '"n" INTEGER)'
    )
    assert for_ducklake("CREATE INDEX i ON t (n)") == []
    assert for_ducklake("DROP INDEX IF EXISTS i") == []
    alter = "ALTER TABLE t ADD COLUMN m BIGINT"
    assert for_ducklake(alter) == [alter]


@on_every_lake
def test_a_lake_is_not_a_file_and_says_where_it_is(warehouse: Warehouse) -> None:
    assert warehouse.where.startswith("lake ")
    with pytest.raises(WarehouseError, match="is a lake, not a single file"):
        _ = warehouse.path


@on_every_lake
def test_a_replay_from_a_restarted_writer_adds_nothing(warehouse: Warehouse) -> None:
    batch = rows(20)
    assert warehouse.insert_rows("probe_results", batch, key="run_id") == 20
    restarted = Warehouse(lake_of(warehouse))
    try:
        assert restarted.insert_rows("probe_results", batch[5:] + rows(3), key="run_id") == 3
        counts = restarted.query("SELECT count(*), count(DISTINCT run_id) FROM probe_results")
    finally:
        restarted.close()
    assert counts.row(0) == (23, 23)


@on_every_lake
def test_a_reader_does_not_wait_for_an_open_write_transaction(warehouse: Warehouse) -> None:
    warehouse.insert_rows("probe_results", rows(4), key="run_id")
    reader = Warehouse(lake_of(warehouse))
    try:
        with warehouse.connect() as writer:
            writer.execute("BEGIN TRANSACTION")
            writer.execute(
                "INSERT INTO probe_results (run_id, started_at, provider, model, probe,"
                " task_family) VALUES ('uncommitted', now(), 'p', 'm', 'x', 'arithmetic')"
            )
            started = time.monotonic()
            seen = reader.query("SELECT count(*) AS n FROM probe_results")["n"][0]
            waited = time.monotonic() - started
            writer.execute("COMMIT")
        assert seen == 4 and waited < READ_DEADLINE_S
        assert reader.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 5
    finally:
        reader.close()


@on_every_lake
def test_three_sites_writing_at_once_land_every_row_once(warehouse: Warehouse) -> None:
    lake = lake_of(warehouse)
    command = [sys.executable, "-m", "tests.support.writer_loop", lake.catalog]
    writers = [
        subprocess.Popen(
            [*command, "--lake-data", lake.data_path, "--site", site, "--batches", "8"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for site in ("frankfurt", "virginia", "shanghai")
    ]
    for writer in writers:
        assert read_line(writer, WRITERS_DEADLINE_S, "the writer's first batch") == "started"
    for writer in writers:
        assert read_line(writer, WRITERS_DEADLINE_S, "the writer's end") == "done"
        _, errors = writer.communicate(timeout=WRITERS_DEADLINE_S)
        assert writer.returncode == 0, errors
    per_site = warehouse.query(
        "SELECT probe_site, count(*) AS n, count(DISTINCT run_id) AS u FROM probe_results"
        " GROUP BY ALL ORDER BY ALL"
    )
    assert per_site.rows() == [("frankfurt", 40, 40), ("shanghai", 40, 40), ("virginia", 40, 40)]


@pytest.mark.parametrize("warehouse_location", LAKE_BACKENDS, indirect=True)
def test_writers_that_start_on_a_new_lake_at_once_all_migrate_it(
    warehouse_location: Path | Lake,
) -> None:
    """Each writer migrates the fresh lake first. They used to race: the catalog let one
    commit of each migration win and the losers tried again, which on a loaded machine
    outlasted their 30 s ("database is locked" on SQLite, whose stale writers get no busy
    wait; 'Table entry "probe_results" does not have any columns' from DuckLake; on
    PostgreSQL the catalog's own first CREATE TABLE colliding). Now they take the lake's
    schema lock in turn (``lake_schema_lock``): the first migrates, the others find it done."""
    assert isinstance(warehouse_location, Lake)
    catalog, data = warehouse_location.catalog, warehouse_location.data_path
    command = [sys.executable, "-m", "tests.support.writer_loop", catalog, "--lake-data", data]
    sites = ("frankfurt", "virginia", "shanghai", "sydney")
    writers = [
        subprocess.Popen(
            [*command, "--site", site, "--batches", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for site in sites
    ]
    deadline = time.monotonic() + WRITERS_DEADLINE_S  # one for them all, not one each
    try:
        for site, writer in zip(sites, writers, strict=True):
            for line in ("started", "done"):  # a writer that fails says why (its stderr)
                left = max(deadline - time.monotonic(), 0.0)
                assert read_line(writer, left, f"{site}'s {line!r}") == line
            assert writer.wait(timeout=max(deadline - time.monotonic(), 1.0)) == 0
    finally:
        for writer in writers:  # on a failure, none is left running with open pipes
            if writer.poll() is None:
                writer.kill()
            writer.wait(timeout=30)
            for pipe in (writer.stdout, writer.stderr):
                if pipe is not None:
                    pipe.close()
    stored = Warehouse(warehouse_location).query(
        "SELECT count(DISTINCT run_id) AS n FROM probe_results"
    )
    assert stored["n"][0] == 4 * 5


@pytest.mark.parametrize(
    ("message", "race"),
    [
        # the writers' race as CI met it: the probe read hit the lock of a writer
        # creating the schema, and DuckLake reported only the aborted transaction
        (
            "cannot open warehouse lake sqlite:/x/catalog.sqlite (data /x/data/): "
            "TransactionContext Error: Failed to probe DuckLake metadata: Current "
            "transaction is aborted (please ROLLBACK)",
            True,
        ),
        (
            'Failed to probe DuckLake metadata: Failed to execute query "PRAGMA '
            'journal_mode=WAL": database is locked',
            True,
        ),
        ("Failed to initialize DuckLake: duplicate key value violates unique constraint", True),
        ("Failed to probe DuckLake metadata: permission denied for table ducklake_metadata", False),
        ("DATA_PATH parameter does not match existing data path in the catalog", False),
        ("Current transaction is aborted (please ROLLBACK)", False),
    ],
)
def test_an_attach_is_tried_again_only_when_it_lost_a_race(message: str, race: bool) -> None:
    assert _attach_race(message) is race


def test_the_duckdb_cli_attaches_a_lake_and_sees_the_views(tmp_path: Path) -> None:
    lake = Lake(catalog=f"sqlite:{tmp_path / 'catalog.sqlite'}", data_path=str(tmp_path / "data"))
    warehouse = Warehouse(lake)
    try:
        warehouse.insert_rows("probe_results", rows(6, site="a") + rows(4, site="b"), key="run_id")
    finally:
        warehouse.close()
    attach = (
        f"LOAD '{extension_file('ducklake')}'; LOAD '{extension_file('sqlite_scanner')}'; "
        f"ATTACH 'ducklake:{lake.catalog}' AS w (READ_ONLY); USE w; "
    )
    seen = cli_rows(None, attach + "SELECT provider, n FROM hourly")
    assert seen == [{"provider": "alpha", "n": "10"}]


def test_nerfwatch_sql_reads_the_lake_its_config_names(tmp_path: Path) -> None:
    config = tmp_path / "nerfwatch.toml"
    lake_lines = (
        'backend = "ducklake"\ncatalog = "sqlite:lake/catalog.sqlite"\ndata_path = "lake/data"'
    )
    config.write_text(
        VALID.replace('path = "data/nw.duckdb"', f'path = "data/nw.duckdb"\n{lake_lines}', 1),
        encoding="utf-8",
    )
    missing = CliRunner().invoke(app, ["sql", "SELECT 1", "--config", str(config)])
    assert missing.exit_code == 2 and "no warehouse at lake sqlite:" in missing.output
    lake = Lake(f"sqlite:{tmp_path / 'lake' / 'catalog.sqlite'}", str(tmp_path / "lake" / "data"))
    warehouse = Warehouse(lake)
    try:
        warehouse.insert_rows("probe_results", rows(3), key="run_id")
    finally:
        warehouse.close()
    query = "SELECT count(*) AS n FROM probes"
    result = CliRunner().invoke(app, ["sql", query, "--config", str(config), "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["n", "3"]
    assert not (tmp_path / "data" / "nw.duckdb").exists()  # the file backend was not touched


@on_every_lake
def test_data_files_land_under_the_lakes_data_path(warehouse: Warehouse) -> None:
    """Past DuckLake's inlining limit (10 rows) a commit writes Parquet where configured:
    the folder, or the bucket of the S3 server."""
    lake = lake_of(warehouse)
    assert warehouse.insert_rows("probe_results", rows(50), key="run_id") == 50
    with warehouse.connect() as con:
        files = [
            row[0]
            for row in con.execute(
                "SELECT data_file FROM ducklake_list_files('warehouse', 'probe_results')"
            ).fetchall()
        ]
        stored = con.execute("SELECT count(*) FROM glob(?)", [f"{lake.data_path}**"]).fetchone()
    assert files and all(path.startswith(lake.data_path) for path in files), files
    assert stored is not None and stored[0] >= len(files)
    assert warehouse.query("SELECT count(*) AS n FROM probes")["n"][0] == 50


def test_wrong_s3_credentials_fail_in_one_line_without_the_secret(
    tmp_path: Path, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value")
    lake = Lake(f"sqlite:{tmp_path / 'catalog.sqlite'}", f"s3://{BUCKET}/wrong-credentials/")
    warehouse = Warehouse(lake)
    try:
        with pytest.raises(WarehouseError) as caught:
            warehouse.insert_rows("probe_results", rows(50), key="run_id")
    finally:
        warehouse.close()
    message = str(caught.value)
    assert "\n" not in message and "wrong-secret-value" not in message
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(WarehouseError, match="AWS_SECRET_ACCESS_KEY is not set"):
        Warehouse(lake).migrate()


@pytest.mark.slow
@on_every_lake
def test_analysis_on_a_lake_finds_the_phases_it_finds_in_a_file(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """The same simulated history, analyzed in a file and in a lake: the same phases."""
    scenario = configure(bundled_scenario())
    end = datetime(2026, 11, 1, tzinfo=UTC)
    file = Warehouse(tmp_path / "file.duckdb")
    found = []
    for each in (file, warehouse):
        write_history(each, scenario, days=40, end=end, seed=1, options=scenario.history)
        analysis_id = run_analysis(each, since=None, source=None, seed=0)
        found.append(
            each.query(
                "SELECT provider, phase_no, stage, start_at, round(severity, 6) AS severity"
                " FROM phases WHERE analysis_id = ? ORDER BY ALL",
                [analysis_id],
            ).rows()
        )
    assert len(found[0]) >= 6
    assert found[1] == found[0]


def test_migrate_copies_a_file_into_a_lake_and_back_resumably(tmp_path: Path) -> None:
    file = Warehouse(tmp_path / "nerfwatch.duckdb")
    file.insert_rows("probe_results", rows(40, site="a"), key="run_id")
    file.execute(
        "INSERT INTO analysis_runs (analysis_id, started_at, status) VALUES ('an1', now(), 'done');"
        " INSERT INTO phases (analysis_id, provider, phase_no, label, stage, start_at)"
        " VALUES ('an1', 'alpha', 0, 'stable', 'stable', now())"
    )
    catalog = f"sqlite:{tmp_path / 'lake.sqlite'}"
    to_lake = ["warehouse", "migrate", "--db", str(file.path), "--to", "ducklake"]
    to_lake += ["--catalog", catalog, "--data-path", str(tmp_path / "lake")]
    first = CliRunner().invoke(app, to_lake)
    assert first.exit_code == 0, first.output
    assert "probe_results: 40 rows in the source, 40 in the target (40 copied now)" in first.output
    assert "phases: 1 rows in the source, 1 in the target (1 copied now)" in first.output
    assert "verified: every row of" in first.output

    file.insert_rows("probe_results", rows(5, site="b", start=T0 + timedelta(days=1)), key="run_id")
    again = CliRunner().invoke(app, to_lake)  # catches up, copies nothing twice
    assert again.exit_code == 0, again.output
    assert "probe_results: 45 rows in the source, 45 in the target (5 copied now)" in again.output
    assert "phases: 1 rows in the source, 1 in the target (0 copied now)" in again.output

    lake = Warehouse(Lake(catalog, str(tmp_path / "lake")))
    try:
        sites = lake.query("SELECT probe_site, count(*) FROM probe_results GROUP BY ALL ORDER BY 1")
    finally:
        lake.close()
    assert sites.rows() == [("a", 40), ("b", 5)]
    config = tmp_path / "lake.toml"
    config.write_text(
        VALID.replace(
            'path = "data/nw.duckdb"',
            f'path = "data/nw.duckdb"\nbackend = "ducklake"\ncatalog = "{catalog}"\n'
            f'data_path = "{tmp_path / "lake"}"',
            1,
        ),
        encoding="utf-8",
    )
    back_path = tmp_path / "back.duckdb"
    back = CliRunner().invoke(
        app,
        [
            "warehouse",
            "migrate",
            "--config",
            str(config),
            "--to",
            "duckdb",
            "--path",
            str(back_path),
        ],
    )
    assert back.exit_code == 0, back.output
    assert Warehouse(back_path).query("SELECT count(*) AS n FROM probes")["n"][0] == 45


def test_migrate_refuses_a_target_it_cannot_name(tmp_path: Path) -> None:
    file = Warehouse(tmp_path / "nerfwatch.duckdb")
    file.migrate()
    command = ["warehouse", "migrate", "--db", str(file.path)]
    for args, says in (
        (["--to", "ducklake", "--catalog", "mysql:x", "--data-path", "d"], "sqlite:PATH"),
        (["--to", "ducklake"], "needs --catalog and --data-path"),
        (["--to", "parquet"], '"duckdb" or "ducklake"'),
        (["--to", "duckdb", "--path", str(file.path)], "the warehouse itself"),
    ):
        result = CliRunner().invoke(app, command + args)
        assert result.exit_code == 2 and says in result.output, result.output


def test_migrate_into_a_lake_it_cannot_read_back_fails_in_one_line(
    tmp_path: Path, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An S3 key that may write but not read (a policy granting PutObject alone): the
    copy of a table commits, and checking it against the source then reads the new file
    back and is refused. That raw DuckDB error left ``warehouse migrate`` as a traceback;
    it is one line naming the table and the lake, without the key, and exit status 1."""
    for name, value in s3_server.environment(write_only=True).items():
        monkeypatch.setenv(name, value)
    file = Warehouse(tmp_path / "nerfwatch.duckdb")
    file.execute(  # past DuckLake's inlining limit (10 rows): the copy writes a data file
        "INSERT INTO analysis_runs (analysis_id, started_at, status)"
        " SELECT 'an' || i, TIMESTAMPTZ '2026-11-02 10:00:00+00', 'done' FROM range(50) t(i)"
    )
    catalog = f"sqlite:{tmp_path / 'lake.sqlite'}"
    command = ["warehouse", "migrate", "--db", str(file.path), "--to", "ducklake"]
    command += ["--catalog", catalog, "--data-path", f"s3://{BUCKET}/write-only/"]
    result = CliRunner().invoke(app, command)
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "analysis_runs" in lines[0] and f"lake {catalog}" in lines[0], lines[0]
    assert "403" in lines[0], lines[0]
    assert WRITE_ONLY_SECRET not in result.output and WRITE_ONLY_KEY_ID not in result.output


@pytest.mark.parametrize("fault", ["removed", "a folder"])
def test_a_lake_whose_catalog_goes_away_under_an_open_store_fails_in_one_line(
    tmp_path: Path, fault: str
) -> None:
    """A store keeps its lake attached between operations (the daemon's does for days).
    When the SQLite catalog is removed, or a folder stands in its place (a restore gone
    wrong), the ``USE`` each operation starts with let DuckDB's own error out; it is a
    WarehouseError naming the lake, and once the catalog is back the store works again."""
    catalog = tmp_path / "catalog.sqlite"
    warehouse = Warehouse(Lake(f"sqlite:{catalog}", str(tmp_path / "data")))
    try:
        warehouse.insert_rows("probe_results", rows(3), key="run_id")
        assert warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 3
        kept = catalog.rename(tmp_path / "kept.sqlite")
        if fault == "a folder":
            catalog.mkdir()
        for operation in (
            lambda: warehouse.query("SELECT count(*) AS n FROM probe_results"),
            lambda: warehouse.execute("DELETE FROM probe_results WHERE false"),
        ):
            with pytest.raises(WarehouseError) as caught:
                operation()
            message = str(caught.value)
            assert "\n" not in message and f"lake sqlite:{catalog}" in message, message
        if catalog.is_dir():
            catalog.rmdir()
        shutil.move(kept, catalog)
        assert warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 3
    finally:
        warehouse.close()


def test_a_removed_postgres_catalog_fails_at_once_not_after_lock_wait(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    """The catalog's database is dropped under a store kept open (the daemon's, for days).
    A removed catalog is not a busy one: migrate (the daemon's warm start, every new
    writer) failed only after retrying for ``lock_wait_s``; it now fails on the first
    try with the one-line LakeUnreachable naming the lake."""
    database = postgres_server.new_database()
    lake = Lake(f"postgres:{postgres_server.conninfo(database)}", str(tmp_path / "data"))
    warehouse = Warehouse(lake, lock_wait_s=GONE_LOCK_WAIT_S)
    try:
        warehouse.insert_rows("probe_results", rows(3), key="run_id")
        postgres_server.sql("postgres", f"DROP DATABASE {database} WITH (FORCE)")
        with ThreadPoolExecutor(1) as pool:
            migrating = pool.submit(warehouse.migrate)
            wait_until(
                migrating.done,
                GONE_DEADLINE_S,
                f"migrate to fail on a removed catalog (lock_wait_s {GONE_LOCK_WAIT_S:.0f})",
            )
            with pytest.raises(LakeUnreachable) as caught:
                migrating.result()
        message = str(caught.value)
        assert "\n" not in message and f"lake {lake.catalog}" in message, message
        assert f'database "{database}" does not exist' in message, message
    finally:
        warehouse.close()


def test_a_busy_postgres_catalog_is_still_waited_for(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    """Another session holds the catalog's snapshot table locked; with a lock_timeout in the
    conninfo, each attempt fails with PostgreSQL's lock timeout. That catalog is busy, not
    gone: migrate (and an insert) try again until the lock is released, then succeed."""
    database = postgres_server.new_database()
    conninfo = f"{postgres_server.conninfo(database)} options='-c lock_timeout=100'"
    lake = Lake(f"postgres:{conninfo}", str(tmp_path / "data"))
    warehouse = Warehouse(lake, lock_wait_s=GONE_LOCK_WAIT_S)
    log = postgres_server.folder / "postgres.log"
    timeouts_before = log.read_text(errors="replace").count("due to lock timeout")
    psql = [str(postgres_server.bin_dir / "psql"), "-h", "127.0.0.1", "-p"]
    holder = subprocess.Popen(
        [*psql, str(postgres_server.port), "-U", USER, "-d", database, "-qAt"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdin is not None
    try:
        warehouse.insert_rows("probe_results", rows(3), key="run_id")
        holder.stdin.write(
            "BEGIN; LOCK TABLE ducklake_snapshot IN ACCESS EXCLUSIVE MODE; SELECT 'locked';\n"
        )
        holder.stdin.flush()
        assert read_line(holder, READ_DEADLINE_S, "the lock holder's 'locked'") == "locked"
        with ThreadPoolExecutor(2) as pool:
            migrating = pool.submit(warehouse.migrate)
            inserting = pool.submit(warehouse.insert_rows, "probe_results", rows(2), key="run_id")
            wait_until(
                lambda: (
                    log.read_text(errors="replace").count("due to lock timeout")
                    >= timeouts_before + 2
                ),
                READ_DEADLINE_S,
                "both operations to meet PostgreSQL's lock timeout",
            )
            assert not migrating.done() and not inserting.done(), "a busy catalog gave up"
            holder.stdin.write("COMMIT;\n")
            holder.stdin.close()
            wait_until(
                lambda: migrating.done() and inserting.done(),
                READ_DEADLINE_S,
                "migrate and insert once the lock is released",
            )
            assert migrating.result() == [] and inserting.result() == 2
        assert warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 5
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(READ_DEADLINE_S)
        for pipe in (holder.stdin, holder.stdout, holder.stderr):
            if pipe is not None:
                pipe.close()
        warehouse.close()


def test_a_lakes_messages_never_carry_the_secrets_it_is_opened_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What every lake error passes through: the S3 key pair and PGPASSWORD, wherever an
    engine's message quotes them, become ***, and the message is one line."""
    secrets = {
        "AWS_ACCESS_KEY_ID": "AKIA-test-key-id",
        "AWS_SECRET_ACCESS_KEY": "s3-secret/with+chars",
        "PGPASSWORD": "pg-pass-word",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    lake = Lake("postgres:host=127.0.0.1 dbname=nw user=nw", "s3://bucket/prefix/")
    text = "refused:\n key AKIA-test-key-id secret s3-secret/with+chars\n password pg-pass-word"
    assert lake.scrub(text) == "refused: key *** secret *** password ***"


class _CommitTogether:
    """A lake connection whose COMMIT waits until the other site's reaches its own: two
    sites' transactions then overlap for certain, as they may at any start-up. A site
    whose refresh failed before its commit breaks the barrier, and the other commits."""

    def __init__(self, con: duckdb.DuckDBPyConnection, barrier: threading.Barrier) -> None:
        self._con, self._barrier = con, barrier

    def execute(self, sql: str, params: object = None) -> duckdb.DuckDBPyConnection:
        if sql == "COMMIT":
            with contextlib.suppress(threading.BrokenBarrierError):
                self._barrier.wait(timeout=COMMIT_TOGETHER_DEADLINE_S)
        return self._con.execute(sql, params)


@on_every_lake
def test_two_sites_loading_the_release_calendar_at_once_store_it_once(
    warehouse: Warehouse,
) -> None:
    """Both sites of a new lake load the bundled releases and incidents. A lake has no
    keys, and two inserts into one table both commit, so the anti-join alone let each
    site add a full copy (146 doubled rows, seen with two daemons on a fresh lake). The
    refresh must conflict instead: one commit wins, the other is refused as a transient
    conflict, and its retry finds the calendar loaded."""
    with warehouse.connect() as con:  # back to a lake whose calendar was never loaded
        con.execute("DELETE FROM releases WHERE origin = 'bundled'")
        con.execute("DELETE FROM incidents WHERE origin = 'bundled'")
        con.execute("DELETE FROM _refreshed WHERE kind = 'bundled_reference'")
    sites = [Warehouse(lake_of(warehouse)) for _ in range(2)]
    barrier = threading.Barrier(len(sites))

    def load(site: Warehouse) -> BaseException | None:
        with site._store.connect(read_only=False) as con:  # as migrate does, not via it
            try:
                refresh_bundled(
                    cast(duckdb.DuckDBPyConnection, _CommitTogether(con, barrier)), for_ducklake
                )
            except (SchemaError, duckdb.Error) as exc:  # failed before its commit, or at it
                barrier.abort()
                return exc
        return None

    try:
        with ThreadPoolExecutor(len(sites)) as pool:
            outcomes = list(pool.map(load, sites))
        refused = [exc for exc in outcomes if exc is not None]
        assert len(refused) <= 1, refused
        for exc in refused:  # what Warehouse.migrate retries, as the daemon's start does
            cause = exc if isinstance(exc, duckdb.Error) else exc.__cause__
            assert isinstance(cause, duckdb.Error) and sites[0]._store.transient(cause), exc
        Warehouse(lake_of(warehouse)).migrate()
        counts = warehouse.query(
            "SELECT (SELECT count(*) FROM releases) AS releases,"
            " (SELECT count(DISTINCT (vendor, model, release_date)) FROM releases) AS r_keys,"
            " (SELECT count(*) FROM incidents) AS incidents,"
            " (SELECT count(DISTINCT (vendor, start_date, summary)) FROM incidents) AS i_keys"
        ).row(0, named=True)
    finally:
        for site in sites:
            site.close()
    assert counts["releases"] > 0 and counts["incidents"] > 0
    assert (counts["releases"], counts["incidents"]) == (counts["r_keys"], counts["i_keys"])


def test_a_query_whose_lake_data_are_out_of_reach_names_the_lake_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With SeaweedFS stopped, 'nerfwatch sql' said only "IO Error: Could not connect to
    server error for HTTP GET to '...parquet'" with status 2, as if the SQL were bad. The
    lake's data out of reach is the lake's failure: one line naming it, status 1, and the
    query works again once the data are back. (Here the data folder is moved away.)"""
    monkeypatch.setenv("NW_TEST_KEY", "sk-test-secret-value")
    monkeypatch.setenv("NW_TEST_HOOK", "http://127.0.0.1:9/hook")
    config = tmp_path / "nerfwatch.toml"
    lake_lines = (
        'backend = "ducklake"\ncatalog = "sqlite:lake/catalog.sqlite"\ndata_path = "lake/data"'
    )
    config.write_text(
        VALID.replace('path = "data/nw.duckdb"', f'path = "data/nw.duckdb"\n{lake_lines}', 1),
        encoding="utf-8",
    )
    data = tmp_path / "lake" / "data"
    warehouse = Warehouse(Lake(f"sqlite:{tmp_path / 'lake' / 'catalog.sqlite'}", str(data)))
    try:
        warehouse.insert_rows("probe_results", rows(3), key="run_id")
        with warehouse.connect() as con:  # into Parquet files, not rows inlined in the catalog
            con.execute("CALL ducklake_flush_inlined_data('warehouse')")
    finally:
        warehouse.close()
    assert list(data.rglob("*.parquet"))
    query = [
        "sql",
        "SELECT count(DISTINCT run_id) AS n FROM probe_results",
        "--config",
        str(config),
    ]
    data.rename(tmp_path / "lake" / "away")
    gone = CliRunner().invoke(app, [*query, "-f", "csv"])
    assert gone.exit_code == 1, gone.output
    (line,) = gone.output.splitlines()
    assert line.startswith(f"error: cannot read the data of lake sqlite:{tmp_path}"), line
    (tmp_path / "lake" / "away").rename(data)
    back = CliRunner().invoke(app, [*query, "-f", "csv"])
    assert back.exit_code == 0 and back.output.splitlines() == ["n", "3"], back.output


@pytest.mark.parametrize(
    ("message", "quoted"),
    [
        # what DuckDB said with SeaweedFS stopped (path-style URL of the lake's bucket)
        (
            "IO Error: Could not connect to server error for HTTP GET to 'http://127.0.0.1:"
            "46069/nerfwatch/lake/main/probe_results/ducklake-01a2.parquet'",
            True,
        ),
        ("IO Error: Unable to connect to URL 's3://nerfwatch/lake/main/x.parquet'", True),
        ("IO Error: HTTP GET error on 'https://nerfwatch.s3.amazonaws.com/lake/main/x'", True),
        ("IO Error: No files found that match the pattern 'mine.csv'", False),
        ("IO Error: HTTP GET error on 'http://127.0.0.1:9/other/lake/x.parquet'", False),
    ],
)
def test_a_lake_knows_an_error_about_its_own_data(message: str, quoted: bool) -> None:
    assert Lake("sqlite:/x/c.sqlite", "s3://nerfwatch/lake").quotes_its_data(message) is quoted
