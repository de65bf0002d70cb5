"""Spool and flusher: durability, rotation, torn tails, idempotent replay, busy warehouse."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.daemon.flush import Flusher, FlushProcess, RowWriter, SegmentWriter
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.spool import Spool, SpoolLocked, list_segments, pending_lines, read_segment
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.lock_holder import holding
from tests.support.waiting import wait_until
from tests.support.warehouses import LAKE_BACKENDS


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


# Where a flush writes: a thread of this process opening the file per flush, one
# attaching it to a resident instance, or the daemon's flush process.
WRITERS = ["connect", "resident", "process"]


def _writer(kind: str, warehouse: Warehouse, spool: Spool) -> RowWriter:
    if kind == "process":
        return FlushProcess(
            warehouse.location, lock_wait_s=0.2, spool_dir=spool.directory, reply_timeout_s=120
        )
    own = Warehouse(warehouse.location, lock_wait_s=0.2, resident=kind == "resident")
    return SegmentWriter(own, spool.directory)


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


@pytest.mark.parametrize(
    ("kind", "warehouse"),
    [*((kind, "duckdb") for kind in WRITERS), *(("process", lake) for lake in LAKE_BACKENDS)],
    indirect=["warehouse"],
)
def test_flush_moves_rows_once_and_replay_is_idempotent(
    tmp_path: Path, kind: str, warehouse: Warehouse
) -> None:
    spool = Spool(tmp_path / "spool")
    spool.open()
    rows = [_row(provider=p) for p in ("alpha", "beta") for _ in range(20)]
    asyncio.run(_append_all(spool, rows))
    # A copy of the segment stands for "crash after commit, before delete".
    (segment,) = spool.seal()
    copy = segment.path.read_bytes()
    flusher = Flusher(spool, _writer(kind, warehouse, spool))
    outcome = flusher.flush_once()
    assert (outcome.rows, outcome.inserted, outcome.busy) == (40, 40, False)
    assert spool.depth() == 0
    # the replayed segment, with one new result written twice
    new = (_row().to_json() + "\n").encode()
    segment.path.write_bytes(copy + new + new)
    replay = flusher.flush_once()
    assert (replay.rows, replay.inserted) == (42, 1)
    stored = warehouse.query("SELECT count(*) AS n, count(DISTINCT run_id) AS d FROM probe_results")
    assert stored.row(0) == (41, 41)
    back = warehouse.query("SELECT sanity_flags, response_headers FROM probe_results LIMIT 1")
    assert back["sanity_flags"][0].to_list() == ["truncated"]
    flusher.close()
    spool.close()


@pytest.mark.parametrize("kind", WRITERS)
def test_busy_warehouse_keeps_rows_in_the_spool_until_the_reader_leaves(
    tmp_path: Path, kind: str
) -> None:
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=0.2)
    warehouse.migrate()
    spool = Spool(tmp_path / "spool")
    spool.open()
    flusher = Flusher(spool, _writer(kind, warehouse, spool))
    with holding(warehouse.path, read_only=True):
        asyncio.run(_append_all(spool, [_row() for _ in range(10)]))
        assert flusher.flush_once().busy
        asyncio.run(_append_all(spool, [_row() for _ in range(5)]))
        assert flusher.flush_once().busy
        assert spool.depth() == 15
    outcome = flusher.flush_once()
    assert (outcome.rows, outcome.inserted, outcome.segments) == (15, 15, 2)
    assert spool.depth() == 0
    flusher.close()
    spool.close()


def test_a_flush_process_that_dies_leaves_the_rows_and_is_replaced(tmp_path: Path) -> None:
    """Killed while it waits for a reader's lock (or before it even read the batch):
    the flush reports an error, nothing leaves the spool, the next flush starts a new
    process and moves every row once."""
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=0.2)
    warehouse.migrate()
    spool = Spool(tmp_path / "spool")
    spool.open()
    writer = FlushProcess(
        warehouse.path, lock_wait_s=60, spool_dir=spool.directory, reply_timeout_s=120
    )
    flusher = Flusher(spool, writer)
    flusher.add_side_rows("daemon_events", [_event()], key="event_id")
    rows = [_row() for _ in range(12)]
    asyncio.run(_append_all(spool, rows))
    with holding(warehouse.path, read_only=True), ThreadPoolExecutor(1) as pool:
        pending = pool.submit(flusher.flush_once)
        wait_until(lambda: writer.pid is not None, 120, "the flush process")
        first_pid = writer.pid
        assert first_pid is not None
        os.kill(first_pid, signal.SIGKILL)
        failed = pending.result(timeout=60)
    assert failed.error is not None and "exited" in failed.error
    assert spool.depth() == 12
    outcome = flusher.flush_once()
    assert writer.pid not in (None, first_pid)
    assert (outcome.rows, outcome.inserted, outcome.error) == (12, 12, None)
    flusher.close()
    stored = warehouse.query("SELECT run_id FROM probe_results")["run_id"].to_list()
    assert sorted(stored) == sorted(r.run_id for r in rows)
    events = warehouse.query("SELECT count(*) AS n FROM daemon_events")["n"][0]
    assert events == 1  # the side row was queued again, not lost
    spool.close()


@pytest.mark.parametrize("kind", WRITERS)
def test_torn_tails_and_corrupt_lines_are_set_aside_not_blocking(tmp_path: Path, kind: str) -> None:
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=0.2)
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
    flusher = Flusher(spool, _writer(kind, warehouse, spool))
    outcome = flusher.flush_once()
    flusher.close()
    assert (outcome.rows, outcome.inserted) == (4, 3)
    stored = set(warehouse.query("SELECT run_id FROM probe_results")["run_id"].to_list())
    assert stored == {r.run_id for r in good}
    quarantined = warehouse.query("SELECT reason, line FROM quarantined_rows ORDER BY line")
    assert quarantined.rows() == [("invalid_json", "not json at all"), ("torn_tail", '{"torn')]
    assert not (directory / "rejected.jsonl").exists()  # nothing written beside the spool
    spool.close()


_READ_WRITE = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print(con.execute("SELECT count(DISTINCT run_id) FROM probe_results").fetchall()[0][0])
con.close()
"""


