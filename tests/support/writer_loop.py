"""Write probe rows in short transactions, as the daemon's flushes do.

    python -m tests.support.writer_loop PATH --batches N [--pause-after K]
    python -m tests.support.writer_loop CATALOG --lake-data DATA_PATH --site S --batches N

Prints ``started`` after the first batch and ``done`` at the end. With ``--pause-after``
it prints ``paused`` after K batches and waits for a line on stdin: a reader can then
read mid-run without racing the writer. With ``--lake-data`` the first argument is a
DuckLake catalog (``sqlite:...`` or ``postgres:...``) and the rows carry ``--site``.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from pipeline.warehouse import Lake, Warehouse
from probes.ids import new_run_id
from probes.result import ProbeResult


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--batches", type=int, default=50)
    parser.add_argument("--pause-after", type=int, default=0)
    parser.add_argument("--lake-data", default=None)
    parser.add_argument("--site", default=None)
    args = parser.parse_args()
    location = Lake(args.path, args.lake_data) if args.lake_data else args.path
    warehouse = Warehouse(location, lock_wait_s=30)
    for batch in range(args.batches):
        rows = [
            ProbeResult(
                run_id=new_run_id(),
                started_at=datetime.now(UTC),
                provider="alpha",
                model="m",
                probe="short",
                task_family="arithmetic",
                error_class="ok",
                ttft_ms=100.0,
                probe_site=args.site,
            ).as_row()
            for _ in range(5)
        ]
        warehouse.insert_rows("probe_results", rows, key="run_id")
        if batch == 0:
            print("started", flush=True)
        if batch + 1 == args.pause_after:
            print("paused", flush=True)
            sys.stdin.readline()
    print("done", flush=True)


if __name__ == "__main__":
    main()
