"""A damaged spool on disk: odd entries, damaged lines, lines from a newer version.

Whatever is found in the spool directory, the rows beside it still reach the warehouse,
``nerfwatch status`` and the daemon's start still read the spool, and nothing blocks.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from pipeline.daemon import Daemon, DaemonTuning
from pipeline.daemon.flush import Flusher, FlushOutcome, RowWriter, SegmentWriter
from pipeline.daemon.flush.process_handle import FlushProcess
from pipeline.daemon.spool import Spool, SpoolError, list_segments, pending_lines
from pipeline.daemon.state import spool_spend
from pipeline.daemon.status import gather_status
from pipeline.warehouse import Lake, Warehouse
from pipeline.warehouse.migrations import load_migrations
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.daemon import LocalProbe, make_config
from tests.support.mounts import unavailable
from tests.support.waiting import within
from tests.support.warehouses import located_on_every_backend

_DAY = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
LINE_NUMBER_MIGRATION = "013_quarantine_line_number"


def _row(**extra: object) -> ProbeResult:
    return ProbeResult(
        run_id=new_run_id(),
        started_at=_DAY,
        provider="alpha",
        model="m",
        probe="short",
        task_family="arithmetic",
        run_status="done",
        **extra,  # type: ignore[arg-type]
    )


def _spool_with(directory: Path, rows: list[ProbeResult]) -> None:
    """A spool left by an earlier daemon: one closed segment holding ``rows``."""
    spool = Spool(directory)
    spool.open()

    async def append() -> None:
        for row in rows:
            await spool.append(row.to_json())

    asyncio.run(append())
    spool.close()


def _segment(directory: Path, seq: int) -> Path:
    return directory / f"seg-{seq:012d}.jsonl"


def _flush(directory: Path, warehouse: Warehouse) -> tuple[int, str | None]:
    spool = Spool(directory)
    spool.open()
    flusher = Flusher(
        spool, SegmentWriter(Warehouse(warehouse.location, lock_wait_s=0.2), directory)
    )
    try:
        outcome = flusher.flush_once()
    finally:
        flusher.close()
        spool.close()
    return outcome.inserted, outcome.error


def test_entries_named_like_segments_that_are_not_files_are_left_alone(tmp_path: Path) -> None:
    """A directory, a symlink to one and a FIFO where segments should be (a restore gone
    wrong, a stray ``mkfifo``): the real segments around them flush, status reads the
    spool, a new segment gets a name of its own, and the odd entries stay untouched."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    directory = tmp_path / "spool"
    rows = [_row() for _ in range(3)]
    _spool_with(directory, rows[:2])
    _segment(directory, 2).mkdir()
    _segment(directory, 3).symlink_to(tmp_path)
    os.mkfifo(_segment(directory, 4))  # reading it would block until a writer came
    _segment(directory, 5).write_text(rows[2].to_json() + "\n", encoding="utf-8")
    assert [s.seq for s in list_segments(directory)] == [1, 5]
    assert pending_lines(directory) == 3
    status = gather_status(make_config(tmp_path), lock_wait_s=0.2)
    assert status.spool_depth == 3

    assert _flush(directory, warehouse) == (3, None)
    stored = warehouse.query("SELECT run_id FROM probe_results")["run_id"].to_list()
    assert sorted(stored) == sorted(r.run_id for r in rows)
    left = sorted(p.name for p in directory.iterdir() if p.name != ".lock")
    assert left == [_segment(directory, seq).name for seq in (2, 3, 4)]


