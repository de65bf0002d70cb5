"""Helpers for daemon tests: config builders, a small local probe function, waiting."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import httpx

from pipeline.config import (
    AlertsConfig,
    BudgetConfig,
    Config,
    DaemonConfig,
    ProbeConfig,
    ProviderConfig,
    WarehouseConfig,
)
from pipeline.warehouse import Lake
from probes.ids import new_run_id
from probes.result import ProbeResult, planned_row
from probes.simulator import SimulatorHandle
from tests.support.waiting import wait_until, wait_until_async

__all__ = [
    "LocalProbe",
    "WebhookReceiver",
    "every_second_probe",
    "make_config",
    "nerfwatch_run",
    "simulator_provider",
    "site_on_lake",
    "wait_until",
    "wait_until_async",
]

_MAIN = "from pipeline.cli import main; main()"


def make_config(
    tmp: Path,
    *,
    providers: tuple[ProviderConfig, ...] | None = None,
    probes: tuple[ProbeConfig, ...] | None = None,
    every_s: float = 0.5,
    daemon: DaemonConfig | None = None,
    budget: BudgetConfig | None = None,
    alerts: AlertsConfig | None = None,
    base_url: str = "http://127.0.0.1:9/sim/v1",
    location: Path | Lake | None = None,
) -> Config:
    """A config with two providers and one short probe each, on a fast interval.

    ``location``: the warehouse (the ``warehouse_location`` fixture); default a DuckDB file
    in ``tmp``. The spool is always in ``tmp``."""
    if providers is None:
        providers = tuple(
            ProviderConfig(
                name=name,
                format="openai",
                base_url=base_url.replace("/sim/", f"/{name}/"),
                model=f"{name}-model",
                api_key_env=None,
                price_input_per_mtok=1.0,
                price_output_per_mtok=4.0,
                max_concurrency=2,
            )
            for name in ("alpha", "beta")
        )
    names = tuple(p.name for p in providers)
    if probes is None:
        probes = (
            ProbeConfig(
                name="short",
                task="arithmetic",
                context_tokens=200,
                every_s=every_s,
                cron=None,
                providers=names,
                max_output_tokens=32,
                timeout_s=10.0,
            ),
        )
    return Config(
        path=None,
        warehouse=WarehouseConfig(
            path=location if isinstance(location, Path) else tmp / "nerfwatch.duckdb",
            spool_dir=tmp / "spool",
            probe_site="test",
            lake=location if isinstance(location, Lake) else None,
        ),
        providers=providers,
        probes=probes,
        budget=budget or BudgetConfig(),
        alerts=alerts or AlertsConfig(),
        daemon=daemon or DaemonConfig(flush_interval_s=0.2, lock_wait_s=0.2, shutdown_grace_s=5),
    )


@dataclass
class LocalProbe:
    """A probe function that answers after ``latency_s`` without touching the network.

    For scheduler, cap and budget unit tests; end-to-end tests use the real runner.
    """

    latency_s: float = 0.01
    input_tokens: int = 200
    output_tokens: int = 20
    error_class: str = "ok"
    calls: int = 0
    started: asyncio.Event = field(default_factory=asyncio.Event)
    active: int = 0
    peak: int = 0
    active_by: dict[str, int] = field(default_factory=dict)
    peak_by: dict[str, int] = field(default_factory=dict)
    gate: asyncio.Event | None = None  # when set, probes wait for it (mid-probe states)

    async def __call__(
        self,
        provider: ProviderConfig,
        probe: ProbeConfig,
        *,
        client: httpx.AsyncClient,
        seed: int | None = None,
        source: str = "live",
        probe_site: str | None = None,
    ) -> ProbeResult:
        self.calls += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        group = f"{provider.name}:{probe.context_class}"
        for name in (provider.name, group):
            self.active_by[name] = self.active_by.get(name, 0) + 1
            self.peak_by[name] = max(self.peak_by.get(name, 0), self.active_by[name])
        self.started.set()
        started = datetime.now(UTC)
        t0 = time.perf_counter()
        try:
            if self.gate is not None:
                await self.gate.wait()
            await asyncio.sleep(self.latency_s)
        finally:
            self.active -= 1
            for name in (provider.name, group):
                self.active_by[name] -= 1
        total = (time.perf_counter() - t0) * 1000
        row = planned_row(
            provider,
            probe,
            run_id=new_run_id(),
            started_at=started,
            source=source,
            probe_site=probe_site,
        )
        return replace(
            row,
            context_class=probe.context_class,
            ttft_ms=total / 2,
            total_ms=total,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            error_class=self.error_class,
        )


def with_daemon(config: Config, **changes: object) -> Config:
    return replace(config, daemon=replace(config.daemon, **changes))  # type: ignore[arg-type]


class WebhookReceiver:
    """A real HTTP server on loopback that records every JSON body posted to it."""

    def __init__(self) -> None:
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        received: list[tuple[str, dict[str, object]]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                received.append((self.path, json.loads(self.rfile.read(length))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(60)
        assert not self._thread.is_alive(), "the webhook receiver did not stop within 60s"


def free_port() -> int:
    """A loopback port that was free a moment ago (for the metrics endpoint)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_toml(
    path: Path,
    providers: list[dict[str, object]],
    probes: list[dict[str, object]],
    daemon: dict[str, object] | None = None,
    warehouse: dict[str, object] | None = None,
) -> Path:
    """A nerfwatch.toml for subprocess tests (values: str, int, float, bool, dict of str).

    ``warehouse`` replaces the default section (a file and a spool beside ``path``,
    site "test"), e.g. to write one site's daemon into a shared lake.
    """

    def value(v: object) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f'"{k}" = {value(x)}' for k, x in v.items()) + "}"
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'

    if warehouse is None:
        warehouse = {
            "path": str(path.parent / "nerfwatch.duckdb"),
            "spool_dir": str(path.parent / "spool"),
            "probe_site": "test",
        }
    lines = ["[warehouse]", *(f"{k} = {value(v)}" for k, v in warehouse.items()), ""]
    for table, items in (("providers", providers), ("probes", probes)):
        for item in items:
            lines.append(f"[[{table}]]")
            lines.extend(f"{k} = {value(v)}" for k, v in item.items())
            lines.append("")
    if daemon:
        lines.append("[daemon]")
        lines.extend(f"{k} = {value(v)}" for k, v in daemon.items())
    lines += ["", "[report]", "enabled = false"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def scrape(port: int, name: str) -> float | None:
    """Sum of a metric's samples on a daemon's /metrics endpoint (None if unreachable).

    ``name`` may end inside the label set (``'x_total{probe="a"'``) to select samples.
    """
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2.0).text
    except httpx.HTTPError:
        return None
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and ("{" in name or line[len(name)] in " {"):
            total += float(line.rsplit(" ", 1)[1])
    return total


