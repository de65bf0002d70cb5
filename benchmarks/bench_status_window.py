"""``nerfwatch status``'s per-provider read: the full scan it was against the recent
window with its fallback (``pipeline.daemon.status_latest``), each in a fresh process.

Takes a warehouse built by ``bench_year_scale.py --keep`` and copies its probe rows in
time order, as a daemon's flushes store them (the year-scale builder writes one provider
after another, so no window could skip anything there), with one provider's errors
turned into successes: a provider that never errs is looked up in the older rows every
time. Prints wall and CPU seconds of each read, after ``import pandas`` (DuckDB's Python
client imports it on the first query with parameters: a fixed cost, printed apart).

    .venv/bin/python benchmarks/bench_year_scale.py --providers 5 --days 90 --only status --keep
    .venv/bin/python benchmarks/bench_status_window.py --db /tmp/year-scale-XXXX/year.duckdb
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.warehouse import Warehouse  # noqa: E402

_READ = """
import resource, sys, time
from datetime import UTC, datetime, timedelta
t = time.perf_counter(); import pandas; imported = time.perf_counter() - t
from pipeline.daemon.state import day_start
from pipeline.daemon.status_latest import latest_by_provider
from pipeline.warehouse import Warehouse
FULL = '''SELECT provider,
  max(started_at) FILTER (WHERE run_status = 'done') AS last_probe_at,
  arg_max(error_class, started_at) FILTER (WHERE run_status = 'done') AS last_class,
  max(started_at) FILTER (WHERE run_status = 'done' AND error_class <> 'ok') AS last_error_at,
  arg_max(error_class || coalesce(': ' || error_detail, ''), started_at)
    FILTER (WHERE run_status = 'done' AND error_class <> 'ok') AS last_error,
  count(*) FILTER (WHERE run_status = 'skipped' AND started_at >= ?
    AND started_at < ?) AS today_skipped,
  count(*) FILTER (WHERE started_at > ?) AS ahead
FROM probe_results WHERE source = 'live' GROUP BY provider'''
now = datetime.now(UTC); today = day_start(now.date()); ahead = now + timedelta(minutes=1)
warehouse = Warehouse(sys.argv[1])
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
c, t = cpu(), time.perf_counter()
if sys.argv[2] == "full":
    warehouse.query(FULL, [today, today + timedelta(days=1), ahead])
else:
    latest_by_provider(warehouse, today, now, ahead, None)
print(f"{time.perf_counter() - t:.3f} {cpu() - c:.3f} {imported:.3f}")
"""


def ordered_copy(source: Path, target: Path) -> int:
    """``source``'s probe rows in time order, the first provider never erring."""
    warehouse = Warehouse(target)
    warehouse.migrate()
    warehouse.close()
    with Warehouse(target).connect() as con:
        con.execute(f"ATTACH '{source}' AS src (READ_ONLY)")
        first = con.execute("SELECT min(provider) FROM src.probe_results").fetchone()
        con.execute(
            "INSERT INTO probe_results SELECT * REPLACE ("
            "CASE WHEN provider = ? THEN 'ok' ELSE error_class END AS error_class) "
            "FROM src.probe_results ORDER BY started_at",
            [first[0] if first else None],
        )
        rows = con.execute("SELECT count(*) FROM probe_results").fetchone()
        con.execute("DETACH src")
    return int(rows[0]) if rows else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="a bench_year_scale warehouse")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.db.is_file():
        raise SystemExit(f"--db {args.db}: no such file")
    with tempfile.TemporaryDirectory(dir=args.db.parent) as folder:
        copy = Path(folder) / "ordered.duckdb"
        print(f"copied {ordered_copy(args.db, copy):,} rows in time order", flush=True)
        for _ in range(args.repeat):
            for how in ("full", "window"):
                out = subprocess.run(
                    [sys.executable, "-c", _READ, str(copy), how],
                    capture_output=True, text=True, check=True, cwd=ROOT,
                ).stdout.split()  # fmt: skip
                wall, cpu, imported = (float(x) for x in out)
                print(f"{how:7} {wall:6.3f} s wall {cpu:6.3f} s CPU  (import pandas "
                      f"{imported:.2f} s, not counted)", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