@pytest.mark.parametrize("kind", ["resident", "process"])
def test_resident_warehouse_releases_the_file_after_each_flush(tmp_path: Path, kind: str) -> None:
    """Attach/detach: another process may open the file, even for writing, between
    flushes and sees every committed row (the detach checkpointed, no WAL left)."""
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=0.2)
    warehouse.migrate()
    spool = Spool(tmp_path / "spool")
    spool.open()
    flusher = Flusher(spool, _writer(kind, warehouse, spool))
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
    flusher.close()
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


def _heartbeat(occurred_at: str) -> str:
    """A spooled lifecycle event, as ``SessionEvents`` writes it."""
    return json.dumps(
        {
            "spool_table": "daemon_events", "event_id": new_run_id(), "session_id": "s1",
            "occurred_at": occurred_at, "kind": "heartbeat", "detail": None, "host": "h",
            "pid": 7, "nerfwatch_version": None, "rows_lost": 0,
        }
    )  # fmt: skip


@pytest.mark.parametrize("path", ["fast", "slow"])
def test_only_lines_already_stored_count_as_replayed(
    tmp_path: Path, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Events and damaged lines are not replays: an operator reading 'skipped N rows already
    stored (replay)' after every heartbeat would look for a crash that never happened."""
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=1)
    warehouse.migrate()
    spool = Spool(tmp_path / "spool")
    spool.open()
    lines = [_row().to_json(), _heartbeat("2026-11-20T12:00:00+00:00"), "{not json"]
    if path == "slow":  # a number no column holds sends the batch down the line-by-line path
        lines.append(_row(input_tokens=2**70).to_json())
    for line in lines:
        asyncio.run(spool.append(line))
    (segment,) = spool.seal()
    copy = segment.path.read_bytes()
    flusher = Flusher(spool, SegmentWriter(warehouse, spool.directory))
    with caplog.at_level(logging.INFO, logger="pipeline.daemon.flush.daemon_side"):
        first = flusher.flush_once()
    assert first.rows == len(lines) and first.inserted == len(lines) - 2
    assert "already stored" not in caplog.text
    segment.path.write_bytes(copy)  # the same lines again: a flush cut short before its delete
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="pipeline.daemon.flush.daemon_side"):
        again = flusher.flush_once()
    assert again.inserted == 0
    replayed = len(lines) - 1  # all but the line that is not JSON, quarantined again
    assert f"flush skipped {replayed} rows already stored (replay)" in caplog.text
    flusher.close()
    spool.close()


def _stored_ids(warehouse: Warehouse) -> list[str]:
    return sorted(warehouse.query("SELECT run_id FROM probe_results")["run_id"])


