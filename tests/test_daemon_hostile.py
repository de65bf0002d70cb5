"""The data path against what a provider or a disk does to it: unstorable values,
a run whose bookkeeping fails after its row is spooled, a spool directory that refuses
new files, a full spool file system.

Provider tests talk to a real HTTP server on loopback through the real runner, and
flush into a real DuckDB file. File-system tests mount a tiny tmpfs (root only); when
they cannot, they skip with the reason, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pipeline.config import Config, ProbeConfig, ProviderConfig, load_config
from pipeline.daemon import Daemon, DaemonStats, DaemonTuning
from pipeline.daemon.flush import FlushBatch, SegmentWriter
from pipeline.daemon.spool import Spool, SpoolError, list_segments, read_segment
from pipeline.daemon.status import gather_status
from pipeline.warehouse import Lake, Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult
from tests.support.daemon import make_config, wait_until, wait_until_async, write_toml
from tests.support.http_server import QuietHandler, ThreadedServer
from tests.support.warehouses import located_on_every_backend

QUIET = DaemonTuning(install_signals=False, schedule_report=False)
HUGE = 10**25


class HostileProvider(ThreadedServer):
    """An OpenAI-compatible endpoint on loopback whose answers carry values no int64
    holds: ``usage.prompt_tokens = 10**25`` and ``x-ratelimit-limit-requests: 1e25``."""

    def __init__(self) -> None:
        calls: list[str] = []
        self.calls = calls

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                calls.append(self.path)
                body = json.dumps(
                    {
                        "id": "cmpl-1",
                        "model": "hostile-model",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": "42"},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": HUGE, "completion_tokens": 3},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.send_header("x-ratelimit-limit-requests", "1e25")
                self.send_header("x-ratelimit-remaining-requests", "99")
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler)


@pytest.fixture
def hostile() -> Iterator[HostileProvider]:
    server = HostileProvider()
    yield server
    server.close()


def _config(tmp_path: Path, base_url: str, location: Path | Lake | None = None) -> Config:
    provider = ProviderConfig(
        name="hostile",
        format="openai",
        base_url=base_url,
        model="hostile-model",
        api_key_env=None,
        price_input_per_mtok=1.0,
        price_output_per_mtok=4.0,
        max_concurrency=2,
    )
    probe = ProbeConfig(
        name="short",
        task="arithmetic",
        context_tokens=200,
        every_s=0.3,
        cron=None,
        providers=("hostile",),
        max_output_tokens=32,
        timeout_s=10.0,
        stream=False,
    )
    return make_config(tmp_path, providers=(provider,), probes=(probe,), location=location)


def _legacy_row(**changes: Any) -> dict[str, Any]:
    """A spool row as an earlier version wrote it: values are not range-checked."""
    result = ProbeResult(
        run_id=new_run_id(),
        started_at=datetime(2026, 11, 20, 12, 0, tzinfo=UTC),
        provider="hostile",
        model="hostile-model",
        probe="short",
        task_family="arithmetic",
        probe_site="test",
        error_class="ok",
    )
    row = result.as_row()
    row["started_at"] = result.started_at.isoformat()
    row.update(changes)
    return row


def _seed_spool(spool_dir: Path, rows: list[dict[str, Any]]) -> None:
    """A segment left behind by an earlier daemon process."""
    spool_dir.mkdir(parents=True)
    lines = "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows)
    (spool_dir / "seg-000000000001.jsonl").write_text(lines)


def _run(config: Config, seconds: float, tuning: DaemonTuning = QUIET) -> DaemonStats:
    async def main() -> DaemonStats:
        return await Daemon(config, tuning=tuning).run(stop_after_s=seconds)

    return asyncio.run(main())


@located_on_every_backend
def test_unstorable_values_become_null_and_never_block_the_rows_behind(
    tmp_path: Path, hostile: HostileProvider, warehouse_location: Path | Lake
) -> None:
    config = _config(tmp_path, hostile.base_url, warehouse_location)
    huge = _legacy_row(input_tokens=HUGE, rl_requests_limit=HUGE)
    refused = _legacy_row(run_status="exploded")  # a CHECK no clamping can satisfy
    good = _legacy_row()
    _seed_spool(config.warehouse.spool_dir, [huge, refused, good])

    stats = _run(config, 2.5)

    assert hostile.calls, "the daemon never reached the loopback provider"
    assert stats.done >= 2 and stats.lost == 0
    assert stats.spool_depth == 0
    stored = Warehouse(config.warehouse.location).query(
        "SELECT run_id, run_status, input_tokens, output_tokens, rl_requests_limit,"
        " rl_requests_remaining, sanity_flags FROM probe_results"
    )
    by_id = {row["run_id"]: row for row in stored.iter_rows(named=True)}
    assert good["run_id"] in by_id
    assert by_id[huge["run_id"]]["input_tokens"] is None
    assert "out_of_range:input_tokens" in by_id[huge["run_id"]]["sanity_flags"]
    live = [row for row in by_id.values() if row["output_tokens"] == 3]
    assert len(live) == stats.done
    for row in live:
        assert row["input_tokens"] is None and row["rl_requests_limit"] is None
        assert row["rl_requests_remaining"] == 99  # the sane header beside it is kept
        assert {"out_of_range:input_tokens", "out_of_range:rl_requests_limit"} <= set(
            row["sanity_flags"]
        )
    assert refused["run_id"] not in by_id
    quarantined = Warehouse(config.warehouse.location).query(
        "SELECT run_id, reason, line FROM quarantined_rows"
    )
    assert quarantined["run_id"].to_list() == [refused["run_id"]]
    assert quarantined["reason"][0].startswith("rejected: ")
    assert json.loads(quarantined["line"][0]) == refused  # kept verbatim
    assert gather_status(config, lock_wait_s=5).quarantined == 1


def test_a_config_integer_beyond_int64_does_not_block_flushing(
    tmp_path: Path, hostile: HostileProvider
) -> None:
    config = _config(tmp_path, hostile.base_url)
    probe = replace(config.probes[0], max_output_tokens=HUGE)
    config = replace(config, probes=(probe,))

    stats = _run(config, 1.5)

    assert stats.done >= 1 and stats.spool_depth == 0
    stored = Warehouse(config.warehouse.path).query(
        "SELECT max_output_tokens, sanity_flags FROM probe_results"
    )
    assert stored.height == stats.done + sum(stats.skipped.values()) + stats.aborted
    assert stored["max_output_tokens"].to_list() == [None] * stored.height
    assert all("out_of_range:max_output_tokens" in f for f in stored["sanity_flags"])


class _FailingAlerts:
    """The daemon's alert evaluator, except that ``observe`` breaks on every result
    (fault injection: the step that runs after a row is spooled)."""

    def __init__(self, real: object) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def observe(self, result: ProbeResult) -> None:
        raise RuntimeError(f"alert state corrupt at {result.run_id}")


def test_a_failure_after_the_spool_append_leaves_one_row_per_run(
    tmp_path: Path, hostile: HostileProvider
) -> None:
    config = _config(tmp_path, hostile.base_url)

    async def main() -> DaemonStats:
        daemon = Daemon(config, tuning=QUIET)
        daemon.alerts = _FailingAlerts(daemon.alerts)  # type: ignore[assignment]
        return await daemon.run(stop_after_s=1.5)

    stats = asyncio.run(main())

    assert stats.done >= 2
    rows = Warehouse(config.warehouse.path).query(
        "SELECT run_status, skip_reason FROM probe_results"
    )
    assert rows.height == stats.scheduled
    assert rows.filter(rows["skip_reason"] == "internal_error").height == 0
    assert stats.aborted == 0


# -- the spool's file system -------------------------------------------------------------


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Mount small tmpfs file systems (root only); unmounted at the end of the test."""
    mounts: list[Path] = []

    def mount(*, size: str = "1m", inodes: int = 64) -> Path:
        where = tmp_path / f"fs{len(mounts)}"
        where.mkdir()
        options = f"size={size},nr_inodes={inodes}"
        reason = None
        if os.geteuid() != 0 or shutil.which("mount") is None:
            reason = "mounting a tmpfs needs root"
        else:
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if done.returncode != 0:
                reason = f"cannot mount a tmpfs: {done.stderr.strip()}"
        if reason is not None:
            if os.environ.get("CI") == "true":
                pytest.fail(f"{reason} (CI=true: this test must run)")
            pytest.skip(reason)
        mounts.append(where)
        return where

    yield mount
    for where in reversed(mounts):
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


