"""Upgrading with data in place: a warehouse and spool an older nerfwatch wrote.

Old warehouses are rebuilt from ``tests/fixtures/upgrade/from_<commit>`` (each file's own
DDL and rows, cut from a file that commit wrote; ``make_fixture.py`` says how), so no old
code runs here: ace7eeb (schema 005, ``_migrations`` before its checksum column, a spool
segment already stored) and 8a03f51 (schema 011, probes and daemon events still spooled).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.daemon import Daemon, DaemonError, DaemonTuning
from pipeline.daemon.flush import Flusher, SegmentWriter
from pipeline.daemon.spool import Spool
from pipeline.warehouse import Warehouse
from pipeline.warehouse.errors import WarehouseBusy, WarehouseError
from pipeline.warehouse.migrations import load_migrations
from tests.support.daemon import make_config
from tests.support.lock_holder import holding

FIXTURES = Path(__file__).parent / "fixtures" / "upgrade"
OLDEST = FIXTURES / "from_ace7eeb"
OLD_SCHEMAS = {"from_ace7eeb": 5, "from_8a03f51": 11}  # each commit's last migration


def _old_warehouse(folder: Path, fixture: Path = OLDEST) -> Path:
    """An old file (its schema, views and ``_migrations`` as that version left them) and
    its spool, in ``folder``."""
    path = folder / "nerfwatch.duckdb"
    con = duckdb.connect(str(path))
    for statement in con.extract_statements((fixture / "schema.sql").read_text("utf-8")):
        con.execute(statement)
    for rows in sorted(fixture.glob("*.parquet")):
        con.execute(f'INSERT INTO "{rows.stem}" SELECT * FROM read_parquet(?)', [str(rows)])
    con.close()
    shutil.copytree(fixture / "spool", folder / "spool")
    return path


def _ids(path: Path, sql: str) -> set[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {row[0] for row in con.execute(sql).fetchall()}
    finally:
        con.close()


def _spooled(spool: Path, key: str) -> set[str]:
    """The ``key`` of each spooled line that has one (``run_id``: probes; ``event_id``)."""
    lines = (line for seg in spool.glob("seg-*.jsonl") for line in seg.read_text().splitlines())
    return {row[key] for row in map(json.loads, lines) if key in row}


def _columns(path: Path) -> set[tuple[str, str, str]]:
    """Every table column with its type: what the code may read or write."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        query = "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE NOT internal"
        return set(con.execute(query).fetchall())
    finally:
        con.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _schema_version(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return int(con.execute("SELECT max(number) FROM _migrations").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


@pytest.mark.parametrize("fixture", sorted(OLD_SCHEMAS))
def test_an_old_warehouse_and_spool_upgrade_keeping_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixture: str
) -> None:
    path = _old_warehouse(tmp_path, FIXTURES / fixture)
    stored = _ids(path, "SELECT run_id FROM probe_results")
    events = _ids(path, "SELECT event_id FROM daemon_events")
    spooled = _spooled(tmp_path / "spool", "run_id")
    spooled_events = _spooled(tmp_path / "spool", "event_id")
    assert stored and events and spooled

    applied = Warehouse(path).migrate()
    newest = load_migrations()[-1].number
    assert [int(name[:3]) for name in applied] == list(range(OLD_SCHEMAS[fixture] + 1, newest + 1))
    assert Warehouse(path).migrate() == []  # idempotent: a second open applies nothing
    Warehouse(tmp_path / "new.duckdb").migrate()
    assert _columns(path) == _columns(tmp_path / "new.duckdb")  # as if made by today's code

    spool = Spool(tmp_path / "spool")
    spool.open()
    flusher = Flusher(spool, SegmentWriter(Warehouse(path), spool.directory))
    outcome = flusher.flush_once()
    flusher.close()
    spool.close()
    assert outcome.rows == len(spooled) + len(spooled_events)
    assert _ids(path, "SELECT run_id FROM probe_results") == stored | spooled
    assert _ids(path, "SELECT event_id FROM daemon_events") == events | spooled_events

    monkeypatch.chdir(tmp_path)
    query = "SELECT count(DISTINCT run_id) AS n FROM probe_results"
    result = CliRunner().invoke(app, ["sql", query, "--db", str(path), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["n", str(len(stored | spooled))]


def _newer_warehouse(path: Path) -> int:
    """A warehouse one migration past this code's last, as a newer nerfwatch leaves it;
    returns this code's last migration number."""
    Warehouse(path).migrate()
    known = load_migrations()[-1].number
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO _migrations (number, name) VALUES (?, ?)", [known + 1, "from_later"])
    con.close()
    return known


def test_a_warehouse_from_a_newer_nerfwatch_is_refused_and_left_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "newer.duckdb"
    known = _newer_warehouse(path)
    before = _digest(path)

    with pytest.raises(WarehouseError) as caught:
        Warehouse(path).migrate()
    message = str(caught.value)
    assert "\n" not in message
    assert f"schema version {known + 1:03d}" in message
    assert f"knows up to {known:03d}" in message
    assert _digest(path) == before


def test_a_daemon_on_a_newer_warehouse_refuses_to_start(tmp_path: Path) -> None:
    """After a downgrade no flush could ever store a row: the daemon says so and exits 1
    before any probe, rather than spool for ever (on the old code it logged 'not migrated
    yet' and ran on, probing, every flush failing)."""
    config = make_config(tmp_path)
    path = config.warehouse.location
    assert isinstance(path, Path)
    known = _newer_warehouse(path)
    before = _digest(path)
    daemon = Daemon(config, tuning=DaemonTuning(install_signals=False, schedule_report=False))
    with pytest.raises(DaemonError) as caught:
        asyncio.run(asyncio.wait_for(daemon.run(), 60))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)), message
    assert f"schema version {known + 1:03d}" in message and f"up to {known:03d}" in message
    assert daemon.stats.scheduled == 0
    assert _digest(path) == before


def test_an_upgrade_waits_for_a_reader_and_then_completes(tmp_path: Path) -> None:
    path = _old_warehouse(tmp_path)
    before = _digest(path)
    # a `nerfwatch sql` or `duckdb -readonly` session holds the file
    with holding(path, read_only=True), pytest.raises(WarehouseBusy) as caught:
        Warehouse(path, lock_wait_s=0.2).migrate()
    assert "\n" not in str(caught.value) and "is locked by process" in str(caught.value)
    assert _digest(path) == before  # nothing half-written while the reader held it
    Warehouse(path).migrate()
    assert _schema_version(path) == load_migrations()[-1].number


_CRASH_AFTER_CHECKSUMS = """
import os, sys, duckdb
from pipeline.warehouse.migrations import apply_migrations, load_migrations
con = duckdb.connect(sys.argv[1])
apply_migrations(con, load_migrations()[:{old}])  # only the checksum bookkeeping to do
os._exit(0)  # as SIGKILL would: no close, no checkpoint; the WAL stays
"""


def test_a_crash_after_adding_checksums_leaves_a_file_that_opens(tmp_path: Path) -> None:
    path = _old_warehouse(tmp_path)
    script = _CRASH_AFTER_CHECKSUMS.format(old=OLD_SCHEMAS[OLDEST.name])
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=120)
    assert path.with_name(path.name + ".wal").exists()  # the reopen replays it
    Warehouse(path).migrate()  # on the old code: "Failure while replaying WAL file"
    assert _schema_version(path) == load_migrations()[-1].number
    assert _ids(path, "SELECT number FROM _migrations WHERE checksum IS NULL") == set()


