"""Simulator throughput: synthetic-history rows/s and live requests/s.

1. History: 180 days x 3 providers x 4 probes at a 5-minute cadence (the bundled
   scenario), generated in memory and then written to a fresh warehouse file.
2. Server: the simulator in its own process with ``--time-scale 0`` (no simulated
   latency, so the figure is the server's own cost), driven for a few seconds by an
   httpx.AsyncClient with N concurrent requests, non-streamed and streamed.

    uv run python benchmarks/bench_simulator.py [--seconds 3] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import httpx

from pipeline.warehouse import Warehouse
from probes.simulator import bundled_scenario, load_scenario, running_in_process
from probes.simulator.history import generate, window
from probes.simulator.store import write_history
from probes.tasks import FAMILIES


def bench_history(days: float) -> None:
    scenario = load_scenario(bundled_scenario())
    win = window(scenario, days)
    started = time.perf_counter()
    frame = generate(scenario, win)
    elapsed = time.perf_counter() - started
    rate = frame.height / elapsed
    print(
        f"history generate: {frame.height:,} rows in {elapsed:.2f} s = {rate:,.0f} rows/s "
        f"({rate * 60 / 1e6:.1f} M rows/min)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        warehouse = Warehouse(Path(tmp) / "bench.duckdb")
        warehouse.migrate()
        summary = write_history(warehouse, scenario, days=days)
        total = summary.generate_s + summary.write_s
        print(
            f"history generate + store: {summary.inserted:,} rows in {total:.2f} s "
            f"(store {summary.write_s:.2f} s) = {summary.inserted / total:,.0f} rows/s"
        )


async def _drive(url: str, stream: bool, seconds: float, concurrency: int) -> tuple[int, int]:
    prompt = FAMILIES["arithmetic"].item(1, 200).prompt
    body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": prompt}]}
    done = failed = 0
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:

        async def worker() -> None:
            nonlocal done, failed
            while time.perf_counter() < deadline:
                response = await client.post(url, json=body)
                if response.status_code == 200:
                    done += 1
                else:
                    failed += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done, failed


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_server(seconds: float, concurrency: int) -> None:
    with running_in_process(time_scale=0) as sim:
        url = f"{sim.base_url}/nova/v1/chat/completions"
        for stream in (False, True):
            cpu = _cpu_s(sim.pid)
            started = time.perf_counter()
            done, failed = asyncio.run(_drive(url, stream, seconds, concurrency))
            elapsed = time.perf_counter() - started
            per_request_ms = (_cpu_s(sim.pid) - cpu) / max(done, 1) * 1000
            kind = "streamed" if stream else "non-streamed"
            print(
                f"server {kind}: {done / elapsed:,.0f} requests/s "
                f"({done:,} ok, {failed} failed, {concurrency} concurrent, {elapsed:.1f} s); "
                f"server CPU {per_request_ms:.2f} ms/request "
                f"(~{1000 / max(per_request_ms, 1e-3):,.0f} requests/s per core)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="load per server mode")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--days", type=float, default=180.0)
    args = parser.parse_args()
    bench_history(args.days)
    bench_server(args.seconds, args.concurrency)


if __name__ == "__main__":
    main()