def _fill_inodes(directory: Path) -> list[Path]:
    """Create empty files until the file system has no inode left."""
    made: list[Path] = []
    for n in range(100_000):
        path = directory / f"filler-{n}"
        try:
            path.touch()
        except OSError:
            return made
        made.append(path)
    raise AssertionError(f"{directory} never ran out of inodes")


def _fill_space(directory: Path) -> Path:
    """Write one file until the file system is full."""
    path = directory / "filler.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        return path
    finally:
        os.close(fd)


def _fs_config(tmp_path: Path, spool_dir: Path, base_url: str) -> Config:
    config = _config(tmp_path, base_url)
    probe = replace(config.probes[0], every_s=0.1)
    return replace(
        config, warehouse=replace(config.warehouse, spool_dir=spool_dir), probes=(probe,)
    )


def _segments(spool_dir: Path) -> list[str]:
    return sorted(p.name for p in spool_dir.glob("seg-*.jsonl"))


def test_a_spool_directory_that_refuses_new_files_recovers_without_losing_a_row(
    tmp_path: Path, tiny_fs: Callable[..., Path], hostile: HostileProvider
) -> None:
    fs = tiny_fs(size="4m", inodes=64)
    config = _fs_config(tmp_path, fs / "spool", hostile.base_url)
    tuning = replace(QUIET, flush_backoff_max_s=0.5)

    async def main() -> DaemonStats:
        daemon = Daemon(config, tuning=tuning)
        stop = asyncio.Event()
        running = asyncio.ensure_future(daemon.run(stop_event=stop))
        await wait_until_async(lambda: daemon.stats.flushed_rows >= 3, 30, "a first flush")
        fillers = await asyncio.to_thread(_fill_inodes, fs)
        flushes = daemon.stats.flushes
        await wait_until_async(lambda: daemon.stats.flushes >= flushes + 4, 30, "flush retries")
        done_while_failing = daemon.stats.done
        for path in fillers:
            path.unlink()
        await wait_until_async(
            lambda: daemon.stats.done >= done_while_failing + 3, 30, "probes after recovery"
        )
        flushed = daemon.stats.flushed_rows
        await wait_until_async(lambda: daemon.stats.flushed_rows > flushed, 30, "a later flush")
        stop.set()
        return await asyncio.wait_for(running, 60)

    stats = asyncio.run(main())

    assert stats.lost == 0 and stats.spool_depth == 0
    stored = Warehouse(config.warehouse.path).query("SELECT count(*) AS n FROM probe_results")
    assert stored["n"][0] == stats.scheduled == stats.done + sum(stats.skipped.values())


