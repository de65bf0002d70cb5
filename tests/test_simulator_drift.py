"""The simulator's quantized phase moves first tokens and logprobs; drift tracking sees it."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta

import httpx
import numpy as np
import pytest

from pipeline.config import ProviderConfig
from pipeline.drift.baseline import Baseline, DriftSettings
from pipeline.drift.check import check_baseline
from pipeline.drift.collect import discover, sample_day
from probes.simulator import SimulatorHandle
from probes.simulator.first_token import Sampling, first_token, logits, sampling_of


def test_logits_are_the_prompts_own_and_quantization_moves_them() -> None:
    assert np.array_equal(logits("a", 0.0), logits("a", 0.0))
    assert not np.array_equal(logits("a", 0.0), logits("b", 0.0))
    moved = np.abs(logits("a", 0.15) - logits("a", 0.0))
    assert 0.05 < moved.mean() < 1.0


def test_temperature_0_still_varies_on_near_ties_through_serving_noise() -> None:
    rng = np.random.default_rng(0)
    greedy = Sampling(temperature=0.0, top_logprobs=3)
    varied = [
        prompt
        for prompt in (f"p{i}" for i in range(60))
        if len({first_token(prompt, 0.0, greedy, rng)[0] for _ in range(10)}) > 1
    ]
    assert 1 <= len(varied) <= 30, varied  # a few border inputs, most prompts certain
    _, top = first_token("p0", 0.0, greedy, rng)
    assert [lp for _, lp in top] == sorted((lp for _, lp in top), reverse=True)
    assert len(top) == 3 and all(lp < 0 for _, lp in top)


def test_sampling_fields_are_read_from_the_body() -> None:
    assert sampling_of({"temperature": 0, "seed": 7, "logprobs": True, "top_logprobs": 5}) == (
        Sampling(0.0, 7, 5)
    )
    assert sampling_of({"top_logprobs": 5, "seed": True}) == Sampling(1.0, None, 0)


def _provider(sim: SimulatorHandle, day: float) -> ProviderConfig:
    at = sim.state.start + timedelta(days=day, hours=3)
    return ProviderConfig(
        name="nova", format="openai", base_url=sim.provider_url("nova"), model="nova-chat",
        api_key_env=None, preset="simulator", extra_headers={"x-sim-at": at.isoformat()},
    )  # fmt: skip


@pytest.mark.slow
def test_the_quantized_phase_alarms_and_shows_in_logprobs(simulator: SimulatorHandle) -> None:
    """Temperature 0, as B3IT on a hosted endpoint: the serving noise makes border inputs."""
    major = next(p for p in simulator.scenario.provider("nova").phases if p.stage == "major")
    settings = DriftSettings(
        candidates=80, inputs=6, reference_calls=30, per_input=10, logprob_calls=12
    )
    first = date(2026, 3, 2)

    async def go() -> Baseline:
        async with httpx.AsyncClient() as client:
            stable = _provider(simulator, 10)
            accepted = datetime(2026, 3, 1, tzinfo=UTC)
            baseline = await discover(stable, client, settings, accepted_at=accepted)
            for i in range(7):
                day = 10 + i if i < 4 else major.start_day + major.ramp_days + i
                sample = await sample_day(
                    _provider(simulator, day), client, baseline, first + timedelta(i)
                )
                baseline.add_day(sample)
            return baseline

    baseline = asyncio.run(go())
    assert len(baseline.reference) == settings.inputs, baseline.discovery
    result = check_baseline(baseline)
    tvs = [round(v.distance, 2) for _, v in result.days]
    print("TV per day:", tvs, "logprob p:", [t.p_value for _, t in result.logprobs])
    assert result.alarm_days == ["2026-03-08"], tvs
    assert not any(v.out for _, v in result.days[:4]), tvs
    ps = [t.p_value for _, t in result.logprobs]
    assert all(p > 0.01 for p in ps[:4]) and all(p < 0.01 for p in ps[4:]), ps
    assert {m for d in baseline.days for m in d.reported_models} == {"nova-chat"}
