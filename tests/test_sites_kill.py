"""Three probe sites, one lake: ``kill -9`` of one site's daemon while the sites commit.

Three real ``nerfwatch run`` processes (sites frankfurt, virginia, shanghai, each with its
own spool folder and metrics port) write into one DuckLake whose catalog is a real
PostgreSQL and whose data sit on a real S3 server (SeaweedFS). One site's whole service
is killed with SIGKILL while one of its own catalog transactions is open (its PostgreSQL
sessions found by their client ports), twice, and restarted; the other two write on
throughout. Afterwards every row that was acknowledged (committed to the lake or a
complete line in the victim's spool at the moment of the kill) is in the lake exactly
once, under the site that probed it. Each daemon's output goes to a file in its site's
folder, quoted when one exits early.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import pytest

from pipeline.daemon.spool import list_segments, read_segment
from pipeline.warehouse import Lake, Warehouse
from probes.simulator import SimulatorHandle
from tests.support import daemon as site_daemon
from tests.support.postgres import PostgresServer
from tests.support.procfs import group_local_ports, processes
from tests.support.seaweedfs import BUCKET, S3Server
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

SITES = ("frankfurt", "virginia", "shanghai")
VICTIM = "virginia"
KILLS = 2


def _log(folder: Path) -> Path:
    return folder / "daemon.log"


def _tail(folder: Path) -> str:
    return _log(folder).read_text(errors="replace")[-3000:]


def _flushes(proc: subprocess.Popen[str], folder: Path, port: int) -> float:
    if proc.poll() is not None:
        raise AssertionError(
            f"{folder.name}'s daemon exited with {proc.returncode}: {_tail(folder)}"
        )
    return site_daemon.scrape(port, "nerfwatch_flush_duration_seconds_count") or 0


def _site_config(folder: Path, site: str, lake: Lake, sim: SimulatorHandle, port: int) -> Path:
    folder.mkdir()
    providers = [
        site_daemon.simulator_provider(sim, name, max_concurrency=4) for name in ("nova", "sable")
    ]
    probes = [site_daemon.every_second_probe(f"p{i}") for i in range(3)]
    return site_daemon.write_toml(
        folder / "nerfwatch.toml",
        providers,
        probes,
        daemon={"flush_interval": "20ms", "metrics_port": port, "max_concurrency": 8},
        warehouse=site_daemon.site_on_lake(lake, folder, site),
    )


def _spooled(folder: Path) -> set[str]:
    return {
        json.loads(line)["run_id"]
        for segment in list_segments(folder / "spool")
        for line in read_segment(segment.path)
    }


def _stored(lake: Lake, site: str) -> set[str]:
    frame = Warehouse(lake).query(
        "SELECT run_id FROM probe_results WHERE probe_site = ?", params=[site]
    )
    return set(frame["run_id"].to_list())


def test_kill_9_of_one_site_during_commits_keeps_every_acknowledged_row_once(
    tmp_path: Path,
    simulator: SimulatorHandle,
    postgres_server: PostgresServer,
    s3_server: S3Server,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)  # for this test's own reads of the lake
    env = {**os.environ, **s3_server.environment()}
    database = postgres_server.new_database()
    lake = Lake(
        catalog=f"postgres:{postgres_server.conninfo(database)}",
        data_path=f"s3://{BUCKET}/{database}/",
    )
    Warehouse(lake).migrate()  # one site creates the lake; the daemons find it
    ports = {site: site_daemon.free_port() for site in SITES}
    configs = {
        site: _site_config(tmp_path / site, site, lake, simulator, ports[site]) for site in SITES
    }
    acknowledged: set[str] = set()
    with ExitStack() as others:
        running = {
            site: others.enter_context(
                site_daemon.nerfwatch_run(configs[site], env, _log(tmp_path / site))
            )
            for site in SITES
            if site != VICTIM
        }
        for kill in range(KILLS):
            with site_daemon.nerfwatch_run(configs[VICTIM], env, _log(tmp_path / VICTIM)) as victim:
                wait_until(
                    lambda: _flushes(victim, tmp_path / VICTIM, ports[VICTIM]) >= 5,
                    180,
                    f"{VICTIM}'s flushes",
                )
                for site, proc in running.items():
                    wait_until(
                        lambda p=proc, s=site: _flushes(p, tmp_path / s, ports[s]) >= 3,
                        180,
                        f"{site} flushes",
                    )
                wait_until(
                    lambda: (
                        postgres_server.busy_transactions(database, group_local_ports(victim.pid))
                        > 0
                    ),
                    120,
                    f"a catalog transaction of {VICTIM}'s open",
                )
                os.killpg(victim.pid, signal.SIGKILL)
                victim.wait(timeout=30)
                # The whole service (its flush process too) gone before anything is read
                # or restarted: a process in uninterruptible I/O dies only after it.
                wait_until(
                    lambda: not processes(pgrp=victim.pid, living=True),
                    60,
                    f"every process of {VICTIM}'s killed service to be gone",
                )
            spooled, stored = _spooled(tmp_path / VICTIM), _stored(lake, VICTIM)
            print(
                f"kill {kill}: {len(stored)} rows committed, {len(spooled - stored)} only spooled"
            )
            now = spooled | stored
            assert acknowledged <= now, f"kill {kill}: acknowledged rows were lost"
            acknowledged = now
        with site_daemon.nerfwatch_run(configs[VICTIM], env, _log(tmp_path / VICTIM)) as victim:
            wait_until(
                lambda: _flushes(victim, tmp_path / VICTIM, ports[VICTIM]) >= 3,
                180,
                "flushes after restart",
            )
            stopping = {VICTIM: victim, **running}
            for proc in stopping.values():
                proc.send_signal(signal.SIGTERM)
            for site, proc in stopping.items():
                proc.wait(timeout=120)
                assert proc.returncode == 0, f"{site}: {_tail(tmp_path / site)}"

    frame = Warehouse(lake).query(
        "SELECT run_id, probe_site, count(*) OVER (PARTITION BY run_id) AS n FROM probe_results"
    )
    assert set(frame["n"].to_list()) == {1}, "a row is stored more than once"
    by_site: dict[str, set[str]] = defaultdict(set)
    for run_id, site in zip(frame["run_id"], frame["probe_site"], strict=True):
        by_site[site].add(run_id)
    assert set(by_site) == set(SITES)
    assert all(by_site[site] for site in SITES), {s: len(r) for s, r in by_site.items()}
    assert acknowledged and acknowledged <= by_site[VICTIM]
    for site in SITES:
        assert not _spooled(tmp_path / site), f"{site}'s spool was not drained"
