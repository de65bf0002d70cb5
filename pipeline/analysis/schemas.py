"""Polars schemas of the result tables (sql/schema/004_analysis.sql), without analysis_id.

Building frames against these keeps column types right when a table gets no or few rows.
"""

from __future__ import annotations

import polars as pl

__all__ = ["SCHEMAS"]

_TS = pl.Datetime("us", "UTC")
_S = pl.Utf8()
_F = pl.Float64()

SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    "seasonality": {
        "provider": _S, "model": _S, "metric": _S, "context_class": _S, "method": _S,
        "n_hours": pl.Int32(), "peak_to_trough": _F, "peak_hours": pl.List(pl.Int32),
        "pvalue": _F, "significant": pl.Boolean(), "detail": _S,
        "peak_to_trough_lo": _F, "peak_to_trough_hi": _F,
    },
    "hour_of_week": {
        "provider": _S, "model": _S, "metric": _S, "context_class": _S, "how": pl.Int32(),
        "value": _F, "n": pl.Int32(),
    },
    "change_points": {
        "provider": _S, "model": _S, "metric": _S, "context_class": _S, "at": _TS,
        "level_before": _F, "level_after": _F, "effect": _F, "effect_lo": _F,
        "effect_hi": _F, "pvalue": _F, "detector": _S, "detected_at": _TS,
    },
    "phases": {
        "provider": _S, "model": _S, "phase_no": pl.Int32(), "label": _S, "stage": _S,
        "start_at": _TS, "end_at": _TS, "severity": _F, "severity_lo": _F,
        "severity_hi": _F, "confidence": _F, "signals": pl.List(pl.Utf8),
        "start_lo": _TS, "start_hi": _TS,
    },
    "site_phases": {
        "provider": _S, "model": _S, "probe_site": _S, "phase_no": pl.Int32(), "label": _S,
        "stage": _S, "start_at": _TS, "end_at": _TS, "severity": _F, "severity_lo": _F,
        "severity_hi": _F, "confidence": _F, "signals": pl.List(pl.Utf8),
        "start_lo": _TS, "start_hi": _TS,
    },
    "degradation_scope": {
        "provider": _S, "model": _S, "start_at": _TS, "end_at": _TS, "scope": _S,
        "sites": pl.List(pl.Utf8), "n_sites": pl.Int32(), "pvalue": _F, "test": _S,
    },
    "degraded_probability": {
        "provider": _S, "model": _S, "day": pl.Date(), "p_degraded": _F,
    },
    "warning_signs": {
        "provider": _S, "model": _S, "sign": _S, "window_start": _TS, "window_end": _TS,
        "baseline_start": _TS, "baseline_end": _TS, "effect": _F, "effect_lo": _F,
        "effect_hi": _F, "pvalue": _F, "qvalue": _F, "fires": pl.Boolean(),
        "persistent": pl.Boolean(), "test": _S, "detail": _S,
    },
    "release_cycles": {
        "provider": _S, "vendor": _S, "release_model": _S, "release_date": pl.Date(),
        "onset_at": _TS, "lead_days": _F,
    },
    "event_study": {
        "provider": _S, "vendor": _S, "release_date": pl.Date(), "metric": _S,
        "day_offset": pl.Int32(), "value": _F, "relative": _F,
    },
    "cycle_tests": {
        "provider": _S, "test": _S, "statistic": _F, "pvalue": _F, "n": pl.Int32(),
        "detail": _S,
    },
    "release_forecasts": {
        "provider": _S, "vendor": _S, "expected_date": pl.Date(), "window_lo": pl.Date(),
        "window_hi": pl.Date(), "conclusive": pl.Boolean(), "basis": _S,
    },
    "vendor_incidents": {
        "vendor": _S, "start_at": _TS, "end_at": _TS, "providers": pl.List(pl.Utf8),
        "detail": _S,
    },
}  # fmt: skip

ANALYSIS_RUNS: dict[str, pl.DataType] = {
    "analysis_id": _S, "started_at": _TS, "status": _S, "since": _TS, "until": _TS,
    "params": _S, "nerfwatch_version": _S,
}  # fmt: skip
