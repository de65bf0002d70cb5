"""The ground truth a synthetic history was drawn from: planted phases and releases.

Analysis benchmarks score their detections against these rows.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from typing import Any

import numpy as np
import polars as pl

from pipeline.releases import RELEASE_SCHEMA
from probes.simulator import model
from probes.simulator.history import Window
from probes.simulator.scenario import HistoryOptions, Scenario

__all__ = ["options_json", "planted_phases", "planted_releases"]


def planted_phases(scenario: Scenario, win: Window, step_scale: float = 1.0) -> pl.DataFrame:
    """One row per provider phase: stage, start/end and the (scaled) multipliers."""
    start = win.scenario_start
    timeline_end = max(start + timedelta(days=scenario.clock.length_days), win.end)
    rows = []
    for provider in scenario.providers:
        phases = provider.phases
        for i, phase in enumerate(phases):
            begin = start + timedelta(days=phase.start_day)
            end = (
                start + timedelta(days=phases[i + 1].start_day)
                if i + 1 < len(phases)
                else timeline_end
            )
            pv = model.phase_values(
                provider, np.array([phase.start_day + phase.ramp_days + 1e-9]), step_scale
            )
            rows.append(
                {
                    "scenario": scenario.name,
                    "provider": provider.name,
                    "vendor": provider.vendor,
                    "phase_index": i,
                    "stage": phase.stage,
                    "start_at": begin,
                    "end_at": end,
                    "ramp_days": phase.ramp_days,
                    "latency_short": float(pv.latency_short[0]),
                    "latency_long": float(pv.latency_long[0]),
                    "speed": float(pv.speed[0]),
                    "error_multiplier": 1.0 + (phase.error_multiplier - 1.0) * step_scale,
                    "error_multipliers": _json({k: float(v[0]) for k, v in pv.error_mult.items()}),
                    "wrong_multiplier": float(pv.wrong_multiplier[0]),
                    "quantized": float(pv.quantized[0]),
                    "wrong_script_rate": float(pv.wrong_script_rate[0]),
                    "rate_limit": float(pv.rate_limit[0]),
                }
            )
    return pl.DataFrame(rows)


def planted_releases(scenario: Scenario, win: Window) -> pl.DataFrame:
    """The scenario's releases as ``releases`` rows (origin 'synthetic')."""
    rows = [
        {
            "vendor": provider.vendor,
            "model": release.model,
            "release_date": (win.scenario_start + timedelta(days=release.day)).date(),
            "kind": release.kind,
            "source_url": None,
            "confidence": "high",
            "origin": "synthetic",
        }
        for provider in scenario.providers
        for release in provider.releases
    ]
    return pl.DataFrame(rows, schema=RELEASE_SCHEMA)


def options_json(options: HistoryOptions) -> str:
    return _json(dataclasses.asdict(options))


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