def test_damaged_lines_leave_status_and_spend_readable(tmp_path: Path) -> None:
    """Lines that are JSON but not probe rows (an array, null, fields of the wrong type)
    wait in the spool while the warehouse is away; status and the day's spend skip them
    (a count or cost that is no number counts as none, as the flush stores it)."""
    directory = tmp_path / "spool"
    good = _row(error_class="overloaded", cost_usd=0.25, input_tokens=100, output_tokens=20)
    _spool_with(directory, [good])
    text = _DAY.isoformat()
    damaged = [
        [1, 2],
        42,
        None,
        {},
        {"started_at": text, "source": "live"},
        {"provider": "alpha", "started_at": 12345, "source": "live"},
        {"provider": ["alpha"], "started_at": text, "source": "live"},
        {"provider": "alpha", "started_at": "9999-12-31T23:59:59-23:00", "source": "live"},
        {"provider": "alpha", "started_at": text, "source": "live", "cost_usd": "free"},
        {"provider": "alpha", "started_at": text, "source": "live", "input_tokens": "many"},
        {"provider": "alpha", "started_at": text, "run_status": "done", "error_class": 7},
        {"spool_table": "daemon_events", "session_id": "s", "rows_lost": "x"},
    ]
    lines = "".join(json.dumps(d) + "\n" for d in damaged)
    _segment(directory, 2).write_text(lines, encoding="utf-8")

    spend = spool_spend(Spool(directory).iter_pending(), date(2026, 3, 2))
    assert (spend["alpha"].tokens, spend["alpha"].cost_usd) == (120, 0.25)
    status = gather_status(make_config(tmp_path), lock_wait_s=0.2)  # no warehouse yet
    alpha = next(p for p in status.providers if p.provider == "alpha")
    assert (alpha.last_probe_at, alpha.last_error) == (_DAY, "overloaded")
    assert status.spool_depth == 1 + len(damaged)
    assert any("9 spool lines are damaged" in note for note in status.notes), status.notes


def test_a_segment_the_kernel_will_not_read_leaves_status_and_spend_readable(
    tmp_path: Path,
) -> None:
    """A segment whose read fails (EIO; here linked to /proc/self/mem, whose first page no
    process has mapped) stopped ``nerfwatch status`` with a traceback and left the daemon's
    start without the spend of every other segment. Both now skip it and say which."""
    directory = tmp_path / "spool"
    good = _row(error_class="overloaded", cost_usd=0.25, input_tokens=100, output_tokens=20)
    _spool_with(directory, [good])
    broken = _segment(directory, 2)
    broken.symlink_to("/proc/self/mem")

    unreadable: list[SpoolError] = []
    spend = spool_spend(Spool(directory).iter_pending(unreadable), date(2026, 3, 2))
    assert (spend["alpha"].tokens, spend["alpha"].cost_usd) == (120, 0.25)
    assert [str(e) for e in unreadable] == [f"spool segment {broken} cannot be read: "
                                            "Input/output error"]  # fmt: skip
    status = gather_status(make_config(tmp_path), lock_wait_s=0.2)  # no warehouse yet
    alpha = next(p for p in status.providers if p.provider == "alpha")
    assert (alpha.last_probe_at, alpha.last_error) == (_DAY, "overloaded")
    assert any(f"{broken.name} cannot be read" in note for note in status.notes), status.notes


