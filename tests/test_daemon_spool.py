"""Spool and flusher: durability, rotation, torn tails, idempotent replay, busy warehouse."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.daemon.flusher import Flusher
from pipeline.daemon.spool import Spool, SpoolLocked, list_segments, pending_lines, read_segment
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult


def _row(provider: str = "alpha", **extra: object) -> ProbeResult:
    return ProbeResult(
        run_id=new_run_id(),
        started_at=datetime.now(UTC),
        provider=provider,
        model="m",
        probe="short",
        task_family="arithmetic",
        response_headers={"x-request-id": "abc"},
        sanity_flags=["truncated"],
        **extra,  # type: ignore[arg-type]
    )


async def _append_all(spool: Spool, rows: list[ProbeResult]) -> None:
    await asyncio.gather(*(spool.append(r.to_json()) for r in rows))


def test_appends_are_durable_lines_and_seal_rotates(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool")
    spool.open()
    rows = [_row() for _ in range(50)]
    asyncio.run(_append_all(spool, rows))
    assert pending_lines(spool.directory) == 50
    sealed = spool.seal()
    assert len(sealed) == 1
    lines = read_segment(sealed[0].path)
    assert {ProbeResult.from_json(line).run_id for line in lines} == {r.run_id for r in rows}
    assert spool.seal() == sealed  # the empty active segment is not rotated again
    spool.close()


def test_second_owner_is_refused(tmp_path: Path) -> None:
    first = Spool(tmp_path / "spool")
    first.open()
    with pytest.raises(SpoolLocked):
        Spool(tmp_path / "spool").open()
    first.close()


def test_torn_tail_is_dropped_and_a_restart_never_appends_to_it(tmp_path: Path) -> None:
    directory = tmp_path / "spool"
    spool = Spool(directory)
    spool.open()
    good = _row()
    asyncio.run(spool.append(good.to_json()))
    spool.close()
    (segment,) = list_segments(directory)
    with open(segment.path, "ab") as fh:
        fh.write(b'{"run_id": "torn')  # a write cut short by kill -9
    again = Spool(directory)
    again.open()
    later = _row()
    asyncio.run(again.append(later.to_json()))
    ids = [ProbeResult.from_json(line).run_id for line in again.iter_pending()]
    assert ids == [good.run_id, later.run_id]
    again.close()


@pytest.mark.parametrize("resident", [False, True])
def test_flush_moves_rows_once_and_replay_is_idempotent(tmp_path: Path, resident: bool) -> None:
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=0.2, resident=resident)
    warehouse.migrate()
    spool = Spool(tmp_path / "spool")
    spool.open()
    rows = [_row(provider=p) for p in ("alpha", "beta") for _ in range(20)]
    asyncio.run(_append_all(spool, rows))
    # A copy of the segment stands for "crash after commit, before delete".
    (segment,) = spool.seal()
    copy = segment.path.read_bytes()
    flusher = Flusher(spool, warehouse)
    outcome = flusher.flush_once()
    assert (outcome.rows, outcome.inserted, outcome.busy) == (40, 40, False)
    assert spool.depth() == 0
    segment.path.write_bytes(copy)
    replay = flusher.flush_once()
    assert (replay.rows, replay.inserted) == (40, 0)
    stored = warehouse.query("SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM probe_results")
    assert stored.row(0) == (40, 40)
    back = warehouse.query("SELECT sanity_flags, response_headers FROM probe_results LIMIT 1")
    assert back["sanity_flags"][0].to_list() == ["truncated"]
    spool.close()


_HOLD = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print("holding", flush=True)
sys.stdin.readline()
con.close()
"""


@pytest.mark.parametrize("resident", [False, True])
def test_busy_warehouse_keeps_rows_in_the_spool_until_the_reader_leaves(
    tmp_path: Path, resident: bool
) -> None:
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=0.2, resident=resident)
    warehouse.migrate()
    spool = Spool(tmp_path / "spool")
    spool.open()
    flusher = Flusher(spool, warehouse)
    with subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(warehouse.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as reader:
        assert reader.stdin is not None and reader.stdout is not None
        assert reader.stdout.readline().strip() == "holding"
        asyncio.run(_append_all(spool, [_row() for _ in range(10)]))
        assert flusher.flush_once().busy
        asyncio.run(_append_all(spool, [_row() for _ in range(5)]))
        assert flusher.flush_once().busy
        assert spool.depth() == 15
        reader.stdin.write("\n")
        reader.stdin.flush()
        reader.wait(timeout=30)
    outcome = flusher.flush_once()
    assert (outcome.rows, outcome.inserted, outcome.segments) == (15, 15, 2)
    assert spool.depth() == 0
    spool.close()


@pytest.mark.parametrize("resident", [False, True])
def test_torn_tails_and_corrupt_lines_are_set_aside_not_blocking(
    tmp_path: Path, resident: bool
) -> None:
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=0.2, resident=resident)
    warehouse.migrate()
    directory = tmp_path / "spool"
    first = Spool(directory)
    first.open()
    good = [_row() for _ in range(3)]
    asyncio.run(_append_all(first, good))
    first.close()
    (segment,) = list_segments(directory)
    lines = segment.path.read_bytes().split(b"\n")
    segment.path.write_bytes(lines[0] + b"\nnot json at all\n" + b"\n".join(lines[1:]) + b'{"torn')
    spool = Spool(directory)
    spool.open()
    outcome = Flusher(spool, warehouse).flush_once()
    assert (outcome.rows, outcome.inserted) == (4, 3)
    stored = set(warehouse.query("SELECT run_id FROM probe_results")["run_id"].to_list())
    assert stored == {r.run_id for r in good}
    rejected = (directory / "rejected.jsonl").read_text().splitlines()
    assert rejected == ['{"torn', "not json at all"]
    spool.close()


_READ_WRITE = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print(con.execute("SELECT count(DISTINCT run_id) FROM probe_results").fetchall()[0][0])
con.close()
"""


def test_resident_warehouse_releases_the_file_after_each_flush(tmp_path: Path) -> None:
    """Attach/detach: another process may open the file, even for writing, between
    flushes and sees every committed row (the detach checkpointed, no WAL left)."""
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=0.2, resident=True)
    warehouse.migrate()
    spool = Spool(tmp_path / "spool")
    spool.open()
    flusher = Flusher(spool, warehouse)
    flusher.add_side_rows("daemon_events", [_event()], key="event_id")
    total = 0
    for batch in (30, 7):
        asyncio.run(_append_all(spool, [_row() for _ in range(batch)]))
        outcome = flusher.flush_once()
        total += batch
        assert (outcome.rows, outcome.inserted, outcome.busy) == (batch, batch, False)
        assert 0 < outcome.held_s <= outcome.seconds
        assert not Path(f"{warehouse.path}.wal").exists()
        other = subprocess.run(
            [sys.executable, "-c", _READ_WRITE, str(warehouse.path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert other.returncode == 0, other.stderr
        assert int(other.stdout) == total
    events = warehouse.query("SELECT kind FROM daemon_events")["kind"].to_list()
    assert events == ["heartbeat"]
    warehouse.close()
    spool.close()


def _event() -> dict[str, object]:
    return {
        "event_id": new_run_id(),
        "session_id": new_run_id(),
        "occurred_at": datetime.now(UTC),
        "kind": "heartbeat",
        "detail": None,
        "host": "h",
        "pid": 1,
        "nerfwatch_version": "0",
    }
