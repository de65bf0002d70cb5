"""The scenario model, vectorized: one code path for the live server and for history.

Every function takes numpy arrays (the server passes arrays of length one), so the
phase multipliers, the demand rhythm, error probabilities, latency and quality a
synthetic history row is drawn from are exactly those a live response is drawn from.

Service model (all times in milliseconds, before ``time_scale``):

* demand(t) = (1 + a_d * cos(2pi (hour - peak_hour) / 24))
              * (1 + a_w * cos(2pi (weekday - peak_weekday) / 7))
* load = Poisson(background_load * demand) + requests in flight on the server
* TTFT = (base_latency + queue_ms_per_request * load
          + prefill_ms_per_ktok * (tokens/1000) ** prefill_exponent)
         * latency multiplier (short or long context) * lognormal(ttft_noise)
* decode speed = output_tps * speed multiplier / (1 + decode_load_sensitivity * (demand - 1)),
  each inter-token gap lognormal(itl_jitter) around 1000 / speed
* P(error of kind k) = baseline_k * phase multiplier_k * demand ** demand_error_exponent
* P(wrong) = wrong_rate * wrong_multiplier + quantized * hardness(family, context)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from probes.simulator.scenario import (
    ERROR_KINDS,
    HARD_FAMILIES,
    LONG_CONTEXT_TOKENS,
    Phase,
    Provider,
    Rhythm,
)

__all__ = [
    "PhaseValues",
    "days_since",
    "decode_tps",
    "demand",
    "error_probabilities",
    "hardness",
    "phase_values",
    "prefill_ms",
    "rate_limits",
    "ttft_median_ms",
    "wrong_probability",
]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

_MULTIPLIERS = (
    "latency_short",
    "latency_long",
    "speed",
    "wrong_multiplier",
    "rate_limit",
    "fault_multiplier",
)


@dataclass(frozen=True, slots=True)
class PhaseValues:
    """Per-instant phase multipliers (ramps blended), one array element per instant."""

    index: Ints  # index into provider.phases
    latency_short: Floats
    latency_long: Floats
    speed: Floats
    wrong_multiplier: Floats
    rate_limit: Floats
    fault_multiplier: Floats
    quantized: Floats
    wrong_script_rate: Floats
    error_mult: dict[str, Floats]


def days_since(start: datetime, t_unix: Floats) -> Floats:
    """Scenario day offsets for Unix times."""
    return (np.asarray(t_unix, dtype=np.float64) - start.timestamp()) / 86_400.0


def _blend(values: Floats, idx: Ints, frac: Floats) -> Floats:
    previous = np.concatenate([values[:1], values[:-1]])
    return previous[idx] + (values[idx] - previous[idx]) * frac


def phase_values(provider: Provider, days: Floats, step_scale: float = 1.0) -> PhaseValues:
    """Phase multipliers at scenario days ``days``; before the first phase the first holds.

    ``step_scale`` scales each multiplier's distance from 1 (and ``quantized`` and the
    wrong-script excess from their baselines), so a benchmark can plant smaller steps.
    """
    phases = provider.phases
    starts = np.array([p.start_day for p in phases])
    ramps = np.array([p.ramp_days for p in phases])
    days = np.asarray(days, dtype=np.float64)
    idx = np.clip(np.searchsorted(starts, days, side="right") - 1, 0, None).astype(np.int64)
    safe = np.where(ramps[idx] > 0, ramps[idx], 1.0)
    frac = np.where(ramps[idx] > 0, np.clip((days - starts[idx]) / safe, 0.0, 1.0), 1.0)

    def column(get: float | list[float]) -> Floats:
        return _blend(np.asarray(get, dtype=np.float64), idx, frac)

    multipliers = {
        name: 1.0 + (column([getattr(p, name) for p in phases]) - 1.0) * step_scale
        for name in _MULTIPLIERS
    }
    base_script = provider.wrong_script_rate
    script = column([_script_rate(p, base_script) for p in phases])
    error_mult = {
        kind: 1.0 + (column([p.error_mult(kind) for p in phases]) - 1.0) * step_scale
        for kind in ERROR_KINDS
    }
    return PhaseValues(
        index=idx,
        quantized=column([p.quantized for p in phases]) * step_scale,
        wrong_script_rate=base_script + (script - base_script) * step_scale,
        error_mult=error_mult,
        **multipliers,
    )


def _script_rate(phase: Phase, baseline: float) -> float:
    return baseline if phase.wrong_script_rate is None else phase.wrong_script_rate


def demand(rhythm: Rhythm, t_unix: Floats, strength: float = 1.0) -> Floats:
    """Relative demand (mean about 1) on a 24 h and a 7 d wave; ``strength`` scales both."""
    t = np.asarray(t_unix, dtype=np.float64)
    hour = (t % 86_400.0) / 3_600.0
    weekday = (t / 86_400.0 + 3.0) % 7.0  # 1970-01-01 was a Thursday (weekday 3)
    daily = np.cos(2 * np.pi * (hour - rhythm.peak_hour_utc) / 24.0)
    weekly = np.cos(2 * np.pi * (weekday - rhythm.peak_weekday) / 7.0)
    return (1.0 + rhythm.daily_amplitude * strength * daily) * (
        1.0 + rhythm.weekly_amplitude * strength * weekly
    )


def error_probabilities(
    provider: Provider, rhythm: Rhythm, pv: PhaseValues, dem: Floats
) -> dict[str, Floats]:
    """Probability of each error kind per request; their sum is capped at 0.9."""
    pressure = np.power(np.maximum(dem, 0.0), rhythm.demand_error_exponent)
    probs = {
        kind: provider.errors.get(kind, 0.0) * pv.error_mult[kind] * pressure
        for kind in ERROR_KINDS
    }
    total = np.sum(list(probs.values()), axis=0)
    scale = np.where(total > 0.9, 0.9 / np.maximum(total, 1e-12), 1.0)
    return {kind: np.clip(p * scale, 0.0, 1.0) for kind, p in probs.items()}


def prefill_ms(provider: Provider, tokens: npt.ArrayLike) -> Floats:
    """Prefill time, super-linear in prompt tokens (attention and KV-cache pressure)."""
    ktok = np.asarray(tokens, dtype=np.float64) / 1_000.0
    return provider.prefill_ms_per_ktok * np.power(ktok, provider.prefill_exponent)


def ttft_median_ms(
    provider: Provider, pv: PhaseValues, tokens: npt.ArrayLike, load: npt.ArrayLike
) -> Floats:
    """TTFT before noise: fixed latency + queueing + prefill, times the phase multiplier."""
    count = np.asarray(tokens, dtype=np.float64)
    long = count >= LONG_CONTEXT_TOKENS
    multiplier = np.where(long, pv.latency_long, pv.latency_short)
    base = provider.base_latency_ms + provider.queue_ms_per_request * np.asarray(load)
    return (base + prefill_ms(provider, count)) * multiplier


def decode_tps(provider: Provider, pv: PhaseValues, dem: Floats) -> Floats:
    """Output tokens per second; slower under demand and in degraded phases."""
    load_factor = 1.0 + provider.decode_load_sensitivity * (np.asarray(dem) - 1.0)
    return np.maximum(provider.output_tps * pv.speed / np.maximum(load_factor, 0.1), 0.5)


def hardness(families: npt.ArrayLike, long: npt.ArrayLike) -> Floats:
    """How much a quantized model suffers on a family: 1 for multi-step arithmetic and
    retrieval (1.5 when the context is long), 0.2 for the rest."""
    fam = np.asarray(families)
    hard = np.isin(fam, HARD_FAMILIES)
    return np.where(hard, np.where(np.asarray(long), 1.5, 1.0), 0.2)


def wrong_probability(
    provider: Provider, pv: PhaseValues, families: npt.ArrayLike, long: npt.ArrayLike
) -> Floats:
    p = provider.wrong_rate * pv.wrong_multiplier + pv.quantized * hardness(families, long)
    return np.clip(p, 0.0, 1.0)


def rate_limits(provider: Provider, pv: PhaseValues) -> tuple[Ints, Ints]:
    """Advertised request and token limits (per minute), shrinking with the phase."""
    requests = np.maximum(np.round(provider.rate_limit_requests * pv.rate_limit), 1)
    tokens = np.maximum(np.round(provider.rate_limit_tokens * pv.rate_limit), 1)
    return requests.astype(np.int64), tokens.astype(np.int64)
