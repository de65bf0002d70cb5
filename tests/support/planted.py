"""A small planted-phase history generator for analysis tests and benchmarks.

Probe rows (the probe_results columns analysis reads) for a few providers at a fixed cadence:
log-normal TTFT with a daily and weekly rhythm, heavy tails, outliers, gaps where the prober
was down, and planted phases that multiply latency, output speed (noisy; unchanged unless a
phase sets it), errors and wrong answers. The truth (phase onsets, releases) is returned
with the rows so accuracy can be scored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl

__all__ = ["PlantedPhase", "PlantedProvider", "generate"]

START = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday
_SPEED_NOISE = 0.05  # sd of log output tokens/s per probe (decoding varies little)


@dataclass(frozen=True)
class PlantedPhase:
    start_day: float
    end_day: float
    short: float = 1.3  # TTFT multiplier, short context
    long: float = 1.3  # TTFT multiplier, long context
    errors: float = 1.0  # error-rate multiplier
    accuracy_drop: float = 0.0
    ramp_days: float = 0.0  # linear blend from no change to the full multipliers
    speed: float = 1.0  # output tokens/s multiplier (below 1 = slower decoding)


@dataclass(frozen=True)
class PlantedProvider:
    name: str
    vendor: str
    phases: list[PlantedPhase] = field(default_factory=list)
    releases: list[float] = field(default_factory=list)  # days
    base_ms: float = 400.0
    noise: float = 0.25  # sd of log TTFT per probe
    heavy_tail: float = 0.01  # share of probes with a Pareto-multiplied TTFT
    outliers: float = 0.002  # share of probes 10x slower
    seasonality: float = 0.3  # amplitude of the daily rhythm on the log scale
    gaps: int = 2  # prober outages (6-30 h each)
    error_rate: float = 0.01
    accuracy: float = 0.95
    requests_limit: int = 500


def generate(
    providers: list[PlantedProvider], days: int, cadence_min: float = 5.0, seed: int = 0
) -> pl.DataFrame:
    """Probe rows for every provider, short and long probe each cadence tick."""
    rng = np.random.default_rng(seed)
    # Its own stream, so adding output speed left every other draw (and the benchmarks'
    # pinned histories) as it was.
    speed_rng = np.random.default_rng((seed, 1))
    frames = []
    n = int(days * 24 * 60 / cadence_min)
    minutes = np.arange(n) * cadence_min
    day = minutes / 1440.0
    hour = (minutes / 60.0) % 24
    weekday = np.floor(day) % 7
    for p in providers:
        keep = np.ones(n, dtype=bool)
        for _ in range(p.gaps):
            g0 = rng.uniform(0, n)
            keep[int(g0) : int(g0 + rng.uniform(6, 30) * 60 / cadence_min)] = False
        season = p.seasonality * (np.sin(2 * np.pi * (hour - 9) / 24) + 0.4 * (weekday < 5) - 0.2)
        for ctx, ctx_mult in (("short", 1.0), ("long", 4.0)):
            mult = np.ones(n)
            speed = np.ones(n)
            err = np.full(n, p.error_rate)
            acc = np.full(n, p.accuracy)
            for ph in p.phases:
                sel = (day >= ph.start_day) & (day < ph.end_day)
                m = ph.short if ctx == "short" else ph.long
                if ph.ramp_days > 0:
                    frac = np.clip((day[sel] - ph.start_day) / ph.ramp_days, 0.0, 1.0)
                    mult[sel] *= np.exp(frac * np.log(m))
                    speed[sel] *= np.exp(frac * np.log(ph.speed))
                    err[sel] *= 1.0 + frac * (ph.errors - 1.0)
                    acc[sel] -= frac * ph.accuracy_drop
                else:
                    mult[sel] *= m
                    speed[sel] *= ph.speed
                    err[sel] *= ph.errors
                    acc[sel] -= ph.accuracy_drop
            logt = np.log(p.base_ms * ctx_mult) + season + np.log(mult)
            logt += rng.normal(0, p.noise, n)
            tail = rng.random(n) < p.heavy_tail
            logt[tail] += np.log(rng.pareto(1.5, tail.sum()) + 1)
            out = rng.random(n) < p.outliers
            logt[out] += np.log(10)
            ttft = np.exp(logt)
            tps = 80.0 * speed * np.exp(speed_rng.normal(0, _SPEED_NOISE, n))
            failed = rng.random(n) < np.clip(err, 0, 1)
            classes = np.where(rng.random(n) < 0.5, "overloaded", "rate_limited")
            correct = rng.random(n) < np.clip(acc, 0, 1)
            started = [START + timedelta(minutes=float(m)) for m in minutes[keep]]
            k = np.flatnonzero(keep)
            frames.append(
                pl.DataFrame(
                    {
                        "run_id": [f"{p.name}-{ctx}-{i}" for i in k],
                        "started_at": started,
                        "provider": p.name,
                        "vendor": p.vendor,
                        "model": f"{p.name}-model",
                        "probe": f"{ctx}-probe",
                        "task_family": "arithmetic" if ctx == "short" else "kv_lookup",
                        "context_class": ctx,
                        "ttft_ms": np.where(failed, np.nan, ttft)[k],
                        "total_ms": np.where(failed, np.nan, ttft * 1.5)[k],
                        "output_tokens_per_s": np.where(failed, np.nan, tps)[k],
                        "error_class": np.where(failed, classes, "ok")[k],
                        "score_strict": pl.Series(
                            [
                                None if f else ("correct" if c else "wrong")
                                for f, c in zip(failed[k], correct[k], strict=True)
                            ],
                            dtype=pl.Utf8,
                        ),
                        "rl_requests_limit": np.full(k.size, p.requests_limit),
                        "rl_requests_remaining": np.full(k.size, p.requests_limit // 2),
                    },
                    schema_overrides={"started_at": pl.Datetime("us", "UTC")},
                ).with_columns(
                    pl.lit("synthetic").alias("source"),
                    pl.col("ttft_ms").fill_nan(None),
                    pl.col("total_ms").fill_nan(None),
                    pl.col("output_tokens_per_s").fill_nan(None),
                )
            )
    return pl.concat(frames)


def releases_frame(providers: list[PlantedProvider]) -> pl.DataFrame:
    """The planted releases as rows of the releases table (origin synthetic)."""
    rows = [
        {
            "vendor": p.vendor,
            "model": f"{p.name}-next-{i}",
            "release_date": (START + timedelta(days=d)).date(),
            "origin": "synthetic",
        }
        for p in providers
        for i, d in enumerate(p.releases)
    ]
    return pl.DataFrame(
        rows,
        schema={"vendor": pl.Utf8, "model": pl.Utf8, "release_date": pl.Date, "origin": pl.Utf8},
    )
