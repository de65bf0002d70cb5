"""Release-cycle rows: release joins and lead times, event studies, clustering and
synchronization tests, next-release forecasts and vendor-wide incidents."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

import numpy as np
import polars as pl

from pipeline.analysis import release_cycles as rc
from pipeline.analysis.grouped import group_medians
from pipeline.analysis.incidents import vendor_incidents
from pipeline.analysis.phase_rows import PhaseInfo
from pipeline.analysis.phases import ProviderSeries
from pipeline.analysis.rows import ResultRows, as_date, as_datetime, finite

__all__ = ["cycle_rows"]


def cycle_rows(
    c: ResultRows,
    grid: pl.DataFrame,
    info: dict[tuple[str, str], PhaseInfo],
    vendors: dict[tuple[str, str], str | None],
    releases: pl.DataFrame,
    seed: int,
) -> None:
    """Release joins, event studies, cycle tests, forecasts and vendor-wide incidents."""
    groups: list[tuple[list[datetime], list[date]]] = []
    leads: dict[tuple[str, str], list[float]] = {}
    cluster_p: dict[tuple[str, str], float] = {}
    span_lo = as_datetime(min(i.series.hours[0] for i in info.values()))
    span_hi = as_datetime(max(i.series.hours[-1] for i in info.values()))
    by_vendor: dict[str, dict[str, set[date]]] = {}
    for (provider, model), pi in info.items():
        vendor = vendors.get((provider, model))
        by_vendor.setdefault(vendor or provider, {})[f"{provider}/{model}"] = pi.degraded_days
        starts = [(ph.label, as_datetime(pi.series.hours[ph.start])) for ph in pi.phases]
        onset_times = rc.onsets(starts)
        rel = releases.filter(pl.col("vendor") == vendor) if vendor else releases.clear()
        rel_dates = [
            d
            for d in rel["release_date"].to_list()
            if span_lo.date() <= d <= span_hi.date() + timedelta(days=rc.MAX_LEAD_DAYS)
        ]
        rel_models = dict(zip(rel["release_date"].to_list(), rel["model"].to_list(), strict=True))
        for rdate, onset, lead in rc.lead_times(onset_times, rel_dates):
            c.add(
                "release_cycles", provider=provider, vendor=vendor,
                release_model=rel_models.get(rdate),
                release_date=rdate, onset_at=onset, lead_days=lead,
            )  # fmt: skip
            if lead is not None:
                leads.setdefault((provider, model), []).append(lead)
        _event_study(c, pi.series, provider, vendor, [d for d in rel_dates if d <= span_hi.date()])
        share, p, n = rc.clustering_test(onset_times, rel_dates, (span_lo, span_hi), seed=seed)
        c.add(
            "cycle_tests", provider=provider, test="onsets_before_releases",
            statistic=finite(share), pvalue=finite(p), n=n,
            detail=f"share of {n} onsets within {rc.CLUSTER_WINDOW_DAYS} d before one of "
            f"{len(rel_dates)} releases; null: onsets at random dates in the span",
        )  # fmt: skip
        groups.append((onset_times, rel_dates))
        cluster_p[(provider, model)] = p
    pooled_share, pooled_p, pooled_n = rc.pooled_clustering_test(
        groups, (span_lo, span_hi), seed=seed
    )
    c.add(
        "cycle_tests", provider=None, test="onsets_before_releases_pooled",
        statistic=finite(pooled_share), pvalue=finite(pooled_p), n=pooled_n,
        detail="each provider's onsets against its own vendor's releases, summed over "
        "the providers with onsets and releases",
    )  # fmt: skip
    _synchronization(c, info, span_lo, span_hi, seed)
    _forecasts(c, info, vendors, releases, leads, cluster_p)
    for inc in vendor_incidents(by_vendor):
        c.add(
            "vendor_incidents", vendor=inc.vendor,
            start_at=datetime(inc.start.year, inc.start.month, inc.start.day, tzinfo=UTC),
            end_at=datetime(inc.end.year, inc.end.month, inc.end.day, tzinfo=UTC)
            + timedelta(days=1),
            providers=inc.members, detail=inc.detail,
        )  # fmt: skip
    del grid


def _event_study(
    c: ResultRows, s: ProviderSeries, provider: str, vendor: str | None, releases: list[date]
) -> None:
    days = s.hours.astype("datetime64[D]")
    uniq, inv = np.unique(days, return_inverse=True)
    ok = np.isfinite(s.short)
    medians, _ = group_medians(s.short[ok], inv[ok], uniq.size)
    daily = np.array([math.exp(float(m)) if np.isfinite(m) else np.nan for m in medians])
    for rdate in releases:
        for off, val, rel in rc.event_study(uniq, daily, rdate):
            c.add(
                "event_study", provider=provider, vendor=vendor, release_date=rdate,
                metric="ttft_p50_ms_deseasonalized", day_offset=off, value=finite(val),
                relative=finite(rel),
            )  # fmt: skip


def _synchronization(
    c: ResultRows, info: dict[tuple[str, str], PhaseInfo], lo: datetime, hi: datetime, seed: int
) -> None:
    all_days = np.arange(np.datetime64(lo.date(), "D"), np.datetime64(hi.date(), "D") + 1)
    keys = sorted(info)
    dates = [as_date(d) for d in all_days]
    degraded = {k: np.array([d in info[k].degraded_days for d in dates]) for k in keys}
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            jac, p = rc.synchronization_test(degraded[a], degraded[b], seed=seed)
            c.add(
                "cycle_tests", provider=None, test=f"synchronized:{a[0]}/{a[1]}|{b[0]}/{b[1]}",
                statistic=finite(jac), pvalue=finite(p), n=int(all_days.size),
                detail="Jaccard of degraded days; null: circular shifts of one series",
            )  # fmt: skip


def _forecasts(
    c: ResultRows,
    info: dict[tuple[str, str], PhaseInfo],
    vendors: dict[tuple[str, str], str | None],
    releases: pl.DataFrame,
    leads: dict[tuple[str, str], list[float]],
    cluster_p: dict[tuple[str, str], float],
) -> None:
    """A next-release window for each provider that is degraded now, from that provider's
    own lead times and clustering test (the ones the report shows beside it). Recovery
    ends the episode, and a release since the onset is the one a forecast would have named."""
    for (provider, model), pi in info.items():
        if not pi.phases or pi.phases[-1].label != "degraded":
            continue
        chain_start = len(pi.phases) - 1
        while chain_start > 0 and pi.phases[chain_start - 1].label == "degraded":
            chain_start -= 1
        onset = as_datetime(pi.series.hours[pi.phases[chain_start].start])
        vendor = vendors.get((provider, model))
        since = pl.col("release_date").is_between(
            onset.date(), as_datetime(pi.series.hours[-1]).date()
        )
        came = (
            releases.filter((pl.col("vendor") == vendor) & since) if vendor else releases.clear()
        ).sort("release_date")
        if came.height:
            f = rc.Forecast(None, None, None, False, (
                f"no forecast: {came['model'][0]} was released {came['release_date'][0]}, "
                f"after this degradation began ({onset.date()})"
            ))  # fmt: skip
        else:
            key = (provider, model)
            f = rc.forecast_release(onset, leads.get(key, []), cluster_p.get(key, math.nan))
        c.add(
            "release_forecasts", provider=provider, vendor=vendor,
            expected_date=f.expected, window_lo=f.lo, window_hi=f.hi,
            conclusive=f.conclusive, basis=f.basis,
        )  # fmt: skip


# -- warehouse I/O -------------------------------------------------------------------
