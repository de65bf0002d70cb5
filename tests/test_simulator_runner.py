"""The probe engine against the simulator: live rows classify every error and fault the
way synthetic history records them (probes.simulator.outcomes), in both wire formats."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from pipeline.config import ProbeConfig, ProviderConfig
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.simulator import FAULTS, SimulatorHandle
from probes.simulator.outcomes import FAULT_OUTCOMES, error_outcomes
from probes.simulator.scenario import ERROR_KINDS

PROBE = ProbeConfig(
    name="arith",
    task="arithmetic",
    context_tokens=1_000,
    every_s=60.0,
    cron=None,
    providers=("nova", "sable"),
    timeout_s=5.0,
    read_timeout_s=0.5,
)


def _provider(sim: SimulatorHandle, name: str) -> ProviderConfig:
    p = sim.scenario.provider(name)
    return ProviderConfig(
        name=name,
        format=p.format,
        base_url=sim.provider_url(name),
        model=p.model,
        api_key_env=None,
        vendor=p.vendor,
        preset="simulator",
    )


def _run(sim: SimulatorHandle, name: str, headers: dict[str, str]) -> ProbeResult:
    async def go() -> ProbeResult:
        async with httpx.AsyncClient() as client:
            return await run_probe(
                _provider(sim, name), PROBE, client=client, seed=3, extra_headers=headers
            )

    return asyncio.run(go())


@pytest.mark.parametrize("name", ["nova", "sable"])
def test_clean_probe_is_correct_with_usage_and_limits(
    simulator: SimulatorHandle, name: str
) -> None:
    row = _run(simulator, name, {})
    assert row.error_class == "ok" and row.score_strict == "correct"
    assert row.output_tokens and row.input_tokens and row.ttft_ms is not None
    assert row.rl_requests_limit is not None and row.request_id


@pytest.mark.parametrize("name", ["nova", "sable"])
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_faults_classify_as_history_records_them(
    simulator: SimulatorHandle, name: str, fault: str
) -> None:
    row = _run(simulator, name, {"x-sim-fault": fault})
    assert row.error_class == FAULT_OUTCOMES[fault].error_class


@pytest.mark.parametrize("name", ["nova", "sable"])
@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_errors_classify_as_history_records_them(
    simulator: SimulatorHandle, name: str, kind: str
) -> None:
    row = _run(simulator, name, {"x-sim-error": kind})
    expected = error_outcomes(simulator.scenario.provider(name))[kind]
    assert (row.error_class, row.http_status) == (expected.error_class, expected.http_status)
    assert row.error_code == expected.error_code