def test_a_line_for_a_table_this_version_does_not_know_is_quarantined(tmp_path: Path) -> None:
    """A newer nerfwatch may spool rows for a table this one lacks (after a downgrade):
    such a line is kept in ``quarantined_rows``, never deleted with its segment unseen."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    directory = tmp_path / "spool"
    rows = [_row() for _ in range(2)]
    _spool_with(directory, rows)
    future = json.dumps({"spool_table": "probe_notes", "run_id": "n1", "note": "x"})
    _segment(directory, 2).write_text(future + "\n", encoding="utf-8")

    assert _flush(directory, warehouse) == (2, None)
    quarantined = warehouse.query("SELECT reason, run_id, line FROM quarantined_rows").rows()
    assert quarantined == [("unknown table: probe_notes", "n1", future)]
    assert pending_lines(directory) == 0


def test_a_broken_warehouse_and_a_damaged_line_do_not_stop_the_daemon(tmp_path: Path) -> None:
    """The warehouse file is not DuckDB (zero bytes after a crash) and the spool holds a
    damaged line the flush could not quarantine yet: the daemon still starts and probes,
    and its rows wait in the spool."""
    config = make_config(tmp_path, every_s=0.2)
    config.warehouse.path.write_bytes(b"")
    directory = config.warehouse.spool_dir
    directory.mkdir()
    _segment(directory, 1).write_text("[1, 2]\n", encoding="utf-8")
    tuning = DaemonTuning(install_signals=False, schedule_report=False, flush_process=False)

    async def main() -> int:
        daemon = Daemon(config, probe_fn=LocalProbe(), tuning=tuning)
        stats = await within(daemon.run(stop_after_s=1.5), 120, "the daemon's run")
        return stats.done

    done = asyncio.run(main())
    assert done > 0
    assert pending_lines(directory) >= done + 1
    assert config.warehouse.path.read_bytes() == b""


def test_each_quarantined_line_is_named_by_its_segment_and_line_number(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A segment of thousands of lines is no help to an operator without the line: every
    quarantine message names the 1-based line in the file (a blank line counts, as in an
    editor), and the good rows around the damage still land."""
    warehouse = Warehouse(tmp_path / "w.duckdb")
    warehouse.migrate()
    directory = tmp_path / "spool"
    good = [_row(), _row()]
    _spool_with(directory, [])
    lines = [
        good[0].to_json(),  # 1
        '{"run_id": "cut',  # 2: not JSON
        "",  # 3: blank
        json.dumps({"spool_table": "probe_notes", "run_id": "n1"}),  # 4: a table unknown here
        json.dumps({"run_id": None, "provider": "alpha"}),  # 5: no run_id, cannot be stored
        good[1].to_json(),  # 6
    ]
    name = _segment(directory, 2).name
    (directory / name).write_text("\n".join(lines) + "\n" + '{"torn', encoding="utf-8")

    caplog.set_level(logging.ERROR)
    assert _flush(directory, warehouse) == (2, None)
    said = "\n".join(r.getMessage() for r in caplog.records)
    for number in (2, 4, 5):
        assert f"line {number} of {name}" in said, said
    assert f"{name} ends with a torn line (line 7," in said, said
    stored = warehouse.query("SELECT run_id FROM probe_results")["run_id"].to_list()
    assert sorted(stored) == sorted(r.run_id for r in good)
    assert warehouse.query("SELECT count(*) AS n FROM quarantined_rows")["n"][0] == 4
    numbers = warehouse.query("SELECT line_number FROM quarantined_rows ORDER BY 1")
    assert numbers["line_number"].to_list() == [2, 4, 5, 7]  # the table gives them too


@located_on_every_backend
def test_quarantined_rows_from_before_line_numbers_keep_null(
    warehouse_location: Path | Lake, tmp_path: Path
) -> None:
    """The line-number column reaches a warehouse created before it (a DuckDB file and
    both kinds of lake: the migration goes through the lake's schema translation), its
    earlier quarantined rows read NULL rather than a made-up number, and a flush then
    stores the line number of what it quarantines."""
    before = [m for m in load_migrations() if m.name != LINE_NUMBER_MIGRATION]
    assert len(before) == len(load_migrations()) - 1, "the line-number migration is missing"
    old = Warehouse(warehouse_location, migrations=before)
    old.insert_rows(
        "quarantined_rows",
        [{"line_hash": "h", "quarantined_at": _DAY, "reason": "invalid_json", "line": "{"}],
        key="line_hash",
    )
    old.close()
    warehouse = Warehouse(warehouse_location)
    try:
        assert warehouse.migrate() == [LINE_NUMBER_MIGRATION]
        directory = tmp_path / "spool"
        _spool_with(directory, [])
        segment = _segment(directory, 2)
        segment.write_text(_row().to_json() + "\nnot json\n", encoding="utf-8")
        assert _flush(directory, warehouse) == (1, None)
        rows = warehouse.query("SELECT line, line_number FROM quarantined_rows ORDER BY line")
        assert rows.rows() == [("not json", 2), ("{", None)]
    finally:
        warehouse.close()