def test_a_full_spool_file_system_drains_and_failed_appends_leave_no_litter(
    tmp_path: Path, tiny_fs: Callable[..., Path], hostile: HostileProvider
) -> None:
    fs = tiny_fs(size="256k", inodes=1024)
    spool_dir = fs / "spool"
    seeded = [_legacy_row() for _ in range(3)]
    _seed_spool(spool_dir, seeded)
    with open(spool_dir / "seg-000000000001.jsonl", "a") as fh:
        fh.write('{"run_id": "torn')  # an earlier process died mid-write
    config = _fs_config(tmp_path, spool_dir, hostile.base_url)
    tuning = replace(QUIET, flush_backoff_max_s=0.5)
    filler = _fill_space(fs)

    async def main() -> DaemonStats:
        daemon = Daemon(config, tuning=tuning)
        stop = asyncio.Event()
        running = asyncio.ensure_future(daemon.run(stop_event=stop))
        await wait_until_async(lambda: daemon.stats.flushed_rows >= 3, 30, "the seeded rows")
        _fill_space(fs)  # again: flushing the seeded segment freed its page
        scheduled = daemon.stats.scheduled
        await wait_until_async(
            lambda: daemon.stats.scheduled >= scheduled + 5, 30, "runs while full"
        )
        flushes = daemon.stats.flushes
        await wait_until_async(lambda: daemon.stats.flushes >= flushes + 4, 30, "more flushes")
        litter.extend(_segments(spool_dir))
        filler.unlink()
        flushed = daemon.stats.flushed_rows
        await wait_until_async(
            lambda: daemon.stats.flushed_rows >= flushed + 8, 30, "rows flushed after recovery"
        )
        stop.set()
        return await asyncio.wait_for(running, 60)

    litter: list[str] = []
    stats = asyncio.run(main())

    assert len(litter) <= 1, f"segments left while the disk was full: {litter}"
    assert not (spool_dir / "rejected.jsonl").exists()
    assert stats.lost == 0 and stats.spool_depth == 0
    warehouse = Warehouse(config.warehouse.path)
    stored = set(warehouse.query("SELECT run_id FROM probe_results")["run_id"].to_list())
    assert {r["run_id"] for r in seeded} <= stored
    assert len(stored) == len(seeded) + stats.scheduled
    torn = warehouse.query("SELECT reason, line FROM quarantined_rows").rows()
    assert torn == [("torn_tail", '{"run_id": "torn')]


