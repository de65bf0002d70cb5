"""The year-scale benchmark's warehouse, and the BLAS thread count it suggests changing.

``benchmarks/bench_year_scale.py`` writes full-width probe rows straight into the real
schema; these check on a small size that what it writes is what the product would store
(keys unique, CHECKs met, the views read it, copies are distinct providers). The
benchmark found threaded OpenBLAS costing the analysis about 30 % of its CPU on two busy
cores, so ``run_analysis`` now runs its fits on one BLAS thread; the other test shows it
does, and that the result tables are the very ones the default thread count gives.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from benchmarks.bench_year_scale import PROBES, build
from pipeline.warehouse import Warehouse
from tests.support.planted import PlantedPhase, PlantedProvider, generate, releases_frame

ROOT = Path(__file__).resolve().parent.parent
END = datetime(2026, 3, 2, tzinfo=UTC)  # pinned: the generator never reads the clock


def test_year_bench_rows_are_stored_as_the_product_stores_them(tmp_path: Path) -> None:
    path = tmp_path / "year.duckdb"
    rows = build(path, providers=3, days=2, every_min=30, end=END, fresh=2)
    wh = Warehouse(path)
    per = wh.query(
        "SELECT provider, count(*) AS n, count(DISTINCT run_id) AS ids,"
        " count(DISTINCT probe) AS probes, min(started_at) AS lo, max(started_at) AS hi"
        " FROM probe_results GROUP BY provider ORDER BY provider"
    )
    assert per["provider"].to_list() == ["prov00", "prov01", "prov02"]
    assert int(per["n"].sum()) == rows
    assert per["ids"].to_list() == per["n"].to_list()
    assert set(per["probes"].to_list()) == {len(PROBES)}
    # prov02 is a renamed copy of prov00: as many rows, none of its run ids
    assert per["n"][2] == per["n"][0]
    shared = wh.query(
        "SELECT count(*) AS n FROM probe_results a JOIN probe_results b USING (run_id)"
        " WHERE a.provider <> b.provider"
    )
    assert shared["n"][0] == 0
    assert all(hi < END for hi in per["hi"].to_list())
    hourly = wh.query("SELECT count(*) AS n, sum(n) AS probes FROM hourly")
    assert hourly["probes"][0] == rows


def _seeded_warehouse(path: Path) -> None:
    providers = [
        PlantedProvider("alpha", "VendorA", [PlantedPhase(8, 12, 1.6, 1.6, errors=3)], [8]),
        PlantedProvider("beta", "VendorB"),
    ]
    wh = Warehouse(path)
    wh.migrate()
    wh.insert_frame("probe_results", generate(providers, 15, cadence_min=30.0, seed=3))
    wh.insert_frame("releases", releases_frame(providers))


_ANALYSE = """
import contextlib, sys
from datetime import UTC, datetime
from threadpoolctl import threadpool_info
from pipeline.analysis import orchestrate
from pipeline.warehouse import Warehouse
if sys.argv[2] == "unlimited":  # the code before the limit: OpenBLAS's own thread count
    orchestrate.threadpool_limits = lambda **_: contextlib.nullcontext()
real_compute = orchestrate.compute
def watched_compute(*args, **kwargs):  # the real compute, with the BLAS threads it ran on
    blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
    print("blas_threads", max(blas, default=0))
    return real_compute(*args, **kwargs)
orchestrate.compute = watched_compute
orchestrate.run_analysis(Warehouse(sys.argv[1]), until=datetime(2026, 1, 20, tzinfo=UTC), seed=0)
"""


def _results(path: Path) -> dict[str, pl.DataFrame]:
    """Every analysis result table's rows, without the run's id, in a fixed order."""
    wh = Warehouse(path)
    tables = wh.query(
        "SELECT table_name FROM duckdb_columns() WHERE column_name = 'analysis_id'"
        " AND table_name <> 'analysis_runs' ORDER BY table_name"
    )["table_name"].to_list()
    return {t: wh.query(f"SELECT * EXCLUDE (analysis_id) FROM {t} ORDER BY ALL") for t in tables}


def test_the_analysis_runs_on_one_blas_thread_with_the_same_results(tmp_path: Path) -> None:
    """``run_analysis`` limits BLAS to one thread around ``compute`` (on the old code it ran
    on OpenBLAS's default, one per core), and the result tables are identical to an
    analysis of the same seeded warehouse on the default thread count."""
    runs = []
    for mode in ("limited", "unlimited"):  # both at once: the suite runs on two cores
        path = tmp_path / f"{mode}.duckdb"
        _seeded_warehouse(path)
        env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
        child = subprocess.Popen(
            [sys.executable, "-c", _ANALYSE, str(path), mode],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        runs.append((mode, path, child))
    results, threads = [], []
    for mode, path, child in runs:
        try:
            out, err = child.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            pytest.fail(f"the {mode} analysis still running after 240 s")
        assert child.returncode == 0, f"the {mode} analysis: {err}"
        threads.append(int(out.split("blas_threads")[1].split()[0]))
        results.append(_results(path))
    assert threads[0] == 1, f"compute ran on {threads[0]} BLAS threads"
    limited, unlimited = results
    assert sum(frame.height for frame in limited.values()) > 0
    assert unlimited.keys() == limited.keys()
    for table, frame in limited.items():
        assert unlimited[table].equals(frame), f"{table} differs with one BLAS thread"