@contextmanager
def _immutable(path: Path) -> Iterator[None]:
    """``path`` with the immutable attribute: the kernel refuses to change or delete it,
    for root too (a backup tool's lock, or ``chattr +i`` by hand)."""
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        unavailable(f"cannot make a file immutable here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.parametrize("fault", ["immutable", "unreadable"])
def test_a_spool_segment_the_kernel_refuses_does_not_stop_the_daemon(
    tmp_path: Path, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    """With the flush in the daemon's own thread, an OSError from the spool's files at the
    warm start (a segment that cannot be cut or deleted: EPERM; one whose read fails: EIO,
    here a segment linked to /proc/self/mem, whose first page no process has mapped)
    stopped the daemon with a traceback. It is one logged flush failure naming the file;
    the daemon starts, probes, and its own rows reach the warehouse."""
    config = make_config(tmp_path, every_s=0.2)
    directory = config.warehouse.spool_dir
    earlier = _row()
    _spool_with(directory, [earlier])
    segment = _segment(directory, 1)
    if fault == "unreadable":
        segment.unlink()
        segment.symlink_to("/proc/self/mem")
    tuning = DaemonTuning(install_signals=False, schedule_report=False, flush_process=False)

    async def main() -> int:
        daemon = Daemon(config, probe_fn=LocalProbe(), tuning=tuning)
        stats = await within(daemon.run(stop_after_s=1.5), 120, "the daemon's run")
        return stats.done

    caplog.set_level(logging.INFO)
    with _immutable(segment) if fault == "immutable" else nullcontext():
        done = asyncio.run(main())
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert done > 0
        says = {"immutable": "cannot be deleted", "unreadable": "cannot be read"}[fault]
        named = [e for e in errors if f"spool segment {segment} {says}" in e]
        assert len(named) == 1, f"one line for the fault, not one per flush: {errors}"
        assert all("\n" not in e for e in errors), errors
        assert segment.is_symlink() or segment.read_text(encoding="utf-8").strip()
    stored = Warehouse(config.warehouse.path).query("SELECT run_id FROM probe_results")
    run_ids = set(stored["run_id"].to_list())
    assert len(run_ids) >= done  # the other segments still flush
    assert (earlier.run_id in run_ids) == (fault == "immutable")


def _writer(kind: str, warehouse: Path, directory: Path) -> RowWriter:
    """The flush's writer in the daemon's own thread, or in its flush process (a real
    child process, as ``nerfwatch run`` starts it)."""
    if kind == "thread":
        return SegmentWriter(Warehouse(warehouse, lock_wait_s=0.2), directory)
    return FlushProcess(warehouse, lock_wait_s=0.2, spool_dir=directory, reply_timeout_s=120)


def _flushes(spool: Spool, flusher: Flusher, rows: list[ProbeResult]) -> list[FlushOutcome]:
    """Spool each row and flush after each one."""
    outcomes = []
    for row in rows:
        asyncio.run(spool.append(row.to_json()))
        outcomes.append(flusher.flush_once())
    return outcomes


def test_a_segment_the_flush_process_cannot_read_is_logged_as_a_spool_fault(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With the separate flush process, a segment whose read fails (EIO: linked to
    /proc/self/mem) came back as a warehouse error, logged as 'flush failed, spool keeps
    the rows until the warehouse is back: SpoolError: spool segment seg-... cannot be
    read'. It is a spool fault: one line says so with the segment's path, over several
    flushes, and the rows of every other segment are stored."""
    directory = tmp_path / "spool"
    earlier, later = _row(), [_row(), _row(), _row()]
    _spool_with(directory, [earlier])
    broken = _segment(directory, 2)
    broken.symlink_to("/proc/self/mem")
    spool = Spool(directory)
    spool.open()
    flusher = Flusher(spool, _writer("process", tmp_path / "w.duckdb", directory))
    caplog.set_level(logging.INFO)
    try:
        outcomes = _flushes(spool, flusher, later)
    finally:
        flusher.close()
        spool.close()
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, f"one line for the fault, not one per flush: {errors}"
    assert f"spool segment {broken} cannot be read: Input/output error" in errors[0], errors
    assert "warehouse is back" not in errors[0] and "SpoolError" not in errors[0], errors
    assert all(o.error is not None and str(broken) in o.error for o in outcomes), outcomes
    stored = Warehouse(tmp_path / "w.duckdb").query("SELECT run_id FROM probe_results")
    assert sorted(stored["run_id"]) == sorted(r.run_id for r in [earlier, *later])


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_a_stored_segment_that_cannot_be_deleted_is_reported_once_not_every_flush(
    tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A segment whose rows are stored but which the kernel will not delete (chattr +i)
    made every later flush a failure: read and inserted again (nothing doubled: the
    insert skips stored run_ids), the delete refused again, the flush counted failed. Now
    the first flush says once that it cannot be deleted, with its path; later flushes
    succeed, do not insert its rows again (no replay), and only try to delete it; once it
    can be deleted, it is, and the log says so."""
    directory = tmp_path / "spool"
    warehouse = tmp_path / "w.duckdb"
    earlier, later = _row(), [_row(), _row(), _row()]
    _spool_with(directory, [earlier])
    segment = _segment(directory, 1)
    spool = Spool(directory)
    spool.open()
    flusher = Flusher(spool, _writer(kind, warehouse, directory))
    caplog.set_level(logging.INFO)
    try:
        with _immutable(segment):
            outcomes = _flushes(spool, flusher, later)
            assert segment.exists()
        said = [r.getMessage() for r in caplog.records]
        last = flusher.flush_once()
        assert not segment.exists() and last.error is None
    finally:
        flusher.close()
        spool.close()
    assert [o.error for o in outcomes] == [None] * len(later), outcomes
    assert flusher.consecutive_failures == 0
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, f"one line for the segment, not one per flush: {errors}"
    assert f"spool segment {segment} cannot be deleted: Operation not permitted" in errors[0]
    assert not [m for m in said if "replay" in m], said  # its rows were not inserted again
    assert any(f"{segment}, stored earlier, is deleted at last" in m for m in caplog.messages)
    stored = Warehouse(warehouse).query("SELECT run_id FROM probe_results")["run_id"]
    assert sorted(stored) == sorted(r.run_id for r in [earlier, *later])


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_a_stored_segment_that_cannot_be_deleted_is_not_counted_as_waiting(
    tmp_path: Path, kind: str
) -> None:
    """A segment whose rows are stored but which the kernel will not delete (chattr +i)
    still counted in the spool depth: the flush's outcome (the daemon's metric), the
    spool's own depth (the stop summary), ``nerfwatch status`` (another process, which
    only sees the folder) all said one row waits although it is in the warehouse, and
    the spend read from the spool at start counted its cost a second time. Now none of
    them counts it; once it can be deleted, its stored mark goes with it."""
    config = make_config(tmp_path)
    directory, warehouse = config.warehouse.spool_dir, config.warehouse.path
    earlier = _row(cost_usd=0.25)
    _spool_with(directory, [earlier])
    segment = _segment(directory, 1)
    spool = Spool(directory)
    spool.open()
    flusher = Flusher(spool, _writer(kind, warehouse, directory))
    try:
        with _immutable(segment):
            outcome = flusher.flush_once()
            assert segment.exists() and outcome.error is None
            assert outcome.depth == 0
            assert spool.depth() == 0
            assert pending_lines(directory) == 0  # what status reads, from another process
            assert gather_status(config, lock_wait_s=5).spool_depth == 0
            assert spool_spend(Spool(directory).iter_pending(), _DAY.date()) == {}
        flusher.flush_once()
        assert not segment.exists()
    finally:
        flusher.close()
        spool.close()
    assert list(directory.glob("*.stored")) == []
    stored = Warehouse(warehouse).query("SELECT run_id FROM probe_results")["run_id"]
    assert stored.to_list() == [earlier.run_id]


def test_a_new_segment_never_takes_the_name_of_a_stored_mark(tmp_path: Path) -> None:
    """A stored mark whose segment is gone is dropped at open; one that cannot be
    dropped keeps its name taken, so a new segment is never counted as stored."""
    directory = tmp_path / "spool"
    directory.mkdir()
    (directory / "seg-000000000003.jsonl.stored").touch()
    spool = Spool(directory)
    spool.open()
    try:
        asyncio.run(spool.append(_row().to_json()))
        assert not (directory / "seg-000000000003.jsonl.stored").exists()
        assert [s.seq for s in list_segments(directory)] == [1]
        assert spool.depth() == 1 and pending_lines(directory) == 1
    finally:
        spool.close()
    mark = directory / "seg-000000000007.jsonl.stored"
    mark.touch()
    with _immutable(mark):
        spool = Spool(directory)
        spool.open()
        try:
            asyncio.run(spool.append(_row().to_json()))
            assert [s.seq for s in list_segments(directory)] == [1, 8]
            assert pending_lines(directory) == 2
        finally:
            spool.close()