@contextmanager
def nerfwatch_run(
    config: Path, env: dict[str, str] | None = None, output: Path | None = None
) -> Iterator[subprocess.Popen[str]]:
    """``nerfwatch run`` as a real process in its own process group (so a test can kill the
    whole service); killed by its PID at the end if it is still running.

    ``output``: a file that collects the daemon's stdout and stderr (appended, so restarts
    add to it). Use it for long runs: an unread pipe fills at 64 kB and then blocks the
    daemon's next log line. Without it both are pipes, for ``communicate()``."""
    with ExitStack() as files:
        sink = files.enter_context(output.open("a")) if output is not None else subprocess.PIPE
        proc = subprocess.Popen(
            [sys.executable, "-c", _MAIN, "run", "--config", str(config)],
            stdout=sink,
            stderr=subprocess.STDOUT if output is not None else subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
            env=env,
            start_new_session=True,
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)


def every_second_probe(name: str) -> dict[str, object]:
    """A short arithmetic probe every second (a [[probes]] table)."""
    return {
        "name": name,
        "task": "arithmetic",
        "context": 300,
        "every": "1s",
        "timeout": "1s",
        "read_timeout": "1s",
        "max_output_tokens": 256,
    }


def simulator_provider(sim: SimulatorHandle, name: str, **extra: object) -> dict[str, object]:
    fmt = "openai" if name in ("nova", "kestrel") else "anthropic"
    return {
        "name": name,
        "format": fmt,
        "base_url": sim.provider_url(name),
        "model": f"{name}-model",
        "preset": "simulator",
        "price_input_per_mtok": 1.0,
        "price_output_per_mtok": 4.0,
        **extra,
    }


def site_on_lake(lake: Lake, folder: Path, site: str) -> dict[str, object]:
    """The ``[warehouse]`` section of one probe site writing into ``lake``, with its own
    spool in ``folder``."""
    return {
        "backend": "ducklake",
        "catalog": lake.catalog,
        "data_path": lake.data_path,
        "spool_dir": str(folder / "spool"),
        "probe_site": site,
    }
