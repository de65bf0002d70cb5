"""The warehouse against real DuckDB files: migrations, idempotent inserts, views, locks;
the backend-independent tests also against each DuckLake backend."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipeline.warehouse import Warehouse, WarehouseBusy, WarehouseError
from pipeline.warehouse.migrations import Migration, SchemaError, load_migrations
from probes.ids import new_run_id, run_id_at
from probes.result import ProbeResult
from tests.support.lock_holder import holding
from tests.support.warehouses import on_every_backend

T0 = datetime(2026, 11, 2, 10, 0, tzinfo=UTC)  # a Monday


def result(**fields: object) -> ProbeResult:
    base: dict[str, object] = {
        "run_id": new_run_id(),
        "started_at": T0,
        "provider": "alpha",
        "model": "m",
        "probe": "short",
        "task_family": "arithmetic",
        "context_class": "short",
        "error_class": "ok",
        "ttft_ms": 100.0,
        "total_ms": 500.0,
        "score_strict": "correct",
    }
    base.update(fields)
    return ProbeResult(**base)  # type: ignore[arg-type]


def test_migrate_creates_schema_and_is_idempotent(tmp_path: Path) -> None:
    wh = Warehouse(tmp_path / "w.duckdb")
    applied = wh.migrate()
    assert applied == [m.name for m in load_migrations()]
    assert Warehouse(tmp_path / "w.duckdb").migrate() == []
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    names = {
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    con.close()
    assert {"probe_results", "releases", "incidents", "analysis_runs", "phases"} <= names
    # the views live inside the database file, so the plain duckdb CLI sees them
    assert {
        "probes",
        "hourly",
        "daily",
        "errors_hourly",
        "long_context_penalty",
        "rate_limit_headroom",
    } <= names


def test_failed_migration_rolls_back_with_its_record(tmp_path: Path) -> None:
    broken = Migration(99, "099_broken", "CREATE TABLE half (a INTEGER);\nSELECT * FROM nowhere;")
    wh = Warehouse(tmp_path / "w.duckdb", migrations=[*load_migrations(), broken])
    with pytest.raises(WarehouseError, match="099_broken"):
        wh.migrate()
    rows = Warehouse(tmp_path / "w.duckdb").query(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'half'"
    )
    assert rows["n"][0] == 0
    numbers = Warehouse(tmp_path / "w.duckdb").query("SELECT number FROM _migrations")
    assert 99 not in numbers["number"].to_list()
    assert len(numbers) == len(load_migrations())


def test_migration_files_are_numbered_uniquely(tmp_path: Path) -> None:
    (tmp_path / "001_a.sql").write_text("SELECT 1;")
    (tmp_path / "001_b.sql").write_text("SELECT 1;")
    with pytest.raises(SchemaError, match="001"):
        load_migrations(tmp_path)


@on_every_backend
def test_insert_is_idempotent_by_run_id(warehouse: Warehouse) -> None:
    rows = [result().as_row() for _ in range(3)]
    assert warehouse.insert_rows("probe_results", rows + rows[:1], key="run_id") == 3
    assert warehouse.insert_rows("probe_results", rows, key="run_id") == 0
    assert warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 3


@on_every_backend
def test_run_id_check_reaches_back_to_the_batchs_earliest_row(warehouse: Warehouse) -> None:
    """The key check reads only rows from the batch's earliest started_at on: a replayed
    old row is still found (it carries its own started_at), newer rows are added."""
    old = result(started_at=T0 - timedelta(days=30)).as_row()
    stored = [result(started_at=T0 + timedelta(minutes=i)).as_row() for i in range(3)]
    warehouse.insert_rows("probe_results", [old, *stored], key="run_id")
    later = result(started_at=T0 + timedelta(hours=1)).as_row()
    assert warehouse.insert_rows("probe_results", [later, stored[1]], key="run_id") == 1
    assert warehouse.insert_rows("probe_results", [old], key="run_id") == 0
    assert warehouse.insert_rows("probe_results", [stored[0], old, later], key="run_id") == 0
    counts = warehouse.query("SELECT count(*) AS n, count(DISTINCT run_id) AS u FROM probe_results")
    assert counts.row(0) == (5, 5)


@on_every_backend
def test_daemon_events_replayed_out_of_order_are_stored_once(warehouse: Warehouse) -> None:
    """The daemon's side rows use the same bounded check, on occurred_at."""

    def event(at: datetime) -> dict[str, object]:
        return {"event_id": new_run_id(), "session_id": "s", "occurred_at": at, "kind": "heartbeat"}

    old, new = event(T0), event(T0 + timedelta(hours=2))
    assert warehouse.insert_rows("daemon_events", [new], key="event_id") == 1
    assert warehouse.insert_rows("daemon_events", [old, new], key="event_id") == 1
    assert warehouse.insert_rows("daemon_events", [new, old], key="event_id") == 0
    assert warehouse.query("SELECT count(*) AS n FROM daemon_events")["n"][0] == 2


