"""Phases reuse the change points ``metric_rows.change_rows`` found rather than search the
same series again, and only where the array searched is the one phases read."""

from __future__ import annotations

import numpy as np
import polars as pl
from numpy.typing import NDArray

from pipeline.analysis.metric_rows import change_rows, log_or_nan
from pipeline.analysis.phase_rows import PHASE_METRICS, SeriesKey, _provider_series, phase_rows
from pipeline.analysis.rows import ResultRows
from pipeline.analysis.seasonality import decompose
from pipeline.analysis.series import hour_grid, load_hourly
from pipeline.warehouse import Warehouse
from tests.support.planted import PlantedPhase, PlantedProvider, generate

Searched = tuple[dict[SeriesKey, NDArray[np.float64]], dict[SeriesKey, list[int]]]


def _grid(warehouse: Warehouse) -> pl.DataFrame:
    """Two providers, 30 days; "late" has no long-context probes for its first two days, so
    its long series starts after the provider's grid does."""
    slow = PlantedPhase(15, 999, short=1.3, long=1.5, errors=3.0)
    rows = generate(
        [PlantedProvider("steady", "V", [slow]), PlantedProvider("late", "W", [slow])],
        30, cadence_min=15.0, seed=3,
    )  # fmt: skip
    early_long = (pl.col("provider") == "late") & (pl.col("context_class") == "long")
    first = rows["started_at"].min()
    rows = rows.filter(~(early_long & (pl.col("started_at") < first + pl.duration(days=2))))
    warehouse.insert_frame("probe_results", rows)
    return hour_grid(load_hourly(warehouse))


def _searched(grid: pl.DataFrame) -> Searched:
    """Deseasonalized phase series and their offline breaks, as ``compute`` builds them."""
    adjusted: dict[SeriesKey, NDArray[np.float64]] = {}
    searched: dict[SeriesKey, list[int]] = {}
    for (p, m, ctx), part in grid.partition_by(
        "provider", "model", "context_class", as_dict=True, maintain_order=True
    ).items():
        hours = part["hour"].dt.replace_time_zone(None).to_numpy().astype("datetime64[h]")
        for metric in PHASE_METRICS:
            logv = log_or_nan(part[metric].cast(pl.Float64).fill_null(np.nan).to_numpy())
            adjusted[(p, m, ctx, metric)] = decompose(hours, logv).adjusted
            key = (p, m, ctx, metric)
            searched[key] = change_rows(ResultRows({}), key[:3], metric, hours, adjusted[key], 0)
    return adjusted, searched


def test_reused_breaks_leave_every_phase_row_as_it_was(warehouse: Warehouse) -> None:
    """Phase and degraded-day rows with the breaks handed over equal those of a fresh
    search; the long series that starts late is searched again (its breaks were found on a
    shorter array, at other indices), the others are reused."""
    grid = _grid(warehouse)
    adjusted, searched = _searched(grid)
    fresh, reused = ResultRows({}), ResultRows({})
    phase_rows(fresh, grid, adjusted, 0)
    phase_rows(reused, grid, adjusted, 0, searched)
    assert fresh.rows["phases"] == reused.rows["phases"]
    assert fresh.rows["degraded_probability"] == reused.rows["degraded_probability"]
    assert any(r["label"] != "stable" for r in fresh.rows["phases"])
    _, steady = _provider_series(grid, adjusted, "steady", "steady-model", searched)
    _, late = _provider_series(grid, adjusted, "late", "late-model", searched)
    assert set(steady) == {"short", "long", "speed"}, steady
    assert set(late) == {"short", "speed"}, late
