"""The simulator in a child process: for benchmarks, so its CPU is not the caller's.

``running_in_process(...)`` starts ``nerfwatch simulate serve`` on a free loopback port,
waits until it accepts connections and terminates it on exit. ``niceness`` lowers its
CPU priority (it stands in for providers on other machines).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from probes.simulator.running import HOST

__all__ = ["SimulatorProcess", "running_in_process"]


@dataclass(frozen=True, slots=True)
class SimulatorProcess:
    pid: int
    port: int

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_in_process(
    scenario: Path | None = None,
    *,
    time_scale: float,
    niceness: int = 0,
    startup_timeout_s: float = 60.0,
) -> Iterator[SimulatorProcess]:
    """Serve ``scenario`` (default: the bundled one) from a child process for the block."""
    port = _free_port()
    cmd = [sys.executable, "-c", "from pipeline.cli import main; main()", "simulate", "serve"]
    cmd += ["--port", str(port), "--time-scale", str(time_scale), "--quiet"]
    if scenario is not None:
        cmd += ["--scenario", str(scenario)]
    if niceness:
        cmd = ["nice", "-n", str(niceness), *cmd]
    # a fixed argv: this interpreter and our own CLI
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
    try:
        deadline = time.monotonic() + startup_timeout_s
        while True:
            try:
                socket.create_connection((HOST, port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"simulator did not start on {HOST}:{port}") from None
                time.sleep(0.05)
        yield SimulatorProcess(proc.pid, port)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
