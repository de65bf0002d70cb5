"""The daemon with the real runner against the simulator over loopback HTTP.

A fast schedule for a few seconds: one row per scheduled run, caps and budget respected;
another process querying in a loop never sees a lock error; a process holding the
database does not stop probing and the spool drains once it lets go.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.config import (
    BudgetConfig,
    BudgetLimits,
    Config,
    DaemonConfig,
    ProbeConfig,
    ProviderConfig,
)
from pipeline.daemon import Daemon, DaemonStats, DaemonTuning
from pipeline.warehouse import Lake, Warehouse
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.simulator import SimulatorHandle
from tests.support.daemon import make_config
from tests.support.waiting import read_line_async, wait_until_async, within
from tests.support.warehouses import located_on_every_backend

QUIET = DaemonTuning(install_signals=False, schedule_report=False)


def _sim_config(
    tmp_path: Path, sim: SimulatorHandle, location: Path | Lake | None = None, **changes: Any
) -> Config:
    providers = tuple(
        ProviderConfig(
            name=name,
            format=fmt,
            base_url=sim.provider_url(name),
            model=f"{name}-model",
            api_key_env=None,
            preset="simulator",
            price_input_per_mtok=1.0,
            price_output_per_mtok=4.0,
            max_concurrency=2,
        )
        for name, fmt in (("nova", "openai"), ("sable", "anthropic"))
    )
    names = tuple(p.name for p in providers)
    probes = (
        ProbeConfig("short", "arithmetic", 300, 0.5, None, names, 256, timeout_s=5.0),
        ProbeConfig("json", "json_extract", 300, 0.5, None, names, 256, timeout_s=5.0),
        ProbeConfig("long", "kv_lookup", 16_000, 1.0, None, names, 64, timeout_s=5.0),
    )
    base = make_config(tmp_path, providers=providers, probes=probes, location=location)
    return replace(base, **changes)


class CountingRunner:
    """The real ``run_probe``, with an independent count of concurrent calls."""

    def __init__(self) -> None:
        self.active: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self._lock = threading.Lock()  # probes may run on worker threads

    def _bump(self, key: str, delta: int) -> None:
        with self._lock:
            self.active[key] = self.active.get(key, 0) + delta
            self.peak[key] = max(self.peak.get(key, 0), self.active[key])

    async def __call__(
        self, provider: ProviderConfig, probe: ProbeConfig, **kwargs: Any
    ) -> ProbeResult:
        keys = ("all", provider.name, f"{provider.name}:{probe.context_class}")
        for key in keys:
            self._bump(key, +1)
        try:
            return await run_probe(provider, probe, **kwargs)
        finally:
            for key in keys:
                self._bump(key, -1)


def _rows(config: Config) -> list[dict[str, Any]]:
    frame = Warehouse(config.warehouse.location).query(
        "SELECT run_id, provider, probe, run_status, skip_reason, error_class, total_ms,"
        " input_tokens, output_tokens, cost_usd FROM probe_results"
    )
    return list(frame.iter_rows(named=True))


@located_on_every_backend
@pytest.mark.parametrize("probe_threads", [0, 2])
def test_fast_schedule_rows_caps_and_budget(
    tmp_path: Path, simulator: SimulatorHandle, probe_threads: int, warehouse_location: Path | Lake
) -> None:
    # Worst case of "long" is 16,064 tokens: sable may spend at most 3 of them (plus shorts).
    budget = BudgetConfig(per_provider={"sable": BudgetLimits(daily_tokens=60_000)})
    config = _sim_config(
        tmp_path,
        simulator,
        warehouse_location,
        budget=budget,
        daemon=DaemonConfig(
            max_concurrency=3, flush_interval_s=0.2, lock_wait_s=0.2, probe_threads=probe_threads
        ),
    )
    runner = CountingRunner()

    async def main() -> DaemonStats:
        daemon = Daemon(config, probe_fn=runner, tuning=QUIET)  # type: ignore[arg-type]
        return await within(daemon.run(stop_after_s=5.0), 120, "the daemon's 5 s run")

    stats = asyncio.run(main())
    rows = _rows(config)
    assert stats.scheduled >= 20
    assert len(rows) == stats.scheduled == len({r["run_id"] for r in rows})
    done = [r for r in rows if r["run_status"] == "done"]
    assert done and all(r["error_class"] and r["total_ms"] is not None for r in done)
    assert sum(r["error_class"] == "ok" for r in done) > len(done) / 2
    assert runner.peak["all"] <= 3
    assert runner.peak["nova"] <= 2 and runner.peak["sable"] <= 2
    assert runner.peak.get("nova:long", 0) <= 1 and runner.peak.get("sable:long", 0) <= 1
    sable = [r for r in done if r["provider"] == "sable"]
    assert sum(r["input_tokens"] + r["output_tokens"] for r in sable) <= 60_000
    skipped = {r["skip_reason"] for r in rows if r["run_status"] == "skipped"}
    assert "budget" in skipped
    budget_rows = [r for r in rows if r["skip_reason"] == "budget"]
    assert {r["provider"] for r in budget_rows} == {"sable"}


_READER_LOOP = """
import json, sys, time
from pipeline.warehouse import Lake, Warehouse, WarehouseError
where = sys.argv[1]
wh = Warehouse(Lake(**json.loads(where)) if where.startswith("{") else where)
ok = errors = 0
deadline = None  # counted from the first answer: a lake's first attach loads extensions
while deadline is None or time.monotonic() < deadline:
    try:
        wh.query("SELECT provider, count(*) FROM probe_results GROUP BY provider")
        ok += 1
    except WarehouseError as exc:
        errors += 1
        print("ERROR", exc, file=sys.stderr, flush=True)
    if deadline is None:
        deadline = time.monotonic() + float(sys.argv[2])
