"""Analysis across probe sites on planted histories: each site's series is generated on
its own (its own noise, gaps and phases), so a slowdown planted at one site only must come
out regional, one planted at every site provider-wide, and one site alone gives no
per-site rows at all."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from pipeline.analysis.orchestrate import run_analysis
from pipeline.analysis.site_scope import episodes, overlap_pvalue
from pipeline.cli import app
from pipeline.warehouse import Lake, Warehouse
from tests.support.daemon import every_second_probe, write_toml
from tests.support.planted import START
from tests.support.planted_sites import SITES, site_history, three_site_history
from tests.support.warehouses import on_every_backend

pytestmark = pytest.mark.slow


def _scope(warehouse: Warehouse, aid: str) -> pl.DataFrame:
    return warehouse.query(
        "SELECT provider, start_at, end_at, scope, sites, n_sites, pvalue "
        "FROM degradation_scope WHERE analysis_id = ? ORDER BY provider, start_at",
        [aid],
    )


def _day(at: object) -> float:
    return (at - START).total_seconds() / 86400  # type: ignore[operator]


@on_every_backend
def test_one_site_only_is_regional_and_every_site_is_provider_wide(
    warehouse: Warehouse,
) -> None:
    warehouse.insert_frame("probe_results", three_site_history())
    aid = run_analysis(warehouse)

    per_site = warehouse.query(
        "SELECT DISTINCT provider, probe_site FROM site_phases WHERE analysis_id = ?", [aid]
    )
    assert sorted(per_site.rows()) == sorted((p, s) for p in ("nova", "sable") for s in SITES)
    scope = _scope(warehouse, aid)
    nova = scope.filter(pl.col("provider") == "nova")
    sable = scope.filter(pl.col("provider") == "sable")

    regional = nova.filter(pl.col("scope") == "regional")
    assert regional.height >= 1, nova
    main = regional.row(0, named=True)
    assert main["sites"] == ["frankfurt"]
    assert 17 <= _day(main["start_at"]) <= 23 and 27 <= _day(main["end_at"]) <= 33, main
    assert "provider-wide" not in nova["scope"].to_list(), nova

    wide = sable.filter(pl.col("scope") == "provider-wide")
    assert wide.height == 1, sable
    row = wide.row(0, named=True)
    assert sorted(row["sites"]) == sorted(SITES) and row["n_sites"] == 3
    assert row["pvalue"] < 0.05
    assert 9 <= _day(row["start_at"]) <= 15 and 19 <= _day(row["end_at"]) <= 25, row

    pooled = warehouse.query(
        "SELECT DISTINCT provider FROM phases WHERE analysis_id = ? AND label = 'degraded'",
        [aid],
    )
    assert set(pooled["provider"]) == {"nova", "sable"}  # pooled phases still per provider


def test_one_site_writes_no_site_rows(warehouse: Warehouse) -> None:
    warehouse.insert_frame("probe_results", site_history("frankfurt", 0, True))
    aid = run_analysis(warehouse)
    for table in ("site_phases", "degradation_scope"):
        n = warehouse.query(f"SELECT count(*) AS n FROM {table} WHERE analysis_id = ?", [aid])
        assert n["n"][0] == 0, table


def _flags(*spans: tuple[int, int], n: int = 600) -> np.ndarray:
    out = np.zeros((len(spans), n), dtype=bool)
    for i, (lo, hi) in enumerate(spans):
        out[i, lo:hi] = True
    return out


def test_coinciding_stretches_are_unlikely_by_chance_and_rotations_break_them() -> None:
    together = _flags((200, 300), (205, 300), (198, 295))
    assert overlap_pvalue(together) < 0.01
    apart = _flags((50, 120), (300, 370), (480, 550))
    assert overlap_pvalue(apart) > 0.5


def test_sites_degraded_most_of_the_time_leave_the_scope_undecided() -> None:
    degraded = _flags((0, 450), (100, 560), (0, 0))
    observed = np.ones_like(degraded)
    found = episodes(["a", "b", "c"], degraded, observed)
    assert [e.scope for e in found] == ["undecided"], found
    assert found[0].sites == ("a", "b") and found[0].pvalue is not None
    assert found[0].pvalue >= 0.05  # most rotations overlap as much: chance explains it


def test_one_site_of_three_is_regional_without_a_test() -> None:
    degraded = _flags((0, 0), (100, 160), (0, 0))
    found = episodes(["a", "b", "c"], degraded, np.ones_like(degraded))
    assert [(e.scope, e.sites, e.pvalue) for e in found] == [("regional", ("b",), None)]


def test_cli_analyze_on_a_lake_config(tmp_path: Path) -> None:
    """``nerfwatch analyze --config`` on a ``ducklake`` config: the lake is analysed (it
    has no file whose folder would hold drift baselines; the config's path gives one)."""
    lake = Lake(catalog=f"sqlite:{tmp_path / 'catalog.sqlite'}", data_path=str(tmp_path / "data"))
    Warehouse(lake).insert_frame("probe_results", three_site_history())
    config = write_toml(
        tmp_path / "nerfwatch.toml",
        providers=[
            {
                "name": "nova",
                "format": "openai",
                "base_url": "http://127.0.0.1:9/v1",
                "model": "nova-model",
            }
        ],
        probes=[every_second_probe("short")],
        warehouse={
            "backend": "ducklake",
            "catalog": lake.catalog,
            "data_path": lake.data_path,
            "spool_dir": str(tmp_path / "spool"),
        },
    )
    done = CliRunner().invoke(app, ["analyze", "--config", str(config)])
    assert done.exit_code == 0, done.output
    scopes = Warehouse(lake).query("SELECT DISTINCT provider, scope FROM degradation_scope")
    assert ("sable", "provider-wide") in scopes.rows() and ("nova", "regional") in scopes.rows()


def test_the_overlap_test_holds_its_level_when_sites_are_independent() -> None:
    """Stretches placed at random, independently per site (the test's null): p < 0.05 in
    about 5 % of draws, not more (the rotation test is exact on a circle)."""
    rng = np.random.default_rng(11)
    n, trials = 400, 300
    small = 0
    for trial in range(trials):
        flags = np.zeros((3, n), dtype=bool)
        for row in flags:
            length = int(rng.integers(20, 80))
            row[(np.arange(length) + int(rng.integers(n))) % n] = True
        small += overlap_pvalue(flags, seed=trial, draws=199) < 0.05
    assert small / trials <= 0.09, small
