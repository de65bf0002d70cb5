"""Client timing overhead: client-side TTFT minus the simulator's own first-token write time.

Both stamps are ``time.perf_counter_ns`` (CLOCK_MONOTONIC, shared by processes on one Linux
machine). The simulator runs in its own process, so its work does not share our event loop;
what remains is loopback, httpx, SSE parsing and our event-loop latency. Targets: median
≤ 1 ms and p99 ≤ 5 ms at 100 concurrent probes.

    uv run python benchmarks/bench_client_overhead.py [--levels 1,100,1000] [--transport probe]

``--transport probe`` builds the clients with ``probes.adapters.transport.probe_client``
(connections that count their bytes) instead of httpx's own transport, to compare the two.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

import probes.simulator
from probes.adapters import ADAPTERS, preset_for
from probes.adapters.http import execute
from probes.adapters.state import StreamState
from probes.adapters.transport import probe_client
from probes.simulator import running_in_process
from probes.tasks import FAMILIES

FAILURES: Counter[str] = Counter()


def _scenario_without_queueing(folder: Path) -> Path:
    """The bundled scenario minus its load model: at 1,000 in flight the simulated queue
    would push TTFT past any deadline, and this benchmark measures the client, not that."""
    bundled = Path(probes.simulator.__file__).parent / "scenarios" / "training_cycle.toml"
    text = re.sub(r"(?m)^queue_ms_per_request = .*$", "queue_ms_per_request = 0.0",
                  bundled.read_text())  # fmt: skip
    path = folder / "bench.toml"
    path.write_text(text)
    return path


async def _one(client: httpx.AsyncClient, base: str, seed: int) -> float | None:
    """Overhead of one streamed probe in ms, or None when the stream carried no stamp."""
    adapter = ADAPTERS["openai"]
    preset = preset_for("simulator", "openai")
    item = FAMILIES["arithmetic"].item(seed, 100)
    request = adapter.build(
        base_url=base, model="m", prompt=item.prompt, max_tokens=64, temperature=0.0,
        stream=True, preset=preset, api_key=None, extra_headers={},
    )  # fmt: skip
    state = StreamState()
    ex = await execute(client, request, state, adapter, deadline_s=60.0, read_timeout_s=30.0)
    if state.server_first_token_ns is None or state.timeline.first_token is None:
        FAILURES[ex.failure or f"http {ex.status}"] += 1
        return None
    return (state.timeline.first_token - state.server_first_token_ns) / 1e6


def _client(limits: httpx.Limits, transport: str) -> httpx.AsyncClient:
    if transport == "probe":
        return probe_client(limits, timeout=60.0)
    return httpx.AsyncClient(limits=limits, timeout=60.0)


async def _level(
    base: str, concurrency: int, total: int, shard: int, burst: bool, transport: str
) -> list[float]:
    """``total`` probes keeping ``concurrency`` in flight, over clients of ``shard``
    connections each (httpcore scans its whole pool on every request, so one pool of 1,000
    connections costs far more per request than many small ones; the daemon holds one
    client per provider). Starts are spread over a second, as scheduled probes are, unless
    ``burst``: then every slot starts at once and all first tokens land together."""
    n_clients = max(1, -(-concurrency // shard))
    size = min(shard, concurrency)
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    clients = [_client(limits, transport) for _ in range(n_clients)]
    out: list[float] = []
    jobs = iter(range(total))
    rng = random.Random(1)

    async def slot(index: int) -> None:
        if not burst:
            await asyncio.sleep(rng.random())
        for job in jobs:
            value = await _one(clients[index % n_clients], base, job)
            if value is not None:
                out.append(value)

    try:
        await asyncio.gather(*(_one(c, base, i) for i, c in enumerate(clients)))  # warm up
        await asyncio.gather(*(slot(i) for i in range(concurrency)))
    finally:
        for client in clients:
            await client.aclose()
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--levels", default="1,100,1000", help="concurrency levels")
    parser.add_argument("--shard", type=int, default=10, help="connections per client")
    parser.add_argument("--burst", action="store_true", help="start every slot at once")
    parser.add_argument("--transport", choices=("httpx", "probe"), default="httpx",
                        help="httpx's own transport, or ProbeTransport")  # fmt: skip
    args = parser.parse_args()
    folder = tempfile.TemporaryDirectory()
    scenario = _scenario_without_queueing(Path(folder.name))
    with running_in_process(scenario, time_scale=1.0) as sim:
        base = f"{sim.base_url}/nova/v1"
        mode = "burst starts" if args.burst else "starts spread over 1 s"
        print(f"{mode}; clients of {args.shard} connections over the {args.transport} "
              "transport; simulator in its own process")  # fmt: skip
        print(f"{'concurrent':>10} {'n':>6} {'median ms':>10} {'p99 ms':>8} {'max ms':>8} "
              f"{'client cpu ms/probe':>20}")  # fmt: skip
        for level in (int(x) for x in args.levels.split(",")):
            FAILURES.clear()
            cpu = time.process_time()
            values = asyncio.run(
                _level(base, level, max(200, 2 * level), args.shard, args.burst, args.transport)
            )
            cpu_ms = (time.process_time() - cpu) * 1000 / len(values)
            print(
                f"{level:>10} {len(values):>6} {statistics.median(values):>10.3f} "
                f"{_pct(values, 0.99):>8.3f} {max(values):>8.3f} {cpu_ms:>20.2f}"
            )
            if FAILURES:
                print(f"{'':>10} not measured (no first token): {dict(FAILURES)}")
    folder.cleanup()


if __name__ == "__main__":
    main()
