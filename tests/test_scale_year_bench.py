"""The year-scale benchmark's warehouse, and the BLAS thread count it suggests changing.

``benchmarks/bench_year_scale.py`` writes full-width probe rows straight into the real
schema; these check on a small size that what it writes is what the product would store
(keys unique, CHECKs met, the views read it, copies are distinct providers). The
benchmark found threaded OpenBLAS costing the analysis about 30 % of its CPU on two busy
cores; the guard shows one BLAS thread gives the very same result tables, so the
suggested default (OPENBLAS_NUM_THREADS=1) changes speed only.
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
import sys
from datetime import UTC, datetime
from pipeline.analysis.orchestrate import run_analysis
from pipeline.warehouse import Warehouse
run_analysis(Warehouse(sys.argv[1]), until=datetime(2026, 1, 20, tzinfo=UTC), seed=0)
"""


def _results(path: Path) -> dict[str, pl.DataFrame]:
    """Every analysis result table's rows, without the run's id, in a fixed order."""
    wh = Warehouse(path)
    tables = wh.query(
        "SELECT table_name FROM duckdb_columns() WHERE column_name = 'analysis_id'"
        " AND table_name <> 'analysis_runs' ORDER BY table_name"
    )["table_name"].to_list()
    return {t: wh.query(f"SELECT * EXCLUDE (analysis_id) FROM {t} ORDER BY ALL") for t in tables}


@pytest.mark.parametrize("threads", ["1"])
def test_one_blas_thread_gives_the_same_analysis(tmp_path: Path, threads: str) -> None:
    """Guard: the analysis under OpenBLAS's default thread count and under one thread
    writes identical result tables on the same seeded warehouse."""
    runs = []
    for blas in (None, threads):  # both at once: the suite runs on two cores
        path = tmp_path / f"blas-{blas or 'default'}.duckdb"
        _seeded_warehouse(path)
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if blas is not None:
            env["OPENBLAS_NUM_THREADS"] = blas
        child = subprocess.Popen(
            [sys.executable, "-c", _ANALYSE, str(path)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        runs.append((blas, path, child))
    results = []
    for blas, path, child in runs:
        try:
            _, err = child.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            pytest.fail(f"analysis with OPENBLAS_NUM_THREADS={blas} still running after 240 s")
        assert child.returncode == 0, f"analysis with OPENBLAS_NUM_THREADS={blas}: {err}"
        results.append(_results(path))
    default, single = results
    assert sum(frame.height for frame in default.values()) > 0
    assert single.keys() == default.keys()
    for table, frame in default.items():
        assert single[table].equals(frame), f"{table} differs with one BLAS thread"