print(ok, errors, flush=True)
"""


def _reader(location: Path | Lake, seconds: float) -> subprocess.CompletedProcess[str]:
    where = json.dumps(dataclasses.asdict(location)) if isinstance(location, Lake) else location
    return subprocess.run(
        [sys.executable, "-c", _READER_LOOP, str(where), str(seconds)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@located_on_every_backend
def test_sql_in_a_loop_from_another_process_never_sees_a_lock_error(
    tmp_path: Path, simulator: SimulatorHandle, warehouse_location: Path | Lake
) -> None:
    config = _sim_config(tmp_path, simulator, warehouse_location)
    Warehouse(config.warehouse.location).migrate()

    async def main() -> tuple[DaemonStats, subprocess.CompletedProcess[str]]:
        daemon = Daemon(config, tuning=QUIET)
        task = asyncio.create_task(daemon.run())
        await wait_until_async(lambda: daemon.stats.flushes >= 2, what="daemon flushing")
        reader = await asyncio.to_thread(_reader, config.warehouse.location, 4.0)
        daemon.stop()
        return await within(task, 120, "the daemon to stop"), reader

    stats, reader = asyncio.run(main())
    ok, errors = (int(x) for x in reader.stdout.split())
    assert reader.returncode == 0 and errors == 0, reader.stderr
    assert ok >= 10
    assert stats.flushed_rows > 0
    assert len(_rows(config)) == stats.scheduled  # nothing lost while readers came and went


@asynccontextmanager
async def _held_by_reader(path: Path) -> AsyncIterator[None]:
    """Another process holds the database open (read-only) inside this block.

    It opens the file between two flushes, as a user's reader would; one that cannot
    fails the test at once, with its stderr.
    """
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.lock_holder",
        str(path),
        "--read-only",
        "--wait",
        "60",
        cwd=Path(__file__).resolve().parents[1],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdin is not None
    try:
        line = await read_line_async(proc, 120, "'ready' from the reader")
        assert line == b"ready", f"the reader said {line!r}"
        yield
        proc.stdin.close()  # lets go
        status = await within(proc.wait(), 60, "the reader to let go and exit")
        assert status == 0, f"the reader exited with {status}"
    finally:
        if proc.returncode is None:
            proc.kill()
            await within(proc.wait(), 30, "the killed reader to exit")


def test_a_reader_holding_the_file_does_not_stop_probing_and_the_spool_drains(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    hold_s = 60.0  # a minute, as promised; production readers may hold for hours
    config = _sim_config(tmp_path, simulator)
    Warehouse(config.warehouse.path).migrate()

    async def main() -> tuple[DaemonStats, int, int]:
        daemon = Daemon(config, tuning=QUIET)
        task = asyncio.create_task(daemon.run())
        try:
            await wait_until_async(lambda: daemon.stats.flushed_rows >= 2, what="first flushes")
            async with _held_by_reader(config.warehouse.path):
                done_before = daemon.stats.done
                await asyncio.sleep(hold_s)  # the hold itself, not a wait for a condition
                probed_during_hold = daemon.stats.done - done_before
                depth_during_hold = daemon.spool.depth()
            await wait_until_async(
                lambda: daemon.spool.depth() == 0 and daemon.stats.busy_flushes > 0,
                timeout=120,
                what="spool drained",
            )
        finally:
            daemon.stop()
            stats = await within(task, 120, "the daemon to stop")
        return stats, probed_during_hold, depth_during_hold

    stats, probed, depth = asyncio.run(main())
    assert probed >= 5
    assert depth >= probed
    assert stats.busy_flushes >= 1
    assert stats.spool_depth == 0
    assert len(_rows(config)) == stats.scheduled


def test_metrics_names_follow_the_blackbox_style(
    tmp_path: Path, simulator: SimulatorHandle
) -> None:
    config = _sim_config(
        tmp_path,
        simulator,
        daemon=DaemonConfig(flush_interval_s=0.2, lock_wait_s=0.2, metrics_port=0),
    )

    async def main() -> str:
        daemon = Daemon(config, tuning=QUIET)
        task = asyncio.create_task(daemon.run())
        await wait_until_async(lambda: daemon.stats.done >= 4, what="probes done")
        async with httpx.AsyncClient() as client:
            text = (await client.get(f"http://127.0.0.1:{daemon.stats.metrics_port}/metrics")).text
        daemon.stop()
        await within(task, 120, "the daemon to stop")
        return text

    text = asyncio.run(main())
    for name in (
        "nerfwatch_probe_duration_seconds_bucket",
        "nerfwatch_probe_success",
        "nerfwatch_probes_total",
        "nerfwatch_budget_used_usd",
        "nerfwatch_schedule_lag_seconds",
        "nerfwatch_spool_depth",
    ):
        assert name in text
    assert 'phase="total"' in text and 'phase="ttft"' in text
