"""``nerfwatch run`` as a real process: SIGTERM mid-probe, kill -9 during flushes.

The simulator runs in the test process; the daemon subprocess probes it over loopback.
We watch the daemon through its /metrics endpoint (in-flight probes, flush count)
instead of sleeping.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.daemon.spool import list_segments, read_segment
from pipeline.warehouse import Warehouse
from probes.simulator import SimulatorHandle
from tests.support.daemon import (
    every_second_probe,
    free_port,
    nerfwatch_run,
    scrape,
    simulator_provider,
    write_toml,
)
from tests.support.lock_holder import holding
from tests.support.procfs import open_targets, processes
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

_MAIN = "from pipeline.cli import main; main()"


def _flushes_at_least(proc: subprocess.Popen[str], port: int, count: int) -> bool:
    if proc.poll() is not None:
        _, err = proc.communicate(timeout=60)
        raise AssertionError(f"daemon exited with {proc.returncode}: {err[-2000:]}")
    return (scrape(port, "nerfwatch_flush_duration_seconds_count") or 0) >= count


def test_sigterm_mid_probe_aborts_cleanly_and_exits_zero(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    port = free_port()
    config = write_toml(
        tmp_path / "nerfwatch.toml",
        providers=[simulator_provider(simulator, "nova", headers={"x-sim-fault": "stall"})],
        probes=[
            {
                "name": "short",
                "task": "arithmetic",
                "context": 300,
                "every": "5s",
                "timeout": "5s",
                "read_timeout": "5s",
            }
        ],
        daemon={"shutdown_grace": "200ms", "metrics_port": port, "flush_interval": "200ms"},
    )
    with nerfwatch_run(config) as proc:
        wait_until(lambda: scrape(port, "nerfwatch_probes_in_flight") == 1, 120, "a stalled probe")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "aborting 1 in-flight probes" in err
    rows = Warehouse(tmp_path / "nerfwatch.duckdb").query(
        "SELECT run_status, skip_reason, total_ms, error_class FROM probe_results"
    )
    assert rows.rows() == [("aborted", "shutdown", None, None)]


def test_sigterm_to_the_process_group_still_ends_with_a_final_flush(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    """``timeout 180 nerfwatch run`` (and ``kill -- -PGID``) signal the whole group. The
    flush process died of that SIGTERM, so the final flush failed ('flush process exited
    ... status -15') and the stop row stayed in the spool, where ``nerfwatch status`` still
    counted it as waiting after the daemon had gone."""
    port = free_port()
    config = write_toml(
        tmp_path / "nerfwatch.toml",
        providers=[simulator_provider(simulator, "nova")],
        probes=[every_second_probe("short")],
        daemon={"shutdown_grace": "200ms", "metrics_port": port, "flush_interval": "200ms"},
    )
    with nerfwatch_run(config) as proc:
        wait_until(lambda: _flushes_at_least(proc, port, 1), 120, "the daemon's first flush")
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "flush process exited" not in err and "flush failed" not in err, err
    assert "spool depth 0" in err, err
    assert not any(read_segment(s.path) for s in list_segments(tmp_path / "spool"))
    assert _events(tmp_path / "nerfwatch.duckdb")[-1] == "stop"


def test_sigterm_during_a_start_up_held_up_by_the_warehouse_stops_cleanly(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    """The start-up migrates and replays the spool, and waits for a warehouse another
    process holds (20 s and more). A SIGTERM then used to kill the daemon outright; now it
    is taken when the start-up ends, and the stop is the usual clean one."""
    db = tmp_path / "nerfwatch.duckdb"
    Warehouse(db).migrate()
    config = write_toml(
        tmp_path / "nerfwatch.toml",
        providers=[simulator_provider(simulator, "nova")],
        probes=[every_second_probe("short")],
        daemon={"shutdown_grace": "200ms", "metrics_port": free_port()},
    )
    log = tmp_path / "daemon.log"
    with holding(db), nerfwatch_run(config, output=log) as proc:
        # the spool is open: the start-up is under way, and its waits are ahead
        wait_until(
            lambda: (tmp_path / "spool" / ".lock").exists() or proc.poll() is not None,
            120,
            "the daemon's spool to open",
        )
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=120)
    text = log.read_text()
    assert proc.returncode == 0, text[-3000:]
    assert "daemon starting" in text and "stop requested (SIGTERM)" in text
    assert "daemon stopped (SIGTERM)" in text


def _flush_holder(daemon: int, path: Path) -> int | None:
    """The daemon's flush process while it holds the database (only during a flush)."""
    target = str(path.resolve())
    holders = [c for c in processes(ppid=daemon) if target in open_targets(c)]
    return holders[0] if holders else None


def _acknowledged(tmp_path: Path) -> set[str]:
    """Run ids durable after a crash: committed rows plus complete spool lines."""
    ids = {
        json.loads(line)["run_id"]
        for segment in list_segments(tmp_path / "spool")
        for line in read_segment(segment.path)
    }
    stored = Warehouse(tmp_path / "nerfwatch.duckdb").query("SELECT run_id FROM probe_results")
    return ids | set(stored["run_id"].to_list())


def _kill_inside_a_flush(
    proc: subprocess.Popen[str], port: int, db: Path, flushes: int, who: str
) -> None:
    """After ``flushes`` flushes, SIGKILL ``who`` (daemon, flusher or both) while the
    flush process holds the database."""
    wait_until(lambda: _flushes_at_least(proc, port, flushes), 120, f"{flushes} flushes")
    holder: list[int] = []

    def caught() -> bool:
        pid = _flush_holder(proc.pid, db)
        holder[:] = [pid] if pid else []
        return bool(holder)

    wait_until(caught, 60, "the flush process holding the database")
    if who == "both":  # a crash of the whole service (systemd kills the cgroup)
        os.killpg(proc.pid, signal.SIGKILL)
    else:
        os.kill(holder[0] if who == "flusher" else proc.pid, signal.SIGKILL)


def test_kill_9_during_flushes_then_restart_keeps_every_result_exactly_once(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    port = free_port()
    names = ("nova", "sable")
    config = write_toml(
        tmp_path / "nerfwatch.toml",
        providers=[simulator_provider(simulator, n, max_concurrency=4) for n in names],
        probes=[every_second_probe(f"p{i}") for i in range(4)],
        daemon={"flush_interval": "20ms", "metrics_port": port, "max_concurrency": 8},
    )
    rng = random.Random(7)
    db = tmp_path / "nerfwatch.duckdb"
    acknowledged: set[str] = set()

    # Cycle 0: both die mid-flush. Cycle 1: the flush process alone dies mid-flush,
    # the daemon replaces it and flushes on, then both die. Cycle 2: the daemon alone
    # dies; its flush process finishes or is cut off, and exits.
    for cycle in range(3):
        with nerfwatch_run(config) as proc:
            target = 3 + rng.randint(0, 5)
            if cycle == 1:
                _kill_inside_a_flush(proc, port, db, target, "flusher")
                target += 3
            who = {0: "both", 1: "both", 2: "daemon"}[cycle]
            _kill_inside_a_flush(proc, port, db, target, who)
            proc.wait(timeout=30)
        before = _acknowledged(tmp_path)
        assert acknowledged <= before  # nothing acknowledged earlier was lost
        acknowledged = before
    with nerfwatch_run(config) as proc:
        wait_until(lambda: _flushes_at_least(proc, port, 2), 120, "a flush after restart")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    frame = Warehouse(tmp_path / "nerfwatch.duckdb").query(
        "SELECT run_id, count(*) OVER (PARTITION BY run_id) AS n FROM probe_results"
    )
    stored = frame["run_id"].to_list()
    assert acknowledged and acknowledged <= set(stored)
    assert set(frame["n"].to_list()) == {1}
    assert not any(read_segment(s.path) for s in list_segments(tmp_path / "spool"))


def _events(db: Path) -> list[str]:
    frame = Warehouse(db).query("SELECT kind FROM daemon_events ORDER BY occurred_at")
    return [str(k) for k in frame["kind"].to_list()]


def test_status_while_running_and_sighup_reload(tmp_path: Path, simulator: SimulatorHandle) -> None:
    port = free_port()
    probe = every_second_probe("short")
    providers = [simulator_provider(simulator, "nova"), simulator_provider(simulator, "sable")]
    daemon_keys = {"flush_interval": "200ms", "metrics_port": port}
    path = tmp_path / "nerfwatch.toml"
    write_toml(path, providers, [probe], daemon_keys)
    db = tmp_path / "nerfwatch.duckdb"
    with nerfwatch_run(path) as proc:
        wait_until(lambda: _flushes_at_least(proc, port, 2), 120, "first flushes")
        status = subprocess.run(
            [sys.executable, "-c", _MAIN, "status", "--config", str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert status.returncode == 0, status.stderr
        assert "nova" in status.stdout and "sable" in status.stdout
        assert "spool depth:" in status.stdout
        path.write_text(path.read_text().replace('every = "1s"', 'every = "soon"'))
        proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "reload_failed" in _events(db), 60, "the failed reload")
        added = {**probe, "name": "added", "providers": ["nova"]}
        write_toml(path, providers, [probe, added], daemon_keys)
        proc.send_signal(signal.SIGHUP)
        wait_until(
            lambda: (scrape(port, 'nerfwatch_probes_total{probe="added"') or 0) >= 2,
            60,
            "probes of the added job",
        )
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "config reload failed, keeping the running config" in err
    assert "config reloaded" in err
    assert _events(db)[-1] == "stop"
    probes = Warehouse(db).query("SELECT DISTINCT probe FROM probe_results")["probe"].to_list()
    assert sorted(probes) == ["added", "short"]