def test_a_spool_folder_removed_under_the_daemon_loses_no_acknowledged_row(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The spool folder deleted while the daemon runs (``rm -rf``, a cleanup script):
    appends went on, acknowledged, into the deleted segment's open file, the seal could
    make no new segment, and every one of those rows was gone with the file. Now the
    write sees that its segment was deleted, makes the folder again and writes the
    segment's rows again into a new segment; one line names the deleted segment."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    directory = tmp_path / "spool"
    spool = Spool(directory)
    spool.open()
    flusher = Flusher(spool, SegmentWriter(Warehouse(warehouse.location), directory))
    before, after = [_row() for _ in range(2)], [_row() for _ in range(3)]
    caplog.set_level(logging.INFO)
    try:
        asyncio.run(_append_all(spool, before))
        subprocess.run(["rm", "-rf", str(directory)], check=True)
        for row in after:
            asyncio.run(spool.append(row.to_json()))
        outcome = flusher.flush_once()
    finally:
        flusher.close()
        spool.close()
    assert outcome.error is None and outcome.inserted == 5, outcome
    assert _stored_ids(warehouse) == sorted(r.run_id for r in before + after)
    said = [m for m in caplog.messages if "was deleted while in use" in m]
    assert len(said) == 1 and str(directory / "seg-000000000001.jsonl") in said[0], said


def test_a_spool_folder_replaced_by_a_file_holds_the_rows_until_it_is_back(
    tmp_path: Path,
) -> None:
    """The spool folder swapped for a file: appends were acknowledged into the deleted
    segment, and lost. Now they are refused (the daemon holds refused rows in memory,
    ``HeldRows``) with the folder's path, and once the path is a folder again, the held
    rows and those of the deleted segment are spooled and stored, none twice."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    directory = tmp_path / "spool"
    spool = Spool(directory)
    spool.open()
    held = HeldRows(spool)
    flusher = Flusher(spool, SegmentWriter(Warehouse(warehouse.location), directory))
    before, during = _row(), [_row() for _ in range(2)]
    try:
        asyncio.run(spool.append(before.to_json()))
        subprocess.run(["rm", "-rf", str(directory)], check=True)
        directory.write_text("not a folder\n", encoding="utf-8")
        for row in during:
            assert asyncio.run(held.append(row.to_json()))
        assert held.held == 2
        assert held.failing is not None and f"'{directory}'" in held.failing, held.failing
        assert flusher.flush_once().inserted == 0
        directory.unlink()
        asyncio.run(held.retry())
        assert held.held == 0 and held.failing is None
        outcome = flusher.flush_once()
    finally:
        flusher.close()
        spool.close()
    assert outcome.error is None and outcome.inserted == 3, outcome
    assert _stored_ids(warehouse) == sorted(r.run_id for r in [before, *during])


_APPEND_UNDER_A_FILE_SIZE_LIMIT = """
import asyncio, json, resource, sys
from pathlib import Path
from pipeline.daemon.spool import Spool, SpoolError
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, resource.RLIM_INFINITY))
spool = Spool(Path(sys.argv[1]))
spool.open()
refused = 0
async def main():
    global refused
    for n in range(12):
        try:
            await spool.append(json.dumps({"n": n, "pad": "x" * 1500}))
        except SpoolError:
            refused += 1
asyncio.run(main())
spool.close()
print(refused)
"""


def test_a_segment_at_the_file_size_limit_is_followed_by_a_new_one(tmp_path: Path) -> None:
    """Under a file-size limit (``ulimit -f``, systemd ``LimitFSIZE=``) a segment that
    reached it refused every append (EFBIG) until the next flush sealed it: the rows were
    held in memory, a segment's worth got in per flush tick, and a burst (a suspend's misfire rows)
    filled the bound and was dropped. Now the spool goes on in a new segment. Runs in a
    child process: the limit is per process."""
    directory = tmp_path / "spool"
    done = subprocess.run(
        [sys.executable, "-c", _APPEND_UNDER_A_FILE_SIZE_LIMIT, str(directory)],
        capture_output=True, text=True, timeout=120, check=False,
        cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0", f"appends refused: {done.stdout}{done.stderr}"
    assert pending_lines(directory) == 12
    segments = list_segments(directory)
    numbers = [json.loads(line)["n"] for seg in segments for line in read_segment(seg.path)]
    assert numbers == list(range(12))
    assert all(seg.path.stat().st_size <= 8192 for seg in segments)