def test_a_report_straight_after_upgrading_migrates_then_renders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first command after an upgrade may be a reader: it migrates the old file once
    (on the old code: 'Table with name site_phases does not exist!', exit 1)."""
    path = _old_warehouse(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["report", "--db", str(path), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert list((tmp_path / "r").glob("*.html")), result.output
    assert _schema_version(path) == load_migrations()[-1].number


# Each file is left as a kill leaves it: the migrations before ``stop`` committed (in the
# WAL, never checkpointed) and, with ``inside``, the next one's first statements run in a
# transaction never committed. Connections stay open until the process SIGKILLs itself.
_KILLED_BETWEEN_MIGRATIONS = """
import json, os, signal, sys, duckdb
from pipeline.warehouse.migrations import apply_migrations, load_migrations
migrations, held = load_migrations(), []
for path, stop, inside in json.loads(sys.argv[1]):
    con = duckdb.connect(path)
    apply_migrations(con, migrations[:stop])
    if inside:
        con.execute("BEGIN TRANSACTION")
        for statement in con.extract_statements(migrations[stop].sql)[:inside]:
            con.execute(statement)
    held.append(con)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_kill_between_or_inside_migrations_loses_nothing_on_reopen(tmp_path: Path) -> None:
    """Migrations are applied one transaction each, so an upgrade killed part-way leaves a
    file at some schema in between. Every such file, from both old versions, reopens (its
    WAL replayed), finishes migrating to today's columns and keeps every row. A guard: this
    holds on the code it was written against (a SIGKILL at each of the 35 schema statements
    of the ace7eeb upgrade, tried by hand, left no file that failed either)."""
    newest = load_migrations()[-1].number
    wal_heavy = next(m.number for m in load_migrations() if m.name.endswith("wire_leftovers"))
    cases = [
        (fixture, stop, inside)
        for fixture, old in OLD_SCHEMAS.items()
        for stop in range(old, newest)
        for inside in ((0, 3) if stop + 1 == wal_heavy else (0,))
    ]
    paths, before = [], []
    for fixture, stop, inside in cases:
        folder = tmp_path / f"{fixture}-{stop}-{inside}"
        folder.mkdir()
        path = _old_warehouse(folder, FIXTURES / fixture)
        paths.append(path)
        before.append((_ids(path, "SELECT run_id FROM probe_results"), _row_counts(path)))
    plan = [[str(p), stop, inside] for p, (_, stop, inside) in zip(paths, cases, strict=True)]
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_BETWEEN_MIGRATIONS, json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stderr
    Warehouse(tmp_path / "new.duckdb").migrate()
    expected = _columns(tmp_path / "new.duckdb")
    for path, case, (ids, counts) in zip(paths, cases, before, strict=True):
        fixture, stop, _ = case
        if stop > OLD_SCHEMAS[fixture]:  # a migration committed: the reopen replays it
            assert path.with_name(path.name + ".wal").exists(), case
        Warehouse(path).migrate()
        assert _schema_version(path) == newest, case
        assert _columns(path) == expected, case
        assert _ids(path, "SELECT run_id FROM probe_results") == ids, case
        after = _row_counts(path)
        assert {t: after[t] for t in counts} == counts, case  # new tables start empty


def _row_counts(path: Path) -> dict[str, int]:
    """Rows in each table the user's data live in (not the bookkeeping ``_`` tables, nor
    the bundled calendar, which a migrate reloads)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT internal"
            " AND NOT starts_with(table_name, '_')"
            " AND table_name NOT IN ('releases', 'incidents')"
        ).fetchall()
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for (t,) in tables}  # type: ignore[index]
    finally:
        con.close()
