"""A throwaway PostgreSQL cluster on a free loopback port, for the lake's catalog.

Debian's server binaries (``/usr/lib/postgresql/<version>/bin``; bootstrap installs the
``postgresql`` package in CI). The cluster lives in a fresh temp dir with trust
authentication on 127.0.0.1 only and fsync off; ``postgres`` runs as our child and is
stopped by its PID at the end of the session. As root, initdb refuses to run, so the
cluster is owned by and run as the ``postgres`` system user. Without the binaries the
tests are skipped with the reason locally and fail in CI.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.daemon import free_port
from tests.support.mounts import unavailable
from tests.support.waiting import start_server, stop_server, wait_until

__all__ = ["PostgresServer", "postgres_server"]

READY_DEADLINE_S = 60.0
STOP_DEADLINE_S = 30.0
COMMAND_DEADLINE_S = 60.0
USER = "nerfwatch"


def server_binaries() -> Path | None:
    """The newest installed Debian PostgreSQL ``bin`` folder with initdb and postgres."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    for initdb in reversed(found):
        if (initdb.parent / "postgres").is_file():
            return initdb.parent
    return None


@dataclass
class PostgresServer:
    process: subprocess.Popen[bytes]
    port: int
    folder: Path
    bin_dir: Path
    run_as: str | None
    _names: Iterator[int] = field(default_factory=itertools.count)

    def conninfo(self, dbname: str) -> str:
        """libpq conninfo without a password (trust authentication on loopback)."""
        return f"host=127.0.0.1 port={self.port} dbname={dbname} user={USER}"

    def new_database(self) -> str:
        """A fresh, empty database for one test; its name."""
        name = self.unused_database()
        self.create_database(name)
        return name

    def unused_database(self) -> str:
        """The name of a database no test has created (yet): a catalog to point at before
        it exists."""
        return f"lake_{next(self._names)}"

    def create_database(self, name: str) -> None:
        self._client("createdb", name)

    def busy_transactions(self, dbname: str, client_ports: set[int] | None = None) -> int:
        """Sessions of ``dbname`` inside a transaction right now (other than ours); only
        those from ``client_ports`` when given (to pick one process's sessions)."""
        sql = (
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND xact_start IS NOT NULL AND pid <> pg_backend_pid()"
        )
        if client_ports is not None:
            if not client_ports:
                return 0
            sql += f" AND client_port IN ({', '.join(str(int(p)) for p in client_ports)})"
        return int(self._client("psql", "-d", dbname, "-Atc", sql).strip())

    def sql(self, dbname: str, statement: str) -> str:
        """Run ``statement`` with psql in ``dbname``; its unaligned output."""
        return self._client("psql", "-d", dbname, "-Atc", statement)

    def crash(self) -> None:
        """SIGKILL the postmaster (a power cut for the catalog) and wait until its backends,
        which notice within a moment, have exited too; ``restarted`` then recovers the
        cluster from its WAL, as after a real crash."""
        backends = _children(self.process.pid)
        self.process.kill()
        self.process.wait(timeout=STOP_DEADLINE_S)
        wait_until(
            lambda: not _running(backends),
            STOP_DEADLINE_S,
            f"the backends of the killed postgres in {self.folder} to exit",
        )

    def restarted(self, port: int | None = None) -> PostgresServer:
        """The same cluster started again (on ``port``, or the one it had); the caller
        keeps the returned server (and stops it); it goes on naming new databases where
        this one left off (the cluster keeps the ones made before)."""
        server = launch(self.bin_dir, self.folder, port or self.port, self.run_as)
        server._names = self._names
        return server

    def _client(self, tool: str, *args: str) -> str:
        command = [str(self.bin_dir / tool), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER]
        done = subprocess.run(
            [*command, *args], capture_output=True, text=True, timeout=COMMAND_DEADLINE_S
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout


def _children(parent: int) -> set[int]:
    """PIDs whose parent is ``parent`` (a postmaster's backends and helpers)."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
        except OSError:
            continue
        if stat and int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            found.add(int(entry.name))
    return found


def _running(pids: set[int]) -> bool:
    return any(Path(f"/proc/{pid}").exists() for pid in pids)


def _owned(folder: Path, run_as: str | None) -> None:
    if run_as is not None:
        entry = pwd.getpwnam(run_as)
        os.chown(folder, entry.pw_uid, entry.pw_gid)


def start_postgres(
    bin_dir: Path, *, parent: Path | None = None, settings: dict[str, str] | None = None
) -> PostgresServer:
    """initdb a cluster in a new temp dir (under ``parent``, e.g. a small tmpfs) and start
    ``postgres`` on a free port. ``settings`` go into its postgresql.conf, so a restart
    keeps them (a test's ``max_connections``, say)."""
    run_as = "postgres" if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="nerfwatch-pg-", dir=parent))
    _owned(folder, run_as)
    data = folder / "data"
    initdb = [
        str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "--no-sync",
        "-E", "UTF8", "--no-instructions",
    ]  # fmt: skip
    done = subprocess.run(
        initdb, capture_output=True, text=True, timeout=COMMAND_DEADLINE_S, user=run_as
    )
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed: {done.stderr.strip()}")
    with (data / "postgresql.conf").open("a", encoding="utf-8") as conf:
        conf.writelines(f"{name} = '{value}'\n" for name, value in (settings or {}).items())
    try:
        return launch(bin_dir, folder, free_port(), run_as)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def launch(bin_dir: Path, folder: Path, port: int, run_as: str | None) -> PostgresServer:
    """Start ``postgres`` on the cluster in ``folder`` (made by initdb) and wait for it."""
    data, log = folder / "data", folder / "postgres.log"
    command = [
        str(bin_dir / "postgres"), "-D", str(data), "-p", str(port), "-k", str(folder),
        "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
    ]  # fmt: skip
    process = start_server(
        command,
        log,
        lambda process: _wait_ready(PostgresServer(process, port, folder, bin_dir, run_as), log),
        stop_timeout=STOP_DEADLINE_S,
        user=run_as,
    )
    return PostgresServer(process, port, folder, bin_dir, run_as)


def _wait_ready(server: PostgresServer, log: Path) -> None:
    deadline = time.monotonic() + READY_DEADLINE_S
    probe = [str(server.bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(server.port)]
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"postgres exited: {log.read_text(errors='replace')[-2000:]}")
        if subprocess.run(probe, capture_output=True, timeout=COMMAND_DEADLINE_S).returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"postgres not ready in {READY_DEADLINE_S:.0f} s: see {log}")


def stop(server: PostgresServer) -> None:
    """Fast shutdown by PID (SIGINT), then SIGKILL past the deadline; remove the cluster."""
    stop_server(server.process, STOP_DEADLINE_S, signal.SIGINT)
    shutil.rmtree(server.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL cluster for the session; each test takes a ``new_database()``."""
    bin_dir = server_binaries()
    if bin_dir is None:
        unavailable(
            "PostgreSQL server binaries are not installed (/usr/lib/postgresql/*/bin; "
            "apt-get install postgresql, or python3 bootstrap.py test as root)"
        )
        raise AssertionError("unreachable")
    server = start_postgres(bin_dir)
    try:
        yield server
    finally:
        stop(server)
