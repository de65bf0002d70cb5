"""Synthetic probe history drawn from the scenario model, vectorized with numpy and polars.

``generate`` returns ``probe_results`` rows (``source = 'synthetic'``) for every scenario
provider x probe at the history cadence over a window ending now (or ``end``), using the
same phase multipliers, demand rhythm, error probabilities, latency and quality model as
the live server (``probes.simulator.model``). ``probes.simulator.truth`` gives the planted
ground truth; ``probes.simulator.store`` writes rows and truth to the warehouse.

Per row, with ``noise`` scaling every sigma:

* TTFT: the model's median x lognormal(ttft_noise); a ``heavy_tail`` share is multiplied
  by (1 + Pareto(tail_alpha)); an ``outliers`` share by U(5, 20).
* decode speed: the model's speed x lognormal(0.05); ITL p50/p95/max follow from the
  lognormal(itl_jitter) gap distribution and the token count.
* errors and faults: one roll per row over the scenario's kinds; the columns a probe
  would record for each come from ``probes.simulator.outcomes``.
* quality: wrong / format slip / correct as the live server rolls them; a
  ``fixed_prompt`` probe records its answer (1-10), flatter when quantized.
* gaps: Poisson(gaps_per_month) downtime windows shared by all providers drop rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
import polars as pl

from probes.simulator import model
from probes.simulator.history_columns import (
    finish_columns,
    outcome_table,
    rate_limit_frame,
)
from probes.simulator.scenario import (
    HistoryOptions,
    ProbeSpec,
    Provider,
    Scenario,
)
from probes.simulator.uuid7 import uuid7_batch

__all__ = ["Window", "check_options", "generate", "window"]

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]

_STALL_MS = 30_000.0  # a probe's read timeout: how long a stalled row lasts
_FIXED_WEIGHTS = np.array([0.01, 0.02, 0.06, 0.08, 0.1, 0.13, 0.38, 0.14, 0.05, 0.03])


@dataclass(frozen=True, slots=True)
class Window:
    """The history's time span and the scenario's day 0."""

    start: datetime
    end: datetime
    scenario_start: datetime


def window(scenario: Scenario, days: float, end: datetime | None = None) -> Window:
    """``days`` ending at ``end`` (default now); day 0 as the live server computes it.

    ``days`` must be a positive number whose start is a date, ``end`` before the year
    9999 (ValueError otherwise): NaN slipped past ``days <= 0`` and failed deep in
    timedelta.
    """
    if not (math.isfinite(days) and days > 0):
        raise ValueError(f"expected a number of days above zero, got {days}")
    end = end or datetime.now(UTC)
    if end.year == datetime.max.year:  # the draws run to the next midnight
        raise ValueError(f"end: expected a time before the year {end.year}, got {end}")
    try:
        start = end - timedelta(days=days)
        day0 = scenario.clock.start_at(end.date())
    except OverflowError:
        raise ValueError(
            f"a history of {days} days ending {end:%Y-%m-%d} (or the scenario's day 0) "
            "would start before year 1"
        ) from None
    return Window(start, end, day0)


def check_options(opts: HistoryOptions) -> None:
    """Raise ValueError naming the first option the CLI can override that is not usable:
    a NaN cadence or noise would otherwise write NaN rows or fail in numpy."""
    if not (math.isfinite(opts.cadence_minutes) and opts.cadence_minutes > 0):
        raise ValueError(
            f"cadence_minutes: expected a finite number above zero, got {opts.cadence_minutes}"
        )
    for name in ("noise", "step_scale"):
        value = getattr(opts, name)
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{name}: expected a finite number >= 0, got {value}")


def _drawn(win: Window) -> Window:
    """The whole UTC days around ``win``: the span the random draws are made over.

    Drawing over whole days and cutting at ``win`` makes the history a function of the
    day, not of the minute: two runs on the same day share every row they both cover.
    Drawn over ``win`` itself, every draw moved with the start, so a demo run 40 minutes
    after another got different noise everywhere and the analysis could date phases
    differently.
    """
    midnight = datetime(win.end.year, win.end.month, win.end.day, tzinfo=UTC)
    end = midnight + timedelta(days=1)
    whole_days = math.ceil((end - win.start) / timedelta(days=1))
    return Window(end - timedelta(days=whole_days), end, win.scenario_start)


def generate(
    scenario: Scenario,
    win: Window,
    *,
    seed: int | None = None,
    options: HistoryOptions | None = None,
) -> pl.DataFrame:
    """All synthetic rows for the window, sorted by time (ValueError for unusable options)."""
    opts = options or scenario.history
    check_options(opts)
    rng = np.random.default_rng(scenario.seed if seed is None else seed)
    drawn = _drawn(win)
    t0, t1 = drawn.start.timestamp(), drawn.end.timestamp()
    downtime = _gaps(opts, t0, t1, rng)
    frames = []
    for provider in scenario.providers:
        for k, probe in enumerate(scenario.probes):
            cadence = 60.0 * (probe.every_minutes or opts.cadence_minutes)
            offset = cadence * k / max(len(scenario.probes), 1)  # probes spread in a slot
            slots = np.arange(np.ceil(t0 / cadence) * cadence + offset, t1, cadence)
            t = slots + rng.uniform(0.0, opts.scheduler_jitter_s, slots.size)
            t = t[~_inside(t, downtime)]
            frames.append(_rows(scenario, provider, probe, t, win, opts, rng))
    rows = pl.concat(frames, how="vertical_relaxed")
    return rows.filter(pl.col("started_at").is_between(win.start, win.end, closed="left"))


def _gaps(opts: HistoryOptions, t0: float, t1: float, rng: np.random.Generator) -> Floats:
    months = (t1 - t0) / (30 * 86_400.0)
    count = int(rng.poisson(max(opts.gaps_per_month * months, 0.0)))
    starts = rng.uniform(t0, t1, count)
    lengths = rng.exponential(opts.gap_hours * 3_600.0, count)
    return np.stack([starts, starts + lengths], axis=1) if count else np.empty((0, 2))


def _inside(t: Floats, windows: Floats) -> Bools:
    out = np.zeros(t.shape, dtype=bool)
    for lo, hi in windows:
        out |= (t >= lo) & (t < hi)
    return out


def _lognormal(rng: np.random.Generator, sigma: float, n: int) -> Floats:
    return np.exp(sigma * rng.standard_normal(n))


def _rows(
    scenario: Scenario,
    provider: Provider,
    probe: ProbeSpec,
    t: Floats,
    win: Window,
    opts: HistoryOptions,
    rng: np.random.Generator,
) -> pl.DataFrame:
    n = t.size
    days = model.days_since(win.scenario_start, t)
    pv = model.phase_values(provider, days, opts.step_scale)
    rhythm = scenario.rhythm_of(provider)
    dem = model.demand(rhythm, t, opts.seasonality)
    load = rng.poisson(provider.background_load * dem)

    # usage
    input_tokens = np.round(probe.context_tokens * rng.uniform(0.97, 1.03, n)).astype(np.int64)
    reasoning = np.zeros(n, dtype=np.int64)
    if provider.reasoning != "none":
        reasoning = rng.poisson(provider.reasoning_tokens, n).astype(np.int64) + 1
    answer = np.maximum(rng.poisson(probe.answer_tokens, n), 1).astype(np.int64)
    output = np.minimum(reasoning + answer, probe.max_output_tokens)
    length_cut = reasoning + answer > probe.max_output_tokens

    # latency
    ttft = _ttft(provider, pv, input_tokens, load, opts, rng)
    tps = model.decode_tps(provider, pv, dem) * _lognormal(rng, 0.05 * opts.noise, n)
    mean_gap = 1_000.0 / tps
    sigma = provider.itl_jitter * opts.noise
    base = np.exp(-(sigma**2) / 2)
    gaps = np.maximum(output - 1, 1)
    itl_p50 = mean_gap * base
    itl_p95 = mean_gap * np.exp(1.645 * sigma) * base
    itl_max = mean_gap * np.exp(sigma * np.sqrt(2 * np.log(gaps + 1))) * base
    decode = (output - 1) * mean_gap
    headers = np.minimum(ttft, provider.base_latency_ms * 0.3 * _lognormal(rng, 0.2, n))

    # errors, then faults on the rows without an error
    table = outcome_table(provider, rhythm, pv, dem, rng, n)
    ttft = ttft + np.where(table.keepalive, scenario.fault_timing.keepalive_s * 1_000.0, 0.0)

    # quality (rows that got an answer): 0 correct, 1 wrong, 2 unparseable (format slip)
    family = probe.task_family
    long = probe.context_class == "long"
    p_wrong = model.wrong_probability(provider, pv, np.full(n, family), np.full(n, long))
    roll = rng.random(n)
    strict = np.where(roll >= p_wrong, 0, np.where(roll < 0.15 * p_wrong, 2, 1))
    wrong_script = rng.random(n) < pv.wrong_script_rate

    answered = table.answered
    partial = table.partial
    out_tokens = np.where(partial, np.maximum(output // 3, 1), output)
    has_ttft = answered | partial
    last = ttft + np.where(partial, decode / 3, decode)
    total = np.where(
        table.stalled,
        ttft + _STALL_MS,
        np.where(has_ttft, last + rng.uniform(0.5, 3.0, n), headers + rng.uniform(1.0, 5.0, n)),
    )
    class_idx = np.where(answered & length_cut, len(table.classes), table.idx)
    started_ms = np.round(t * 1_000.0).astype(np.int64)
    release_order = sorted(provider.releases, key=lambda r: r.day)
    model_idx = np.searchsorted(np.array([r.day for r in release_order]), days, side="right")
    raw = pl.DataFrame(
        {
            "t_ms": started_ms,
            "run_id": pl.Series(uuid7_batch(started_ms, rng)),
            "reported_model": _gather(
                [provider.model, *(r.model for r in release_order)], model_idx
            ),
            "seed": rng.integers(0, 2**31, n),
            "headers_ms": headers,
            "ttft_ms": ttft,
            "first_answer_ms": ttft + reasoning * mean_gap,
            "last_token_ms": last,
            "total_ms": total,
            "itl_p50_ms": itl_p50,
            "itl_p95_ms": itl_p95,
            "itl_max_ms": itl_max,
            "output_tokens_per_s": tps,
            "chunks": out_tokens,
            "connection_reused": rng.random(n) < 0.95,
            "input_tokens": input_tokens,
            "output_tokens": out_tokens,
            # Anthropic usage has no reasoning count (thinking is inside output_tokens)
            "reasoning_tokens": np.minimum(reasoning, out_tokens),
            "cost_usd": (
                input_tokens * provider.price_input_per_mtok
                + out_tokens * provider.price_output_per_mtok
            )
            / 1e6,
            "http_status": table.http_status,
            "error_class": _gather([*table.classes, "truncated"], class_idx),
            "error_code": table.error_code,
            "error_detail": table.detail,
            "finish_reason": _gather(["stop", "length"], length_cut.astype(np.int64)),
            "score_strict": _gather(["correct", "wrong", "unparseable"], strict),
            "score_lenient": _gather(["correct", "wrong", "correct"], strict),
            "fixed_answer": _fixed_answers(pv, rng, n),
            "truncated": length_cut & answered,
            "wrong_script": wrong_script & answered,
            "_answered": answered,
            "_ttft": has_ttft,
            "_status": table.http_status > 0,
            "_retry": table.kind_is("rate_limited"),
            "retry_draw": rng.integers(1, 31, n).astype(np.float64),
        }
    )
    limits = rate_limit_frame(provider, pv, dem, table, rng, n)
    return finish_columns(raw.hstack(limits), provider, probe)


def _ttft(
    provider: Provider,
    pv: model.PhaseValues,
    input_tokens: npt.NDArray[np.int64],
    load: npt.NDArray[np.int64],
    opts: HistoryOptions,
    rng: np.random.Generator,
) -> Floats:
    """Model median x lognormal noise, with a heavy-tailed share and rare outliers."""
    n = input_tokens.size
    ttft = model.ttft_median_ms(provider, pv, input_tokens, load)
    ttft = ttft * _lognormal(rng, provider.ttft_noise * opts.noise, n)
    tail = rng.random(n) < opts.heavy_tail
    ttft = np.where(tail, ttft * (1.0 + rng.pareto(opts.tail_alpha, n)), ttft)
    spike = rng.random(n) < opts.outliers
    return np.where(spike, ttft * rng.uniform(5.0, 20.0, n), ttft)


def _gather(values: list[str], idx: npt.NDArray[np.int64]) -> pl.Series:
    """Strings by index: a small table gathered by an integer array (no per-row Python)."""
    return pl.Series(values, dtype=pl.String).gather(pl.Series(idx, dtype=pl.UInt32))


def _fixed_answers(
    pv: model.PhaseValues, rng: np.random.Generator, n: int
) -> npt.NDArray[np.int64]:
    """Answers 1-10 to the fixed prompt: peaked at 7, flatter as the model is quantized."""
    flat = np.clip(pv.quantized * 3.0, 0.0, 1.0)
    u = rng.random(n)
    peaked = np.searchsorted(np.cumsum(_FIXED_WEIGHTS), u * _FIXED_WEIGHTS.sum()) + 1
    uniform = rng.integers(1, 11, n)
    return np.where(rng.random(n) < flat, uniform, peaked)
