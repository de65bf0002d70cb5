"""Analysis speed and memory: one year of 5-minute probes for 20 series (~2.1M rows).

20 series = 10 providers x (short, long) context, written by the small planted-phase
generator (tests/support/planted.py) into a fresh DuckDB file. The analysis runs in a child
process so its peak resident memory (VmHWM, Linux) is its own; the time printed is
``run_analysis`` end to end (SQL rollup, seasonality, change points, phases, warning signs,
release cycles, writing every result table). Target: <= 20 s.

Run: uv run python benchmarks/bench_analysis_perf.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.warehouse import Warehouse  # noqa: E402
from tests.support.planted import (  # noqa: E402
    PlantedPhase,
    PlantedProvider,
    generate,
    releases_frame,
)

CHILD = """
import json, sys, time
from pipeline.analysis.orchestrate import run_analysis
from pipeline.warehouse import Warehouse
t0 = time.perf_counter()
wh = Warehouse(sys.argv[1])
aid = run_analysis(wh)
elapsed = time.perf_counter() - t0
n = wh.query("SELECT count(*) AS n FROM phases WHERE analysis_id = ?", [aid])["n"][0]
status = open("/proc/self/status").read()
hwm = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM:"))
print(json.dumps({"seconds": elapsed, "phases": int(n), "peak_kb": hwm}))
"""


def providers() -> list[PlantedProvider]:
    out = []
    for i in range(10):
        phases = [PlantedPhase(100 + 20 * (i % 3), 160 + 20 * (i % 3), 1.3, 1.8, errors=3)]
        out.append(
            PlantedProvider(f"prov{i}", f"Vendor{i % 4}", phases, releases=[160 + 20 * (i % 3)])
        )
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "perf.duckdb"
        t0 = time.perf_counter()
        rows = generate(providers(), 365, cadence_min=5.0, seed=1)
        wh = Warehouse(path)
        wh.migrate()
        wh.insert_frame("probe_results", rows)
        wh.insert_frame("releases", releases_frame(providers()))
        took = time.perf_counter() - t0
        print(f"generated and stored {rows.height:,} probe rows in {took:.1f} s")
        del rows
        t1 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - t1
        result = json.loads(out.stdout.strip().splitlines()[-1])
        # VmHWM of the child itself (ru_maxrss would include this parent's size at fork).
        peak_mb = result["peak_kb"] / 1024
        print(
            f"run_analysis: {result['seconds']:.1f} s for 20 series x 1 year (target <= 20 s); "
            f"child process wall {wall:.1f} s incl. imports; peak RSS {peak_mb:.0f} MB; "
            f"{result['phases']} phases written"
        )


if __name__ == "__main__":
    main()