def test_probe_results_keeps_only_its_primary_key_index(warehouse: Warehouse) -> None:
    """Every index there is maintained by each flush; the time index served no query."""
    indexes = warehouse.query(
        "SELECT count(*) AS n FROM duckdb_indexes() WHERE table_name = 'probe_results'"
    )
    keys = warehouse.query(
        "SELECT count(*) AS n FROM duckdb_constraints() WHERE table_name = 'probe_results'"
        " AND constraint_type = 'PRIMARY KEY'"
    )
    assert (indexes["n"][0], keys["n"][0]) == (0, 1)


def test_primary_key_still_refuses_a_duplicate_the_check_did_not_see(
    warehouse: Warehouse,
) -> None:
    """The key check is bounded by started_at; a copy with another started_at (which no
    writer makes) is refused by the primary key instead of being stored twice."""
    row = result().as_row()
    warehouse.insert_rows("probe_results", [row], key="run_id")
    moved = {**row, "started_at": T0 + timedelta(days=1)}
    with pytest.raises(WarehouseError, match=r"(?i)duplicate key"):
        warehouse.insert_rows("probe_results", [moved], key="run_id")
    assert warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 1


@on_every_backend
def test_row_roundtrip_keeps_every_field(warehouse: Warehouse) -> None:
    original = result(
        sanity_flags=["truncated", "wrong_script"],
        response_headers={"x-request-id": "abc"},
        rl_tokens_limit=90_000,
        response_text="<script>alert(1)</script>",
        cost_usd=0.0012,
    )
    warehouse.insert_rows("probe_results", [original.as_row()], key="run_id")
    row = warehouse.query("SELECT * FROM probe_results").row(0, named=True)
    assert row["sanity_flags"] == ["truncated", "wrong_script"]
    assert row["rl_tokens_limit"] == 90_000
    assert row["response_text"] == "<script>alert(1)</script>"
    assert row["started_at"] == T0


def test_spool_json_roundtrip() -> None:
    original = result(response_headers={"a": "b"}, sanity_flags=["empty"])
    assert ProbeResult.from_json(original.to_json()) == original


def test_run_ids_are_time_ordered() -> None:
    early = run_id_at(1_700_000_000_000)
    late = run_id_at(1_700_000_000_001)
    assert early < late and len({new_run_id() for _ in range(1000)}) == 1000


@on_every_backend
def test_hourly_rollup_percentiles_and_rates(warehouse: Warehouse) -> None:
    rows = [result(ttft_ms=float(ms)).as_row() for ms in range(100, 1100, 100)]  # 10 ok
    rows += [
        result(error_class="overloaded", ttft_ms=None, http_status=529, score_strict=None).as_row(),
        result(
            error_class="rate_limited", ttft_ms=None, http_status=429, score_strict=None
        ).as_row(),
    ]
    rows += [result(score_strict="wrong", ttft_ms=50.0, sanity_flags=["refusal"]).as_row()]
    rows += [result(run_status="skipped", skip_reason="budget", error_class=None).as_row()]
    warehouse.insert_rows("probe_results", rows, key="run_id")
    hourly = warehouse.query("SELECT * FROM hourly").row(0, named=True)
    assert hourly["n"] == 13  # skipped runs are not attempts
    assert hourly["n_ok"] == 11
    ok_ttft = sorted([*range(100, 1100, 100), 50])
    assert hourly["ttft_p50_ms"] == pytest.approx(pl.Series(ok_ttft).median())
    assert hourly["error_rate"] == pytest.approx(2 / 13)
    assert hourly["overloaded_rate"] == pytest.approx(1 / 13)
    assert hourly["accuracy"] == pytest.approx(10 / 11)
    assert hourly["sanity_flag_rate"] == pytest.approx(1 / 13)
    errors = warehouse.query("SELECT error_class, n FROM errors_hourly ORDER BY error_class")
    assert dict(errors.iter_rows()) == {"ok": 11, "overloaded": 1, "rate_limited": 1}


@on_every_backend
def test_long_context_penalty_and_headroom(warehouse: Warehouse) -> None:
    rows = [result(context_class="short", ttft_ms=200.0).as_row() for _ in range(3)]
    rows += [
        result(
            context_class="long",
            ttft_ms=1000.0,
            task_family="kv_lookup",
            rl_requests_limit=100,
            rl_requests_remaining=25,
        ).as_row()
        for _ in range(3)
    ]
    rows += [result(started_at=T0 + timedelta(hours=1), ttft_ms=300.0).as_row()]
    later = T0 + timedelta(hours=2)  # a long TTFT recorded as 0 ms is no measurement
    rows += [result(started_at=later, ttft_ms=300.0).as_row()]
    rows += [result(started_at=later, context_class="long", ttft_ms=0.0).as_row()]
    warehouse.insert_rows("probe_results", rows, key="run_id")
    penalty = warehouse.query("SELECT * FROM long_context_penalty ORDER BY hour")
    assert penalty["penalty_ratio"][0] == pytest.approx(5.0)
    assert penalty["penalty_ratio"][1] is None  # no long probes in the second hour
    assert penalty["penalty_ratio"][2] is None  # nor a long TTFT above 0 in the third
    headroom = warehouse.query("SELECT * FROM rate_limit_headroom ORDER BY hour").row(0, named=True)
    assert headroom["requests_headroom_min"] == pytest.approx(0.25)
    assert headroom["requests_limit_p50"] == 100


