"""The one place analysis touches the warehouse: read series, run the pure steps, write tables.

``compute`` is pure (frames in, frames out) so it can be tested and benchmarked without a
database; ``run_analysis`` wraps it with an ``analysis_runs`` record (running -> done or
failed) and writes every result row with the run's id, so runs never overwrite each other.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from pipeline.analysis import release_cycles as rc
from pipeline.analysis.changepoints import detect
from pipeline.analysis.effects import (
    fisher_one_sided,
    mann_whitney_one_sided,
    rate_ratio_ci,
    relative_shift_ci,
)
from pipeline.analysis.incidents import vendor_incidents
from pipeline.analysis.online import online_alarms
from pipeline.analysis.phases import Phase, ProviderSeries, daily_probability, find_phases
from pipeline.analysis.schemas import ANALYSIS_RUNS, SCHEMAS
from pipeline.analysis.seasonality import Seasonality, decompose
from pipeline.analysis.series import (
    LATENCY_METRICS,
    hour_grid,
    load_hourly,
    long_context_penalty,
    time_span,
)
from pipeline.analysis.warning_signs import warning_signs
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id

__all__ = ["PhaseChange", "compute", "phase_changes_since", "run_analysis"]

ONLINE_ARL0_HOURS = 24 * 90
# Hourly p95 of a dozen probes is too skewed and noisy for a normal-theory CUSUM: alarms run
# on the medians only (the offline detector, rank-confirmed, still covers p95).
ONLINE_METRICS = ("ttft_p50_ms", "total_p50_ms", "output_tps_p50")
_SPEED = "output_tps_p50"
_PHASE_METRICS = ("ttft_p50_ms", _SPEED)  # deseasonalized series the phases read


def _ts(h: np.datetime64) -> datetime:
    return datetime.fromtimestamp(int(h.astype("datetime64[s]").astype(np.int64)), tz=UTC)


def _h64(t: datetime) -> np.datetime64:
    """A timezone-aware datetime as a naive UTC numpy hour."""
    return np.datetime64(int(t.timestamp()) // 3600, "h")


def _day(d: np.datetime64) -> date:
    return _ts(d.astype("datetime64[h]")).date()


def _finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


@dataclass
class _Collector:
    rows: dict[str, list[dict[str, Any]]]

    def add(self, table: str, **row: Any) -> None:
        self.rows.setdefault(table, []).append(row)

    def frames(self) -> dict[str, pl.DataFrame]:
        return {
            t: pl.DataFrame(self.rows.get(t, []), schema=schema, orient="row")
            if self.rows.get(t)
            else pl.DataFrame(schema=schema)
            for t, schema in SCHEMAS.items()
        }


def _level(log_values: NDArray[np.float64]) -> float | None:
    """Median level back on the metric's scale (None without data)."""
    finite = log_values[np.isfinite(log_values)]
    return _finite(math.exp(float(np.median(finite)))) if finite.size else None


def _log(x: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, np.log(x), np.nan)


def _seasonality_rows(
    c: _Collector, key: tuple[str, str, str], metric: str, s: Seasonality
) -> None:
    provider, model, ctx = key
    c.add(
        "seasonality", provider=provider, model=model, metric=metric, context_class=ctx,
        method=s.method, n_hours=s.n_hours, peak_to_trough=_finite(s.peak_to_trough),
        peak_hours=s.peak_hours, pvalue=_finite(s.pvalue), significant=s.significant,
        detail=s.detail,
    )  # fmt: skip
    if metric == "ttft_p50_ms":
        for how in range(168):
            c.add(
                "hour_of_week", provider=provider, model=model, metric=metric,
                context_class=ctx, how=how, value=float(s.profile[how]),
                n=int(s.profile_n[how]),
            )  # fmt: skip


