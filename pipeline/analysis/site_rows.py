"""Phases per (provider, site) and the scope of each degradation across sites.

Latency depends on where the prober stands, so with several probe sites each site's
hourly series is segmented into phases on its own, by the same machinery as the pooled
series (deseasonalized with ``seasonality.decompose``, phases by ``phase_rows``). The
pooled phases per provider stay in ``phases``; these go to ``site_phases``. Where a
provider was probed from two sites or more, ``site_scope.episodes`` says whether each
degradation was regional or provider-wide (``degradation_scope``).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from numpy.typing import NDArray

from pipeline.analysis.metric_rows import log_or_nan
from pipeline.analysis.phase_rows import PHASE_METRICS, PhaseInfo, phase_rows
from pipeline.analysis.rows import ResultRows, as_datetime, as_hour64
from pipeline.analysis.seasonality import decompose
from pipeline.analysis.series import hour_grid, time_span
from pipeline.analysis.site_scope import TEST_NAME, episodes

__all__ = ["site_rows"]

Adjusted = dict[tuple[str, str, str, str], NDArray[np.float64]]


def _adjusted(grid: pl.DataFrame) -> Adjusted:
    """The deseasonalized log series the phases read, per (provider, model, context, metric)."""
    out: Adjusted = {}
    for key, part in grid.group_by("provider", "model", "context_class", maintain_order=True):
        hours = part["hour"].dt.replace_time_zone(None).to_numpy().astype("datetime64[h]")
        for metric in PHASE_METRICS:
            logv = log_or_nan(part[metric].cast(pl.Float64).fill_null(np.nan).to_numpy())
            if np.isfinite(logv).any():
                provider, model, ctx = (str(k) for k in key)
                out[(provider, model, ctx, metric)] = decompose(hours, logv).adjusted
    return out


def _one_site(
    c: ResultRows, hourly: pl.DataFrame, site: str, seed: int
) -> dict[tuple[str, str], PhaseInfo]:
    grid = hour_grid(hourly.drop("probe_site"))
    scratch = ResultRows({})
    infos = phase_rows(scratch, grid, _adjusted(grid), seed)
    for row in scratch.rows.get("phases", []):
        c.add("site_phases", probe_site=site, **row)
    return infos


def site_rows(c: ResultRows, hourly: pl.DataFrame, seed: int = 0) -> None:
    """``site_phases`` and ``degradation_scope`` rows from hourly buckets per site
    (``series.load_hourly(by_site=True)``); nothing when every row is from one site."""
    sites = sorted(set(hourly["probe_site"].to_list())) if hourly.height else []
    if len(sites) < 2:
        return
    per_site = {
        site: _one_site(c, hourly.filter(pl.col("probe_site") == site), site, seed)
        for site in sites
    }
    lo, hi = time_span(hourly["hour"])
    first, n = as_hour64(lo), int((as_hour64(hi) - as_hour64(lo)).astype(np.int64)) + 1
    for provider, model in hourly.select("provider", "model").unique(maintain_order=True).rows():
        names = [s for s in sites if (provider, model) in per_site[s]]
        degraded = np.zeros((len(names), n), dtype=bool)
        observed = np.zeros((len(names), n), dtype=bool)
        for i, site in enumerate(names):
            info = per_site[site][(provider, model)]
            at = (info.series.hours - first).astype(np.int64)
            observed[i, at] = (info.series.n if info.series.n is not None else 1) > 0
            for ph in info.phases:
                if ph.label != "stable":
                    degraded[i, at[ph.start : ph.end]] = True
        for ep in episodes(names, degraded, observed, seed):
            c.add(
                "degradation_scope", provider=provider, model=model,
                start_at=as_datetime(first + ep.start), end_at=as_datetime(first + ep.end),
                scope=ep.scope, sites=list(ep.sites), n_sites=ep.n_sites,
                pvalue=ep.pvalue, test=TEST_NAME,
            )  # fmt: skip