@on_every_backend
def test_bundled_release_calendar_is_loaded(warehouse: Warehouse) -> None:
    counts = warehouse.query("SELECT origin, count(*) AS n FROM releases GROUP BY origin")
    assert dict(counts.iter_rows())["bundled"] > 100
    vendors = set(warehouse.query("SELECT DISTINCT vendor FROM releases")["vendor"])
    assert {"OpenAI", "Anthropic", "DeepSeek", "Zhipu/Z.ai"} <= vendors
    assert warehouse.query("SELECT count(*) AS n FROM incidents")["n"][0] > 20


def test_reader_waits_for_a_writer_then_names_it(warehouse: Warehouse) -> None:
    quick = Warehouse(warehouse.path, lock_wait_s=0.5)
    with holding(warehouse.path) as holder, pytest.raises(WarehouseBusy) as info:
        quick.query("SELECT 1")
    message = str(info.value)
    assert f"process {holder.pid}" in message and "\n" not in message
    assert "IO Error" not in message


def test_reader_succeeds_once_the_writer_lets_go(warehouse: Warehouse) -> None:
    patient = Warehouse(warehouse.path, lock_wait_s=20)
    result_box: list[pl.DataFrame] = []
    with holding(warehouse.path):
        started = threading.Event()

        def read() -> None:
            started.set()
            result_box.append(patient.query("SELECT count(*) AS n FROM probe_results"))

        thread = threading.Thread(target=read)
        thread.start()
        assert started.wait(60), "the reader thread did not start within 60s"
    thread.join(60)
    assert not thread.is_alive(), "the reader did not finish within 60s of the writer letting go"
    assert result_box and result_box[0]["n"][0] == 0


@on_every_backend
def test_query_errors_are_one_line(warehouse: Warehouse) -> None:
    with pytest.raises(WarehouseError) as info:
        warehouse.query("SELECT nope FROM probe_results")
    assert "\n" not in str(info.value) and "nope" in str(info.value)


def test_reads_while_this_process_holds_a_write_connection(warehouse: Warehouse) -> None:
    """DuckDB refuses mixed read-only/read-write connections inside one process; the
    warehouse reads through the process's own write access instead of failing."""
    writer = duckdb.connect(str(warehouse.path))
    try:
        writer.execute(
            "INSERT INTO probe_results (run_id, started_at, provider, model, probe, "
            "task_family) VALUES ('r1', now(), 'p', 'm', 'x', 'arithmetic')"
        )
        assert warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 1
    finally:
        writer.close()


@on_every_backend
@pytest.mark.parametrize(
    ("column", "value"), [("run_status", "exploded"), ("score_strict", "maybe"), ("source", "x")]
)
def test_a_row_that_breaks_a_check_is_refused_on_every_backend(
    warehouse: Warehouse, column: str, value: str
) -> None:
    """A lake holds no CHECK constraints; the insert's own guard refuses the same rows the
    file's CHECKs do, and the rows of the refused batch are not stored either."""
    good, bad = result().as_row(), {**result().as_row(), column: value}
    with pytest.raises(WarehouseError, match=f"CHECK constraint failed on probe_results.*{column}"):
        warehouse.insert_rows("probe_results", [good, bad], key="run_id")
    assert warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0] == 0
    mended = {**bad, column: good[column]}
    assert warehouse.insert_rows("probe_results", [good, mended], key="run_id") == 2


@on_every_backend
def test_a_frame_without_a_checked_column_takes_its_default(warehouse: Warehouse) -> None:
    """Checks on columns the rows do not carry are left out; the default fills them."""
    row = result().as_row()
    frame = pl.DataFrame([{k: v for k, v in row.items() if k not in ("source", "score_strict")}])
    assert warehouse.insert_frame("probe_results", frame, key="run_id") == 1
    stored = warehouse.query("SELECT source, score_strict FROM probe_results")
    assert stored.row(0) == ("live", None)


@on_every_backend
def test_insert_into_a_missing_table_is_a_warehouse_error(warehouse: Warehouse) -> None:
    with pytest.raises(WarehouseError, match="no_such_table"):
        warehouse.insert_frame("no_such_table", pl.DataFrame({"a": [1]}))


def test_an_applied_migration_must_not_change(tmp_path: Path) -> None:
    migrations = load_migrations()
    Warehouse(tmp_path / "w.duckdb", migrations=migrations).migrate()
    edited = [
        *migrations[:-1],
        Migration(
            migrations[-1].number,
            migrations[-1].name,
            migrations[-1].sql + "\nCREATE TABLE extra (a INT);",
        ),
    ]
    with pytest.raises(WarehouseError, match="changed after it was applied"):
        Warehouse(tmp_path / "w.duckdb", migrations=edited).migrate()
