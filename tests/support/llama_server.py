"""A real llama.cpp ``llama-server`` on a free loopback port, for fidelity tests.

The binary comes from ``tests.support.llama_build`` (built once per machine; bootstrap
builds it in CI). The model is the tiny random-weight GGUF of ``tests.support.tiny_model``,
written to a temp dir. Without the binary the tests are skipped with the reason locally
and fail in CI. The server is stopped by PID at the end of the session.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.llama_build import binary
from tests.support.mounts import unavailable
from tests.support.tiny_model import N_CTX, write_tiny_model
from tests.support.waiting import start_server, stop_server

__all__ = ["LlamaServer", "llama_server", "start_llama_server"]

READY_DEADLINE_S = 120.0
STOP_DEADLINE_S = 30.0


@dataclass(frozen=True, slots=True)
class LlamaServer:
    process: subprocess.Popen[bytes]
    port: int
    model: Path
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def context(self) -> int:
        return N_CTX


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(server: LlamaServer) -> None:
    deadline = time.monotonic() + READY_DEADLINE_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"llama-server exited: {server.log.read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"llama-server not ready in {READY_DEADLINE_S:.0f} s: {server.log}")


def start_llama_server(
    folder: Path, model: Path | None = None, *, alias: str | None = None, port: int | None = None
) -> LlamaServer:
    """Start the server on ``model`` (default: a fresh tiny model in ``folder``).
    ``alias``: the model name it reports (default: the file's path); ``port``: a given
    one, e.g. to serve other weights where the last server was."""
    exe = binary("llama-server")
    if exe is None:
        unavailable(
            "llama-server is not built here (python3 -m tests.support.llama_build, "
            "or NERFWATCH_LLAMA=build python3 bootstrap.py test)"
        )
        raise AssertionError("unreachable")
    model = model or write_tiny_model(folder / "tiny.gguf")
    port, log = port or _free_port(), folder / f"llama-server-{model.stem}.log"
    command = [
        str(exe), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
        "-c", str(N_CTX), "-np", "1", "-t", "2", "--chat-template", "chatml", "--no-webui",
    ]  # fmt: skip
    if alias:
        command += ["--alias", alias]
    process = start_server(
        command,
        log,
        lambda process: _wait_ready(LlamaServer(process, port, model, log)),
        stop_timeout=STOP_DEADLINE_S,
    )
    return LlamaServer(process, port, model, log)


def stop(server: LlamaServer) -> None:
    stop_server(server.process, STOP_DEADLINE_S)


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One llama-server for the session (tiny model, 8,192-token context, one slot)."""
    server = start_llama_server(tmp_path_factory.mktemp("llama"))
    try:
        yield server
    finally:
        stop(server)