# -- lifecycle events --------------------------------------------------------------------


def _started_then_killed(config: Path) -> None:
    """``nerfwatch run`` until it logs that it started, then ``kill -9``."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from pipeline.cli import main; main()", "run", "--config",
         str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        start_new_session=True,
    )  # fmt: skip
    started = threading.Event()

    def watch() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "daemon started" in line:
                started.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        if not started.wait(60):
            raise AssertionError("nerfwatch run did not log 'daemon started' within 60 s")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        watcher.join(timeout=30)
        assert proc.stderr is not None
        proc.stderr.close()


def _hostile_table(hostile: HostileProvider) -> dict[str, object]:
    """The hostile provider as a ``[[providers]]`` table, for a daemon run from a file."""
    return {
        "name": "hostile",
        "format": "openai",
        "base_url": hostile.base_url,
        "model": "hostile-model",
        "price_input_per_mtok": 1.0,
        "price_output_per_mtok": 4.0,
    }


def test_every_start_that_reached_daemon_started_is_recorded(
    tmp_path: Path, hostile: HostileProvider
) -> None:
    """Killed right after starting (no flush, no stop), each session keeps its start."""
    provider = _hostile_table(hostile)
    probe = {"name": "hourly", "task": "arithmetic", "context": 200, "every": "1h"}
    config = write_toml(
        tmp_path / "nerfwatch.toml", [provider], [probe], daemon={"flush_interval": "1h"}
    )
    for _ in range(3):
        _started_then_killed(config)

    async def once() -> DaemonStats:
        return await Daemon(load_config(config), tuning=QUIET).run(stop_after_s=0.5)

    stats = asyncio.run(once())
    events = Warehouse(tmp_path / "nerfwatch.duckdb").query(
        "SELECT session_id, kind FROM daemon_events"
    )
    starts = events.filter(events["kind"] == "start")
    assert starts["session_id"].n_unique() == starts.height == 4
    assert stats.session_id in starts["session_id"].to_list()


def test_appends_to_a_full_disk_fail_cleanly_and_leave_nothing_behind(
    tiny_fs: Callable[..., Path],
) -> None:
    fs = tiny_fs(size="256k", inodes=1024)
    spool = Spool(fs / "spool")
    spool.open()
    row = _legacy_row()
    asyncio.run(spool.append(json.dumps(row)))
    (segment,) = list_segments(spool.directory)
    size = segment.path.stat().st_size
    filler = _fill_space(fs)

    async def refused() -> int:
        failures = 0
        for _ in range(20):
            try:
                await spool.append(json.dumps(_legacy_row(detail="x" * 2000)))
            except SpoolError:
                failures += 1
        return failures

    assert asyncio.run(refused()) == 20
    assert [s.path for s in list_segments(spool.directory)] == [segment.path]
    assert segment.path.stat().st_size == size  # no torn bytes after the last good line
    filler.unlink()
    asyncio.run(spool.append(json.dumps(_legacy_row())))  # the same segment works again
    assert [s.path for s in list_segments(spool.directory)] == [segment.path]
    assert len(read_segment(segment.path)) == 2
    spool.close()


def test_events_in_a_segment_that_needs_the_slow_path_are_stored(tmp_path: Path) -> None:
    warehouse = Warehouse(tmp_path / "w.duckdb", lock_wait_s=1)
    spool_dir = tmp_path / "spool"
    event = {
        "spool_table": "daemon_events",
        "event_id": new_run_id(),
        "session_id": "s1",
        "occurred_at": "2026-11-20T12:00:00+00:00",
        "kind": "start",
        "detail": "1 jobs",
        "host": "h",
        "pid": 7,
        "nerfwatch_version": None,
        "rows_lost": 0,
    }
    broken_event = {**event, "event_id": new_run_id(), "kind": None}
    _seed_spool(spool_dir, [_legacy_row(input_tokens=HUGE), event, broken_event])
    (segment,) = list_segments(spool_dir)

    written = SegmentWriter(warehouse, spool_dir).write(FlushBatch([segment.path]))

    assert written.inserted == 1
    stored = warehouse.query("SELECT event_id, kind, rows_lost FROM daemon_events").rows()
    assert stored == [(event["event_id"], "start", 0)]
    quarantined = warehouse.query("SELECT run_id FROM quarantined_rows")["run_id"].to_list()
    assert quarantined == [broken_event["event_id"]]
    assert not segment.path.exists()


def test_sigterm_while_the_spool_refuses_new_files_exits_zero(
    tmp_path: Path, tiny_fs: Callable[..., Path], hostile: HostileProvider
) -> None:
    fs = tiny_fs(size="4m", inodes=64)
    provider = _hostile_table(hostile)
    probe = {"name": "fast", "task": "arithmetic", "context": 200, "every": "1s"}
    config = write_toml(
        tmp_path / "nerfwatch.toml", [provider], [probe], daemon={"flush_interval": "100ms"}
    )
    spool_dir = fs / "spool"
    text = config.read_text().replace(str(tmp_path / "spool"), str(spool_dir))
    config.write_text(text)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from pipeline.cli import main; main()", "run", "--config",
         str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    started = threading.Event()

    def watch() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "daemon started" in line:
                started.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        if not started.wait(60):
            raise AssertionError(f"nerfwatch run did not start within 60 s: {lines[-5:]}")
        _fill_inodes(fs)
        calls = len(hostile.calls)
        wait_until(lambda: len(hostile.calls) >= calls + 3, 30, "probes after the inodes ran out")
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        watcher.join(timeout=30)
        assert proc.stderr is not None
        proc.stderr.close()
    output = "".join(lines)
    assert code == 0, output[-3000:]
    assert "Traceback" not in output
    assert output.count("cannot start a new segment") == 1  # once per state change
    assert " 0 lost" in output  # the stop summary: the active segment kept every row
