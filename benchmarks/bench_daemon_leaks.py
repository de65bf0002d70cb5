"""A long daemon run at a fast schedule: does memory or the count of open files grow?

A real ``Daemon`` (flush process, probe worker threads, the real runner) probes the
simulator, served by a child process over loopback, until it has made ``--probes``
probes. Every ``--every`` probes it records its own resident set (VmRSS), its open file
descriptors (/proc/self/fd), its threads, and the flush process's resident set, and
prints the curve. A curve that keeps rising after the first samples (imports, caches,
connection pools and DuckDB's buffers filling) is a leak; ``--trace`` adds tracemalloc
snapshots and prints the allocation sites that grew most from the second sample to the
last, which is where to look. Figures depend on the machine; the shape is the result.

Measured 2026-11-28 (2 CPUs shared, load average 15-30, simulator at time scale 0.01):
30 jobs every 0.5 s, 6,018 probes in 224 s (overruns skipped 6,696 runs: the machine was
saturated): daemon RSS 218.2 MiB after the first probe, 221.5 at 500, 222.4 at 3,000,
223.2 at 6,000 (+0.24 MiB per 1,000 probes in the second half); open fds 39-48 with no
trend (pooled connections come and go); 18 threads throughout; the flush process 266 MiB
at start, 373-409 from 500 probes on, no trend (DuckDB's buffers). With --trace (15 jobs,
3,013 probes) the only growing site in the daemon's heap is the start-lag samples
(bridge.py, ~32 bytes a run), a deque capped at 200,000 (about 6 MB): growth that levels
off by design. A longer run at load 7 (30 jobs, 15,002 probes in 254 s, no run skipped):
RSS 211.8, 213.1 (1,500), 214.7 (6,000), 215.3 (10,500), 215.9 MiB (15,000), the slope
falling (+0.36, +0.13, +0.13 MiB per 1,000 over those spans); fds 27-35 and 17 threads
without trend; the flush process 393-425 MiB, noisy, as its table grew by 15,000 rows. No
leak found at this length; a slower one would need a longer run.

glibc malloc arenas (measured 2026-11-29, 2 CPUs, load 30-35, 30 jobs every 0.5 s, 4,000
probes each, one run each): with MALLOC_ARENA_MAX unset the daemon's RSS went 260.9 ->
268.2 MiB (+0.83 MiB per 1,000 probes in the second half), with MALLOC_ARENA_MAX=2
253.5 -> 256.4 MiB (+0.43); 17 and 16 threads, the flush process 470-490 MiB either way.
About 12 MiB (4 %) less, and a flatter curve. glibc makes an arena per thread that
allocates, up to 8 per core, so the daemon's ~17 threads bound the effect whatever the
cores. Decision: no mallopt in the daemon (platform-specific code for 4 %); a service
that must be lean sets MALLOC_ARENA_MAX=2 in its environment, which also reaches the
flush process (mallopt would not). To repeat:

    MALLOC_ARENA_MAX=2 uv run python benchmarks/bench_daemon_leaks.py --probes 4000

    uv run python benchmarks/bench_daemon_leaks.py [--probes 5000] [--every 500]
        [--jobs 30] [--interval 0.5] [--probe-threads 2] [--trace]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.config import (
    Config,
    DaemonConfig,
    ProbeConfig,
    ProviderConfig,
    WarehouseConfig,
)
from pipeline.daemon import Daemon, DaemonTuning
from pipeline.daemon.logs import setup_logging
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.simulator import running_in_process
from probes.sizing import CharsPerToken

SIM_PROVIDERS = (("nova", "openai"), ("sable", "anthropic"), ("kestrel", "openai"))


def _kib(pid: int | str, key: str = "VmRSS") -> int:
    """A ``/proc/<pid>/status`` figure in KiB (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def _children() -> list[int]:
    """This process's child processes (the flush process), from /proc."""
    kids: list[int] = []
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/children", encoding="ascii") as f:
            kids += [int(p) for p in f.read().split()]
    return kids


@dataclass(slots=True)
class Sample:
    probes: int
    seconds: float
    rss_kib: int
    fds: int
    threads: int
    children_rss_kib: int
    traced_kib: int  # Python's own heap as tracemalloc counts it (0 without --trace)


@dataclass(slots=True)
class Recorder:
    """Counts probes; every ``every`` of them, records a sample (and a snapshot)."""

    every: int
    target: int
    trace: bool
    started: float = field(default_factory=time.monotonic)
    count: int = 0
    samples: list[Sample] = field(default_factory=list)
    snapshots: list[tracemalloc.Snapshot] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def note(self) -> None:
        self.count += 1
        if self.count % self.every == 0 or self.count == 1:
            self.samples.append(
                Sample(
                    self.count,
                    time.monotonic() - self.started,
                    _kib("self"),
                    len(os.listdir("/proc/self/fd")),
                    _kib("self", "Threads"),
                    sum(_kib(pid) for pid in _children()),
                    tracemalloc.get_traced_memory()[0] // 1024,
                )
            )
            if self.trace:
                self.snapshots.append(tracemalloc.take_snapshot())
        if self.count >= self.target:
            self.done.set()


def _config(tmp: Path, base: str, jobs: int, interval: float, threads: int) -> Config:
    providers = tuple(
        ProviderConfig(
            name=sim,
            format=fmt,
            base_url=f"{base}/{sim}/v1",
            model=f"{sim}-model",
            api_key_env=None,
            preset="simulator",
            price_input_per_mtok=1.0,
            price_output_per_mtok=4.0,
            max_concurrency=8,
        )
        for sim, fmt in SIM_PROVIDERS
    )
    per_provider = max(jobs // len(providers), 1)
    probes = tuple(
        ProbeConfig(
            f"p{j}",
            "arithmetic",
            200,
            interval,
            None,
            tuple(p.name for p in providers),
            max_output_tokens=64,
            timeout_s=5.0,
            read_timeout_s=5.0,
        )
        for j in range(per_provider)
    )
    return Config(
        path=None,
        warehouse=WarehouseConfig(tmp / "leaks.duckdb", tmp / "spool", "bench"),
        providers=providers,
        probes=probes,
        daemon=DaemonConfig(max_concurrency=64, flush_interval_s=1.0, probe_threads=threads),
    )


async def _run(config: Config, recorder: Recorder, deadline_s: float) -> Any:
    async def counted(
        provider: ProviderConfig,
        probe: ProbeConfig,
        *,
        estimator: CharsPerToken | None = None,
        **kwargs: Any,
    ) -> ProbeResult:
        try:
            return await run_probe(provider, probe, estimator=estimator, **kwargs)
        finally:
            recorder.note()

    tuning = DaemonTuning(install_signals=False, schedule_report=False)
    daemon = Daemon(config, probe_fn=counted, tuning=tuning)
    stopped = asyncio.Event()
    task = asyncio.create_task(daemon.run(stop_event=stopped))
    try:
        await asyncio.wait_for(recorder.done.wait(), timeout=deadline_s)
    except TimeoutError:
        print(f"deadline: only {recorder.count} probes in {deadline_s:.0f} s")
    stopped.set()
    return await asyncio.wait_for(task, timeout=120)


def _print_curve(samples: list[Sample]) -> None:
    print(" probes  seconds  rss_MiB  fds  threads  flush_proc_MiB  traced_MiB")
    for s in samples:
        print(
            f"{s.probes:7d} {s.seconds:8.1f} {s.rss_kib / 1024:8.1f} {s.fds:4d} {s.threads:8d}"
            f" {s.children_rss_kib / 1024:15.1f} {s.traced_kib / 1024:11.1f}"
        )
    if len(samples) >= 4:
        half = samples[len(samples) // 2]
        last = samples[-1]
        per_k = 1000 / max(last.probes - half.probes, 1)
        print(
            f"second half: rss {(last.rss_kib - half.rss_kib) / 1024 * per_k:+.2f} MiB per"
            f" 1000 probes, fds {(last.fds - half.fds) * per_k:+.1f} per 1000 probes,"
            f" flush process {(last.children_rss_kib - half.children_rss_kib) / 1024 * per_k:+.2f}"
            " MiB per 1000 probes"
        )


def _print_growth(snapshots: list[tracemalloc.Snapshot]) -> None:
    if len(snapshots) < 3:
        return
    print("tracemalloc (with --trace the RSS above includes the snapshots themselves;")
    print("traced_MiB is the daemon's heap): top growth from the second sample to the last")
    for stat in snapshots[-1].compare_to(snapshots[1], "traceback")[:12]:
        print(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks")
        for line in stat.traceback.format(most_recent_first=True):
            print(f"      {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=int, default=5000)
    parser.add_argument("--every", type=int, default=500, help="probes between samples")
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between runs")
    parser.add_argument("--probe-threads", type=int, default=2)
    parser.add_argument("--trace", action="store_true", help="tracemalloc snapshots")
    parser.add_argument("--deadline", type=float, default=1800.0, help="seconds at most")
    args = parser.parse_args()
    setup_logging("ERROR")
    logging.getLogger("apscheduler").setLevel(logging.CRITICAL)
    if args.trace:
        tracemalloc.start(3)
    with tempfile.TemporaryDirectory() as tmp, running_in_process(time_scale=0.01) as sim:
        config = _config(Path(tmp), sim.base_url, args.jobs, args.interval, args.probe_threads)
        recorder = Recorder(args.every, args.probes, args.trace)
        stats = asyncio.run(_run(config, recorder, args.deadline))
    jobs = len(config.providers) * len(config.probes)
    print(
        f"jobs={jobs} every {args.interval:g}s probe_threads={args.probe_threads}"
        f" probes={recorder.count} done={stats.done} skipped={dict(stats.skipped)}"
        f" trace={'on' if args.trace else 'off'}"
    )
    _print_curve(recorder.samples)
    _print_growth(recorder.snapshots)


if __name__ == "__main__":
    main()
