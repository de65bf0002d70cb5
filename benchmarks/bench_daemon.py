"""Daemon scheduling and flush latency: 1,000 jobs at a 1 s interval against the simulator.

Prints start lag (actual minus planned start of each scheduled run) p50/p99 and flush
latency p50/p99. Targets: p99 start lag <= 100 ms, p99 flush <= 50 ms.

Flush latency is one flush that moved rows: from the daemon sealing the spool segment to
the flush process deleting the flushed segments, i.e. handing over the paths, opening
(attaching) the DuckDB file, the insert and its commit (durable on disk), the side rows
(daemon/alert events), closing (detach: checkpoint and lock release) and the spool
bookkeeping. "held" is the part during which the file is locked, which is what a reader
waits for at most; "CPU" is what the flush process itself used.

The simulator stands in for providers on other machines, so by default it runs at the
lowest CPU priority (``--simulator-nice 0`` lets it compete with the daemon).

    uv run python benchmarks/bench_daemon.py [--seconds 25] [--jobs 1000] [--local]
        [--flush-thread] [--simulator-nice N] [--checkpoints 300 [--history 2000000]]

``--local`` swaps the HTTP probe for an in-process one, to separate the daemon's own
overhead from the load of 1,000 real requests a second on the same machine.
``--flush-thread`` flushes in a thread of the daemon (the design before the flush process).
``--checkpoints N`` profiles N quiet flushes as the table grows, showing DuckDB's
occasional expensive checkpoints; ``--history ROWS`` stores that many results first, to
show whether a flush slows as the history grows.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.config import (
    Config,
    DaemonConfig,
    ProbeConfig,
    ProviderConfig,
    WarehouseConfig,
)
from pipeline.daemon import Daemon, DaemonStats, DaemonTuning
from pipeline.daemon.flush import Flusher, FlushOutcome, FlushProcess, RowWriter, SegmentWriter
from pipeline.daemon.logs import setup_logging
from pipeline.daemon.spool import Spool
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult, planned_row
from probes.simulator import running_in_process

SIM_PROVIDERS = (("nova", "openai"), ("sable", "anthropic"), ("kestrel", "openai"))


def build_config(
    tmp: Path, base: str, jobs: int, flush_s: float = 1.0, probe_threads: int = 2
) -> Config:
    per_provider = 100
    count = max(jobs // per_provider, 1)
    providers = tuple(
        ProviderConfig(
            name=f"{sim}-{i}",
            format=fmt,
            base_url=f"{base}/{sim}/v1",
            model=f"{sim}-model",
            api_key_env=None,
            preset="simulator",
            price_input_per_mtok=1.0,
            price_output_per_mtok=4.0,
            max_concurrency=8,
        )
        for i in range(count)
        for sim, fmt in (SIM_PROVIDERS[i % len(SIM_PROVIDERS)],)
    )
    probes = tuple(
        ProbeConfig(
            f"p{j}",
            "arithmetic",
            200,
            1.0,
            None,
            tuple(p.name for p in providers),
            max_output_tokens=64,
            timeout_s=1.0,
            read_timeout_s=1.0,
        )
        for j in range(min(per_provider, jobs))
    )
    return Config(
        path=None,
        warehouse=WarehouseConfig(tmp / "bench.duckdb", tmp / "spool", "bench"),
        providers=providers,
        probes=probes,
        daemon=DaemonConfig(
            max_concurrency=64,
            flush_interval_s=flush_s,
            lock_wait_s=0.5,
            probe_threads=probe_threads,
        ),
    )


async def local_probe(provider: ProviderConfig, probe: ProbeConfig, **_: Any) -> ProbeResult:
    """A probe without network: 20 ms of waiting, a plausible row."""
    row = planned_row(provider, probe, run_id=new_run_id(), started_at=datetime.now(UTC))
    await asyncio.sleep(0.02)
    return dataclasses.replace(
        row, ttft_ms=10.0, total_ms=20.0, input_tokens=200, output_tokens=10, error_class="ok"
    )


def report(stats: DaemonStats, seconds: float, jobs: int, mode: str) -> None:
    lag = np.array(stats.start_lag_ms)
    flush = np.array(stats.flush_ms)
    print(f"jobs={jobs} interval=1s run={seconds:.0f}s scheduled={stats.scheduled} {mode}")
    print(f"rows: done={stats.done} skipped={dict(stats.skipped)} aborted={stats.aborted}")
    if lag.size:
        print(
            f"start lag ms: p50={np.percentile(lag, 50):.1f} p99={np.percentile(lag, 99):.1f}"
            f" max={lag.max():.1f} (n={lag.size}; target p99 <= 100)"
        )
    if flush.size:
        rows_per_flush = stats.flushed_rows / max(flush.size, 1)
        print(
            f"flush ms: p50={np.percentile(flush, 50):.1f} p99={np.percentile(flush, 99):.1f}"
            f" max={flush.max():.1f} (n={flush.size}, {rows_per_flush:.0f} rows/flush;"
            " target p99 <= 50)"
        )
    held = np.array(stats.flush_held_ms)
    if held.size:
        print(f"file held ms: p50={np.percentile(held, 50):.1f} p99={np.percentile(held, 99):.1f}")
    cpu = np.array(stats.flush_cpu_ms)
    if cpu.size:
        print(
            f"flush CPU ms (the writer's own): p50={np.percentile(cpu, 50):.1f}"
            f" p99={np.percentile(cpu, 99):.1f};"
            f" {int((cpu > 2 * np.median(cpu)).sum())} of {cpu.size} flushes used over twice"
            " the median (DuckDB's periodic checkpoint work)"
        )
    print(f"busy flushes={stats.busy_flushes} spool depth at exit={stats.spool_depth}")


def quiet_flushes(
    tmp: Path, rows: int, kind: str, flushes: int = 10, history: int = 0
) -> list[FlushOutcome]:
    """Flushes with nothing else running: the floor the daemon's figure sits on.
    ``history``: results already stored (copies of the first batch, earlier in time)."""
    warehouse = Warehouse(tmp / f"quiet-{kind}.duckdb", lock_wait_s=1.0, resident=kind != "connect")
    warehouse.migrate()
    spool = Spool(tmp / f"quiet-{kind}-spool")
    spool.open()
    writer: RowWriter = SegmentWriter(warehouse, spool.directory)
    if kind == "process":
        writer = FlushProcess(
            warehouse.path, lock_wait_s=1.0, spool_dir=spool.directory, reply_timeout_s=60
        )
    flusher = Flusher(spool, writer)
    out = []

    async def fill() -> None:
        probe = ProbeConfig("p", "arithmetic", 200, 1.0, None, ("x",))
        provider = ProviderConfig("x", "openai", "http://127.0.0.1:9/x/v1", "m", None)
        results = await asyncio.gather(*(local_probe(provider, probe) for _ in range(rows)))
        await asyncio.gather(*(spool.append(r.to_json()) for r in results))

    asyncio.run(fill())
    flusher.flush_once()  # warm-up: a flush process starts on its first flush
    if history:  # the batch, copied back in time, as if the daemon had stored it before
        warehouse.execute(
            "CREATE TEMP TABLE batch AS SELECT * FROM probe_results;"
            " DELETE FROM probe_results;"
            " INSERT INTO probe_results SELECT b.* REPLACE (uuidv7()::VARCHAR AS run_id,"
            " b.started_at - to_seconds(?::BIGINT - c.i) AS started_at)"
            " FROM range(?) c(i), batch b ORDER BY c.i",
            [history // rows, history // rows],
        )
    for _ in range(flushes):
        asyncio.run(fill())
        out.append(flusher.flush_once())
    flusher.close()
    spool.close()
    warehouse.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=25.0)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--local", action="store_true", help="in-process probe, no HTTP")
    parser.add_argument("--flush-interval", type=float, default=1.0, help="seconds")
    parser.add_argument(
        "--flush-max-rows", type=int, default=500, help="flush early at this many rows"
    )
    parser.add_argument(
        "--probe-threads", type=int, default=2, help="worker event loops for probes (0 = none)"
    )
    parser.add_argument(
        "--simulator-nice",
        type=int,
        default=19,
        help="CPU niceness of the simulator process (19: it stands in for remote machines)",
    )
    parser.add_argument(
        "--checkpoints",
        type=int,
        default=0,
        help="also profile this many quiet flushes of 500 rows as the table grows",
    )
    parser.add_argument(
        "--history",
        type=int,
        default=0,
        help="results stored before the --checkpoints profile starts",
    )
    parser.add_argument(
        "--flush-thread",
        action="store_true",
        help="flush in a thread of the daemon instead of its flush process (for comparison)",
    )
    args = parser.parse_args()
    setup_logging("ERROR")
    logging.getLogger("apscheduler").setLevel(logging.CRITICAL)
    tuning = DaemonTuning(
        install_signals=False,
        schedule_report=False,
        flush_max_rows=args.flush_max_rows,
        flush_process=not args.flush_thread,
    )
    with tempfile.TemporaryDirectory() as tmp:
        if args.local:
            config = build_config(
                Path(tmp), "http://127.0.0.1:9", args.jobs, args.flush_interval, args.probe_threads
            )
            daemon = Daemon(config, probe_fn=local_probe, tuning=tuning)
            stats = asyncio.run(daemon.run(stop_after_s=args.seconds))
        else:
            with running_in_process(time_scale=0.01, niceness=args.simulator_nice) as sim:
                base = sim.base_url
                config = build_config(
                    Path(tmp), base, args.jobs, args.flush_interval, args.probe_threads
                )
                stats = asyncio.run(Daemon(config, tuning=tuning).run(stop_after_s=args.seconds))
        kinds = ("process", "resident", "connect")
        quiet = {kind: quiet_flushes(Path(tmp), rows=1000, kind=kind) for kind in kinds}
        profile = quiet_flushes(Path(tmp), 500, "process", args.checkpoints, args.history)
    mode = (
        f"probe={'local' if args.local else 'simulator'} probe_threads={args.probe_threads}"
        f" flush_interval={args.flush_interval:g}s flush_max_rows={args.flush_max_rows}"
        f" flush_in={'thread' if args.flush_thread else 'process'}"
        f" simulator_nice={args.simulator_nice}"
    )
    report(stats, args.seconds, len(config.providers) * len(config.probes), mode)
    hows = {
        "process": "flush process (attaches)",
        "resident": "thread, attach to a resident instance",
        "connect": "thread, connect per flush",
    }
    for kind, outcomes in quiet.items():
        how = hows[kind]
        samples = [o.seconds * 1000 for o in outcomes]
        print(
            f"flush ms, 1000 rows, daemon idle, {how}: p50={np.percentile(samples, 50):.1f}"
            f" max={max(samples):.1f} (n={len(samples)})"
        )
    print(f"load average during run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if profile:
        checkpoint_profile(profile, args.history)


def checkpoint_profile(outcomes: list[FlushOutcome], history: int) -> None:
    """Writer CPU per flush as the table grows (500 rows each, nothing else running):
    DuckDB's checkpoint at detach now and then does much more work than usual."""
    cpu = np.array([o.cpu_s * 1000 for o in outcomes])
    median = float(np.median(cpu))
    print(
        f"checkpoint profile, {cpu.size} quiet flushes of 500 rows after {history:,} stored:"
        f" CPU ms median {median:.1f}, p99 {np.percentile(cpu, 99):.1f}"
    )
    for start in range(0, cpu.size, 50):
        block = cpu[start : start + 50]
        last = start + block.size - 1
        print(f"  flushes {start}-{last}: median {np.median(block):.1f} max {block.max():.0f}")
    spikes = [f"#{i}: {c:.0f}" for i, c in enumerate(cpu) if c > 2 * median]
    print(f"  flushes over twice the median (ms): {', '.join(spikes) or 'none'}")


if __name__ == "__main__":
    main()
