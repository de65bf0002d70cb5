"""``compute``: every analysis result table from an hourly frame, pure (frames in, frames
out), so it can be tested and benchmarked without a database. ``orchestrate`` runs it on
the warehouse."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
from numpy.typing import NDArray

from pipeline.analysis.cycle_rows import cycle_rows
from pipeline.analysis.metric_rows import (
    change_rows,
    log_or_nan,
    rate_change_rows,
    seasonality_rows,
)
from pipeline.analysis.paired_items import PairedTest
from pipeline.analysis.phase_rows import PHASE_METRICS, phase_rows
from pipeline.analysis.rows import ResultRows, finite
from pipeline.analysis.seasonality import decompose
from pipeline.analysis.series import (
    LATENCY_METRICS,
    hour_grid,
    long_context_penalty,
)
from pipeline.analysis.site_rows import site_rows
from pipeline.analysis.warning_signs import SignResult, warning_signs

__all__ = ["compute"]


def compute(
    hourly: pl.DataFrame,
    releases: pl.DataFrame | None = None,
    incidents: pl.DataFrame | None = None,
    *,
    seed: int = 0,
    extra_signs: Sequence[SignResult] = (),
    paired: Mapping[tuple[str, str], PairedTest] | None = None,
    site_hourly: pl.DataFrame | None = None,
) -> dict[str, pl.DataFrame]:
    """Every result table (without analysis_id) from an hourly frame (see series.py);
    ``extra_signs``: warning signs tested outside the warehouse (fixed-input drift);
    ``paired``: McNemar on replayed items, for dumber_answers; ``site_hourly``: the
    same buckets per probe site, for the per-site phases and their scope."""
    c = ResultRows({})
    releases = (
        releases
        if releases is not None
        else pl.DataFrame(schema={"vendor": pl.Utf8, "model": pl.Utf8, "release_date": pl.Date})
    )
    incidents = (
        incidents
        if incidents is not None
        else pl.DataFrame(schema={"vendor": pl.Utf8, "start_date": pl.Date, "end_date": pl.Date})
    )
    if hourly.height == 0:
        return c.frames()
    grid = hour_grid(hourly)
    adjusted: dict[tuple[str, str, str, str], NDArray[np.float64]] = {}
    searched: dict[tuple[str, str, str, str], list[int]] = {}  # their offline breaks
    # one pass splits the grid into series (a filter per series scanned all of it each time)
    parts = grid.partition_by(
        "provider", "model", "context_class", maintain_order=True, as_dict=True
    )
    for group, part in parts.items():
        key: tuple[str, str, str] = (group[0], group[1], group[2])
        hours = part["hour"].dt.replace_time_zone(None).to_numpy().astype("datetime64[h]")
        for metric in LATENCY_METRICS:
            logv = log_or_nan(part[metric].cast(pl.Float64).fill_null(np.nan).to_numpy())
            if not np.isfinite(logv).any():
                continue
            s = decompose(hours, logv)
            seasonality_rows(c, key, metric, s)
            breaks = change_rows(c, key, metric, hours, s.adjusted, seed)
            if metric in PHASE_METRICS:
                adjusted[(*key, metric)] = s.adjusted
                searched[(*key, metric)] = breaks
        rate_change_rows(c, key, part)
    vendors = {
        (p, m): v
        for p, m, v in grid.group_by("provider", "model")
        .agg(pl.col("vendor").drop_nulls().first())
        .rows()
    }
    phase_map = phase_rows(c, grid, adjusted, seed, searched)
    penalty = long_context_penalty(grid)
    signs = warning_signs(hourly, penalty, incidents, vendors, extra=extra_signs, paired=paired)
    for r in signs:
        c.add(
            "warning_signs", provider=r.provider, model=r.model, sign=r.sign,
            window_start=r.window_start, window_end=r.window_end,
            baseline_start=r.baseline_start, baseline_end=r.baseline_end,
            effect=finite(r.effect), effect_lo=finite(r.effect_lo),
            effect_hi=finite(r.effect_hi),
            pvalue=finite(r.pvalue), qvalue=finite(r.qvalue), fires=r.fires,
            persistent=r.persistent, test=r.test, detail=r.detail,
        )  # fmt: skip
    cycle_rows(c, grid, phase_map, vendors, releases, seed)
    if site_hourly is not None:
        site_rows(c, site_hourly, seed)
    return c.frames()
