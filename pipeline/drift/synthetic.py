"""Synthetic drift baselines from the simulator's scenario, as the demo's history has rows.

The same first-token model the simulator serves (``probes.simulator.first_token``), at each
day's ``quantized`` phase value, drawn in-process: a baseline accepted on one day and a
sample on each following day, at temperature 0 (the model's serving noise makes the border
inputs). Nothing is sent over HTTP, so months of daily samples cost milliseconds.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import numpy as np

from pipeline.analysis.border_inputs import (
    candidate_prompts,
    counts,
    day_distance,
    select_border_inputs,
)
from pipeline.drift.baseline import Baseline, DaySample, DriftSettings, baseline_path, save
from probes.simulator import model
from probes.simulator.first_token import Sampling, first_token, greedy_tokens
from probes.simulator.scenario import Provider, Scenario

__all__ = ["DEMO_SETTINGS", "synthetic_baseline", "write_demo_baselines"]

DEMO_SETTINGS = DriftSettings(inputs=20, per_input=10, logprob_calls=50)


def _quantized(provider: Provider, scenario_start: datetime, day: date) -> float:
    noon = datetime.combine(day, time(12), tzinfo=UTC).timestamp()
    days = model.days_since(scenario_start, np.array([noon]))
    return float(model.phase_values(provider, days).quantized[0])


def _logprobs(q: float, calls: int, rng: np.random.Generator) -> list[dict[str, float]]:
    asked = Sampling(temperature=0.0, top_logprobs=5)
    return [dict(first_token("x", q, asked, rng)[1]) for _ in range(calls)]


def synthetic_baseline(
    provider: Provider,
    scenario_start: datetime,
    *,
    accepted: date,
    days: list[date],
    settings: DriftSettings = DEMO_SETTINGS,
    seed: int = 0,
) -> Baseline:
    """Discovery and reference on ``accepted``, then one sample per day of ``days``."""
    rng = np.random.default_rng(seed)
    q0 = _quantized(provider, scenario_start, accepted)
    calls = settings.discovery_calls
    found = {p: greedy_tokens(p, q0, calls, rng) for p in candidate_prompts(settings.candidates)}
    reference = {
        p: counts(greedy_tokens(p, q0, settings.reference_calls, rng))
        for p in select_border_inputs(found, settings.inputs)
    }
    baseline = Baseline(
        provider=provider.name, model=provider.model,
        accepted_at=datetime.combine(accepted, time(), tzinfo=UTC).isoformat(),
        settings=settings, discovery=found, reference=reference,
        logprob_reference=_logprobs(q0, settings.logprob_calls, rng),
    )  # fmt: skip
    for day in days:
        q = _quantized(provider, scenario_start, day)
        sampled = {p: counts(greedy_tokens(p, q, settings.per_input, rng)) for p in reference}
        sample = DaySample(
            day=day.isoformat(), distance=day_distance(reference, sampled),
            calls=len(reference) * settings.per_input, failed=0, counts=sampled,
            logprobs=_logprobs(q, settings.logprob_calls, rng),
        )  # fmt: skip
        baseline.add_day(sample)
    return baseline


def write_demo_baselines(
    scenario: Scenario, folder: Path, today: date, *, days: int = 21
) -> list[Path]:
    """For each provider: a baseline accepted on the last day before the ``days``-day
    window when its model was not quantized, and a sample on each day of the window."""
    start = scenario.clock.start_at(today)
    window = [today - timedelta(days=days - 1 - i) for i in range(days)]
    written = []
    for k, provider in enumerate(scenario.providers):
        accepted = window[0] - timedelta(days=1)
        while _quantized(provider, start, accepted) > 0 and accepted > start.date():
            accepted -= timedelta(days=1)
        baseline = synthetic_baseline(
            provider, start, accepted=accepted, days=window, seed=scenario.seed + k
        )
        path = baseline_path(folder, provider.name, provider.model)
        save(baseline, path)
        written.append(path)
    return written
