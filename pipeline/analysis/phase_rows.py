"""Phase rows: each provider's hourly series assembled, segmented into phases, and the
daily probability of being degraded."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

import numpy as np
import polars as pl
from numpy.typing import NDArray

from pipeline.analysis.degraded_days import daily_probability
from pipeline.analysis.phases import Phase, ProviderSeries, find_phases
from pipeline.analysis.rows import ResultRows, as_date, as_datetime, as_hour64, finite
from pipeline.analysis.series import (
    time_span,
)

__all__ = ["PHASE_METRICS", "PhaseInfo", "phase_rows"]


_SPEED = "output_tps_p50"
PHASE_METRICS = ("ttft_p50_ms", _SPEED)  # deseasonalized series the phases read


SeriesKey = tuple[str, str, str, str]  # provider, model, context class, metric


def _provider_series(
    grid: pl.DataFrame, adjusted: dict[SeriesKey, NDArray[np.float64]],
    provider: str, model: str, searched: Mapping[SeriesKey, list[int]],
) -> tuple[ProviderSeries, dict[str, list[int]]]:  # fmt: skip
    """The provider's series on one hourly grid, and the breaks already searched on those
    of its signals that fill the grid unchanged (``phases.candidate_breaks``)."""
    key = (provider, model)
    known: dict[str, list[int]] = {}
    part = grid.filter((pl.col("provider") == provider) & (pl.col("model") == model))
    lo, hi = time_span(part["hour"])
    h = np.arange(as_hour64(lo), as_hour64(hi) + 1)
    contexts = sorted(set(part["context_class"].to_list()))
    short_ctx = "short" if "short" in contexts else contexts[0]

    def aligned(signal: str, ctx: str, metric: str = "ttft_p50_ms") -> NDArray[np.float64]:
        series_key = (*key, ctx, metric)
        out = np.full(h.size, np.nan)
        if series_key in adjusted:
            first, _ = time_span(part.filter(pl.col("context_class") == ctx)["hour"])
            off = int((as_hour64(first) - h[0]).astype(np.int64))
            vals = adjusted[series_key]
            out[off : off + vals.size] = vals
            if series_key in searched and off == 0 and vals.size == h.size:
                known[signal] = searched[series_key]  # detect saw this very array
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

    series = ProviderSeries(
        hours=h,
        short=aligned("short", short_ctx),
        long=aligned("long", "long") if "long" in contexts and short_ctx != "long" else None,
        speed=aligned("speed", short_ctx, _SPEED)
        if (*key, short_ctx, _SPEED) in adjusted
        else None,
        n=count("n"),
        n_errors=count("n_busy") + count("n_timeout"),
        n_scored=count("n_scored"),
        n_correct=count("n_correct"),
        n_flagged=count("n_flagged"),
    )
    return series, known


@dataclass
class PhaseInfo:
    series: ProviderSeries
    phases: list[Phase]
    degraded_days: set[date]


def phase_rows(
    c: ResultRows,
    grid: pl.DataFrame,
    adjusted: dict[SeriesKey, NDArray[np.float64]],
    seed: int,
    searched: Mapping[SeriesKey, list[int]] | None = None,
) -> dict[tuple[str, str], PhaseInfo]:
    """Phase and degraded-day rows of every provider/model; ``searched``: the offline breaks
    ``metric_rows.change_rows`` found on ``adjusted``, reused rather than searched again."""
    out: dict[tuple[str, str], PhaseInfo] = {}
    for provider, model in grid.select("provider", "model").unique(maintain_order=True).rows():
        s, known = _provider_series(grid, adjusted, provider, model, searched or {})
        phases, _ = find_phases(s, seed=seed, searched=known)
        for ph in phases:
            c.add(
                "phases", provider=provider, model=model, phase_no=ph.phase_no,
                label=ph.label, stage=ph.stage, start_at=as_datetime(s.hours[ph.start]),
                end_at=as_datetime(s.hours[ph.end]) if ph.end < s.hours.size else None,
                severity=finite(ph.severity), severity_lo=finite(ph.severity_lo),
                severity_hi=finite(ph.severity_hi), confidence=finite(ph.confidence),
                signals=ph.signals,
                start_lo=None if ph.start_lo is None else as_datetime(s.hours[ph.start_lo]),
                start_hi=None if ph.start_hi is None else as_datetime(s.hours[ph.start_hi]),
            )  # fmt: skip
        days, probs, _method = daily_probability(s, phases, seed=seed)
        for d, p in zip(days, probs, strict=True):
            c.add(
                "degraded_probability",
                provider=provider,
                model=model,
                day=as_date(d),
                p_degraded=finite(float(p)),
            )
        share = _phase_share(s, phases)
        out[(provider, model)] = PhaseInfo(s, phases, {d for d, v in share.items() if v >= 0.5})
    return out


def _phase_share(s: ProviderSeries, phases: list[Phase]) -> dict[date, float]:
    flag = np.zeros(s.hours.size)
    for ph in phases:
        if ph.label != "stable":
            flag[ph.start : ph.end] = 1.0
    days = s.hours.astype("datetime64[D]")
    uniq, inv = np.unique(days, return_inverse=True)
    share = np.bincount(inv, weights=flag) / np.bincount(inv)
    return {as_date(d): float(v) for d, v in zip(uniq, share, strict=True)}