def _change_rows(
    c: _Collector,
    key: tuple[str, str, str],
    metric: str,
    hours: NDArray[np.datetime64],
    adjusted: NDArray[np.float64],
    seed: int,
) -> None:
    """Offline (confirmed) and online change points of one deseasonalized log series."""
    provider, model, ctx = key
    breaks = detect(adjusted)
    edges = [0, *breaks, adjusted.size]
    for i, b in enumerate(breaks, start=1):
        before, after = adjusted[edges[i - 1] : b], adjusted[b : edges[i + 1]]
        eff, lo, hi = relative_shift_ci(before, after, seed=seed + i)
        p_up = mann_whitney_one_sided(before, after)
        p = min(1.0, 2 * min(p_up, 1 - p_up)) if math.isfinite(p_up) else None
        c.add(
            "change_points", provider=provider, model=model, metric=metric,
            context_class=ctx, at=_ts(hours[b]),
            level_before=_level(before),
            level_after=_level(after),
            effect=_finite(eff), effect_lo=_finite(lo), effect_hi=_finite(hi),
            pvalue=p, detector="offline", detected_at=None,
        )  # fmt: skip
    if metric not in ONLINE_METRICS:
        return
    baseline_n = min(24 * 28, max(24 * 7, adjusted.size // 3))
    for alarm in online_alarms(adjusted, baseline_n=baseline_n, target_arl0=ONLINE_ARL0_HOURS):
        before = adjusted[max(0, alarm.start - 168) : alarm.start]
        after = adjusted[alarm.start : alarm.index + 1]
        eff, lo, hi = relative_shift_ci(before, after, seed=seed)
        c.add(
            "change_points", provider=provider, model=model, metric=metric,
            context_class=ctx, at=_ts(hours[alarm.start]),
            level_before=_level(before), level_after=_level(after),
            effect=_finite(eff), effect_lo=_finite(lo), effect_hi=_finite(hi),
            pvalue=None, detector="online", detected_at=_ts(hours[alarm.index]),
        )  # fmt: skip


# Daily rates: (metric name, events column, trials column).
_RATES = (
    ("error_rate", "n_busy", "n"),
    ("timeout_rate", "n_timeout", "n"),
    ("wrong_rate", None, "n_scored"),
    ("sanity_flag_rate", "n_flagged", "n"),
)


def _rate_change_rows(c: _Collector, key: tuple[str, str, str], part: pl.DataFrame) -> None:
    """Offline change points of daily outcome rates (counts summed per UTC day)."""
    provider, model, ctx = key
    daily = (
        part.with_columns(pl.col("hour").dt.truncate("1d").alias("day"))
        .group_by("day")
        .agg(pl.col("n", "n_busy", "n_timeout", "n_scored", "n_correct", "n_flagged").sum())
        .sort("day")
        .with_columns((pl.col("n_scored") - pl.col("n_correct")).alias("n_wrong"))
    )
    for metric, events_col, trials_col in _RATES:
        ev = daily[events_col or "n_wrong"].fill_null(0).to_numpy().astype(np.int64)
        tr = daily[trials_col].fill_null(0).to_numpy().astype(np.int64)
        if tr.sum() == 0 or ev.sum() == 0:
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(tr > 0, ev / np.maximum(tr, 1), np.nan)
        breaks = detect(rate)
        edges = [0, *breaks, rate.size]
        for i, b in enumerate(breaks, start=1):
            e_b, n_b = int(ev[edges[i - 1] : b].sum()), int(tr[edges[i - 1] : b].sum())
            e_a, n_a = int(ev[b : edges[i + 1]].sum()), int(tr[b : edges[i + 1]].sum())
            eff, lo, hi = rate_ratio_ci(e_b, n_b, e_a, n_a)
            p_up = fisher_one_sided(e_b, n_b, e_a, n_a)
            p_down = fisher_one_sided(e_a, n_a, e_b, n_b)
            c.add(
                "change_points", provider=provider, model=model, metric=metric,
                context_class=ctx, at=daily["day"][b],
                level_before=e_b / n_b if n_b else None, level_after=e_a / n_a if n_a else None,
                effect=_finite(eff), effect_lo=_finite(lo), effect_hi=_finite(hi),
                pvalue=_finite(min(1.0, 2 * min(p_up, p_down))), detector="offline",
                detected_at=None,
            )  # fmt: skip


def _provider_series(
    grid: pl.DataFrame, adjusted: dict[tuple[str, str, str, str], NDArray[np.float64]],
    provider: str, model: str,
) -> ProviderSeries:  # fmt: skip
    key = (provider, model)
    part = grid.filter((pl.col("provider") == provider) & (pl.col("model") == model))
    lo, hi = time_span(part["hour"])
    h = np.arange(_h64(lo), _h64(hi) + 1)
    contexts = sorted(set(part["context_class"].to_list()))
    short_ctx = "short" if "short" in contexts else contexts[0]

    def aligned(ctx: str, metric: str = "ttft_p50_ms") -> NDArray[np.float64]:
        series_key = (*key, ctx, metric)
        out = np.full(h.size, np.nan)
        if series_key in adjusted:
            first, _ = time_span(part.filter(pl.col("context_class") == ctx)["hour"])
            off = int((_h64(first) - h[0]).astype(np.int64))
            vals = adjusted[series_key]
            out[off : off + vals.size] = vals
        return out

    counts = (
        part.group_by("hour")
        .agg(
            [
                pl.col(c).sum()
                for c in ("n", "n_busy", "n_timeout", "n_scored", "n_correct", "n_flagged")
            ]
        )
        .sort("hour")
    )
    idx = (
        counts["hour"].dt.replace_time_zone(None).to_numpy().astype("datetime64[h]") - h[0]
    ).astype(np.int64)

    def count(col: str) -> NDArray[np.int64]:
        out = np.zeros(h.size, dtype=np.int64)
        out[idx] = counts[col].fill_null(0).to_numpy()
        return out

    return ProviderSeries(
        hours=h,
        short=aligned(short_ctx),
        long=aligned("long") if "long" in contexts and short_ctx != "long" else None,
        speed=aligned(short_ctx, _SPEED) if (*key, short_ctx, _SPEED) in adjusted else None,
        n=count("n"),
        n_errors=count("n_busy") + count("n_timeout"),
        n_scored=count("n_scored"),
        n_correct=count("n_correct"),
        n_flagged=count("n_flagged"),
    )


def compute(
    hourly: pl.DataFrame,
    releases: pl.DataFrame | None = None,
    incidents: pl.DataFrame | None = None,
    *,
    seed: int = 0,
) -> dict[str, pl.DataFrame]:
    """Every result table (without analysis_id) from an hourly frame (see series.py)."""
    c = _Collector({})
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
    keys = grid.select("provider", "model", "context_class").unique(maintain_order=True).rows()
    for key in keys:
        part = grid.filter(
            (pl.col("provider") == key[0])
            & (pl.col("model") == key[1])
            & (pl.col("context_class") == key[2])
        )
        hours = part["hour"].dt.replace_time_zone(None).to_numpy().astype("datetime64[h]")
        for metric in LATENCY_METRICS:
            logv = _log(part[metric].cast(pl.Float64).fill_null(np.nan).to_numpy())
            if not np.isfinite(logv).any():
                continue
            s = decompose(hours, logv)
            _seasonality_rows(c, key, metric, s)
            _change_rows(c, key, metric, hours, s.adjusted, seed)
            if metric in _PHASE_METRICS:
                adjusted[(*key, metric)] = s.adjusted
        _rate_change_rows(c, key, part)
    vendors = {
        (p, m): v
        for p, m, v in grid.group_by("provider", "model")
        .agg(pl.col("vendor").drop_nulls().first())
        .rows()
    }
    phase_map = _phases(c, grid, adjusted, seed)
    penalty = long_context_penalty(grid)
    for r in warning_signs(hourly, penalty, incidents, vendors):
        c.add(
            "warning_signs", provider=r.provider, model=r.model, sign=r.sign,
            window_start=r.window_start, window_end=r.window_end,
            baseline_start=r.baseline_start, baseline_end=r.baseline_end,
            effect=_finite(r.effect), effect_lo=_finite(r.effect_lo),
            effect_hi=_finite(r.effect_hi),
            pvalue=_finite(r.pvalue), qvalue=_finite(r.qvalue), fires=r.fires,
            persistent=r.persistent, test=r.test, detail=r.detail,
        )  # fmt: skip
    _cycles(c, grid, phase_map, vendors, releases, seed)
    return c.frames()


@dataclass
class _PhaseInfo:
    series: ProviderSeries
    phases: list[Phase]
    degraded_days: set[date]


def _phases(
    c: _Collector,
    grid: pl.DataFrame,
    adjusted: dict[tuple[str, str, str, str], NDArray[np.float64]],
    seed: int,
) -> dict[tuple[str, str], _PhaseInfo]:
    out: dict[tuple[str, str], _PhaseInfo] = {}
    for provider, model in grid.select("provider", "model").unique(maintain_order=True).rows():
        s = _provider_series(grid, adjusted, provider, model)
        phases, _ = find_phases(s, seed=seed)
        for ph in phases:
            c.add(
                "phases", provider=provider, model=model, phase_no=ph.phase_no,
                label=ph.label, stage=ph.stage, start_at=_ts(s.hours[ph.start]),
                end_at=_ts(s.hours[ph.end]) if ph.end < s.hours.size else None,
                severity=_finite(ph.severity), severity_lo=_finite(ph.severity_lo),
                severity_hi=_finite(ph.severity_hi), confidence=_finite(ph.confidence),
                signals=ph.signals,
                start_lo=None if ph.start_lo is None else _ts(s.hours[ph.start_lo]),
                start_hi=None if ph.start_hi is None else _ts(s.hours[ph.start_hi]),
            )  # fmt: skip
        days, probs, _method = daily_probability(s, phases, seed=seed)
        for d, p in zip(days, probs, strict=True):
            c.add(
                "degraded_probability",
                provider=provider,
                model=model,
                day=_day(d),
                p_degraded=_finite(float(p)),
            )
        share = _phase_share(s, phases)
        out[(provider, model)] = _PhaseInfo(s, phases, {d for d, v in share.items() if v >= 0.5})
    return out


def _phase_share(s: ProviderSeries, phases: list[Phase]) -> dict[date, float]:
    flag = np.zeros(s.hours.size)
    for ph in phases:
        if ph.label != "stable":
            flag[ph.start : ph.end] = 1.0
    days = s.hours.astype("datetime64[D]")
    uniq, inv = np.unique(days, return_inverse=True)
    share = np.bincount(inv, weights=flag) / np.bincount(inv)
    return {_day(d): float(v) for d, v in zip(uniq, share, strict=True)}


def _cycles(
    c: _Collector,
    grid: pl.DataFrame,
    info: dict[tuple[str, str], _PhaseInfo],
    vendors: dict[tuple[str, str], str | None],
    releases: pl.DataFrame,
    seed: int,
) -> None:
    """Release joins, event studies, cycle tests, forecasts and vendor-wide incidents."""
    groups: list[tuple[list[datetime], list[date]]] = []
    leads: dict[tuple[str, str], list[float]] = {}
    cluster_p: dict[tuple[str, str], float] = {}
    span_lo = _ts(min(i.series.hours[0] for i in info.values()))
    span_hi = _ts(max(i.series.hours[-1] for i in info.values()))
    by_vendor: dict[str, dict[str, set[date]]] = {}
    for (provider, model), pi in info.items():
        vendor = vendors.get((provider, model))
        by_vendor.setdefault(vendor or provider, {})[f"{provider}/{model}"] = pi.degraded_days
        starts = [(ph.label, _ts(pi.series.hours[ph.start])) for ph in pi.phases]
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
            statistic=_finite(share), pvalue=_finite(p), n=n,
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
        statistic=_finite(pooled_share), pvalue=_finite(pooled_p), n=pooled_n,
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
    c: _Collector, s: ProviderSeries, provider: str, vendor: str | None, releases: list[date]
) -> None:
    days = s.hours.astype("datetime64[D]")
    uniq, inv = np.unique(days, return_inverse=True)
    daily = np.full(uniq.size, np.nan)
    for d in range(uniq.size):
        v = s.short[inv == d]
        v = v[np.isfinite(v)]
        if v.size:
            daily[d] = math.exp(float(np.median(v)))
    for rdate in releases:
        for off, val, rel in rc.event_study(uniq, daily, rdate):
            c.add(
                "event_study", provider=provider, vendor=vendor, release_date=rdate,
                metric="ttft_p50_ms_deseasonalized", day_offset=off, value=_finite(val),
                relative=_finite(rel),
            )  # fmt: skip


def _synchronization(
    c: _Collector, info: dict[tuple[str, str], _PhaseInfo], lo: datetime, hi: datetime, seed: int
) -> None:
    all_days = np.arange(np.datetime64(lo.date(), "D"), np.datetime64(hi.date(), "D") + 1)
    keys = sorted(info)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            da = np.array([_day(d) in info[a].degraded_days for d in all_days])
            db = np.array([_day(d) in info[b].degraded_days for d in all_days])
            jac, p = rc.synchronization_test(da, db, seed=seed)
            c.add(
                "cycle_tests", provider=None, test=f"synchronized:{a[0]}/{a[1]}|{b[0]}/{b[1]}",
                statistic=_finite(jac), pvalue=_finite(p), n=int(all_days.size),
                detail="Jaccard of degraded days; null: circular shifts of one series",
            )  # fmt: skip


def _forecasts(
    c: _Collector,
    info: dict[tuple[str, str], _PhaseInfo],
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
        onset = _ts(pi.series.hours[pi.phases[chain_start].start])
        vendor = vendors.get((provider, model))
        since = pl.col("release_date").is_between(onset.date(), _ts(pi.series.hours[-1]).date())
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


def _reference(warehouse: Warehouse, synthetic: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Releases and incidents; synthetic (planted) rows only when analysing synthetic data."""
    origin = "" if synthetic else " WHERE origin <> 'synthetic'"
    releases = warehouse.query(f"SELECT vendor, model, release_date FROM releases{origin}")
    incidents = warehouse.query(f"SELECT vendor, start_date, end_date FROM incidents{origin}")
    return releases, incidents


def run_analysis(
    warehouse: Warehouse,
    since: datetime | None = None,
    until: datetime | None = None,
    *,
    source: str | None = None,
    seed: int = 0,
) -> str:
    """Analyse the warehouse, write every result table under a new analysis id, return it."""
    analysis_id = new_run_id()
    params = {"source": source, "seed": seed, "online_arl0_hours": ONLINE_ARL0_HOURS}
    warehouse.insert_frame(
        "analysis_runs",
        pl.DataFrame(
            [{
                "analysis_id": analysis_id, "started_at": datetime.now(UTC), "status": "running",
                "since": since, "until": until, "params": json.dumps(params),
                "nerfwatch_version": _version(),
            }],
            schema=ANALYSIS_RUNS,
        ),
    )  # fmt: skip
    try:
        hourly = load_hourly(warehouse, since, until, source)
        synthetic = bool(hourly.height) and source != "live" and _has_synthetic(warehouse)
        releases, incidents = _reference(warehouse, synthetic)
        frames = compute(hourly, releases, incidents, seed=seed)
        for table, frame in frames.items():
            if frame.height:
                warehouse.insert_frame(
                    table, frame.with_columns(pl.lit(analysis_id).alias("analysis_id"))
                )
        data_until = time_span(hourly["hour"])[1] + timedelta(hours=1) if hourly.height else until
        warehouse.execute(
            "UPDATE analysis_runs SET status = 'done', finished_at = now(), until = ?, detail = ? "
            "WHERE analysis_id = ?",
            [data_until, f"{hourly.height} hourly buckets analysed", analysis_id],
        )
    except Exception as exc:
        warehouse.execute(
            "UPDATE analysis_runs SET status = 'failed', finished_at = now(), detail = ? "
            "WHERE analysis_id = ?",
            [f"{type(exc).__name__}: {exc}"[:500], analysis_id],
        )
        raise
    return analysis_id


def _version() -> str | None:
    try:
        return version("nerfwatch")
    except PackageNotFoundError:
        return None


def _has_synthetic(warehouse: Warehouse) -> bool:
    frame = warehouse.query("SELECT count(*) AS n FROM probe_results WHERE source = 'synthetic'")
    return bool(frame["n"][0])


@dataclass(frozen=True)
class PhaseChange:
    """A provider's current phase differs from the one the previous analysis run ended in."""

    provider: str
    model: str | None
    previous_stage: str | None
    stage: str
    label: str
    since: datetime
    severity: float | None
    severity_lo: float | None
    severity_hi: float | None
    analysis_id: str


def phase_changes_since(warehouse: Warehouse, analysis_id: str | None = None) -> list[PhaseChange]:
    """Phase changes of run ``analysis_id`` (default: the latest done run) against the done
    run before it. On a first run every non-stable current phase counts as a change."""
    runs = warehouse.query(
        "SELECT analysis_id FROM analysis_runs WHERE status = 'done' "
        "ORDER BY started_at DESC, analysis_id DESC"
    )["analysis_id"].to_list()
    if analysis_id is None:
        if not runs:
            return []
        analysis_id = runs[0]
    previous = next((r for r in runs if r < analysis_id), None)
    current = _last_phases(warehouse, analysis_id)
    before = _last_phases(warehouse, previous) if previous else {}
    changes = []
    for key, row in sorted(current.items()):
        old = before.get(key)
        old_stage = old["stage"] if old else None
        if old_stage == row["stage"] or (old is None and row["label"] == "stable"):
            continue
        changes.append(
            PhaseChange(
                key[0], key[1], old_stage, row["stage"], row["label"], row["start_at"],
                row["severity"], row["severity_lo"], row["severity_hi"], analysis_id,
            )
        )  # fmt: skip
    return changes


def _last_phases(warehouse: Warehouse, analysis_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    frame = warehouse.query(
        "SELECT * FROM phases WHERE analysis_id = ? "
        "QUALIFY row_number() OVER (PARTITION BY provider, model ORDER BY phase_no DESC) = 1",
        [analysis_id],
    )
    return {(r["provider"], r["model"]): r for r in frame.iter_rows(named=True)}
