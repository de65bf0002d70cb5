"""The runner against the bundled simulator over real loopback HTTP, in both wire formats:
every task family end to end, every on-demand error and every fault mode."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import httpx
import pytest

from pipeline.config import ProbeConfig, ProviderConfig
from probes.errors import ERROR_CLASSES
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.simulator import SimulatorHandle
from probes.simulator.faults import FAULTS
from probes.simulator.plan import ON_DEMAND_ERRORS
from probes.sizing import CharsPerToken
from probes.tasks import FAMILIES

WIRES = {"nova": "openai", "sable": "anthropic", "kestrel": "openai"}


def _provider(sim: SimulatorHandle, name: str, key_env: str | None = None) -> ProviderConfig:
    spec = sim.scenario.provider(name)
    return ProviderConfig(
        name=name, format=spec.format, base_url=sim.provider_url(name), model=spec.model,
        api_key_env=key_env, preset="simulator", price_input_per_mtok=1.0,
        price_output_per_mtok=4.0,
    )  # fmt: skip


def _probe(task: str = "arithmetic", **kw: object) -> ProbeConfig:
    base = ProbeConfig(
        name=f"t-{task}", task=task, context_tokens=2_000, every_s=60.0, cron=None,
        providers=(), timeout_s=10.0, read_timeout_s=2.0,
    )  # fmt: skip
    return replace(base, **kw)  # type: ignore[arg-type]


def _run(
    provider: ProviderConfig, probe: ProbeConfig, n: int = 1, **kw: object
) -> list[ProbeResult]:
    async def go() -> list[ProbeResult]:
        async with httpx.AsyncClient() as client:
            return [
                await run_probe(provider, probe, client=client, seed=11 + i, **kw)  # type: ignore[arg-type]
                for i in range(n)
            ]

    return asyncio.run(go())


@pytest.mark.parametrize("name", list(WIRES))
@pytest.mark.parametrize("task", list(FAMILIES))
def test_every_family_end_to_end(simulator: SimulatorHandle, name: str, task: str) -> None:
    first, second = _run(_provider(simulator, name), _probe(task), n=2)
    for r in (first, second):
        assert r.error_class == "ok", r.error_detail
        assert r.score_strict == "correct", (r.response_text, r.expected_answer)
        assert r.wire_format == WIRES[name]
        assert r.task_version == FAMILIES[task].VERSION
        assert r.input_tokens and r.output_tokens and r.cost_usd
        marks = [r.headers_ms, r.ttft_ms, r.first_answer_ms, r.last_token_ms, r.total_ms]
        assert all(m is not None for m in marks)
        assert marks == sorted(marks)  # type: ignore[type-var]
        assert r.chunks and r.chunks > 1
        assert r.sanity_flags == []
        assert r.request_id
    assert second.connection_reused is True
    if FAMILIES[task].KIND == "long":
        assert first.context_target_tokens == 2_000


def test_rows_are_valid_for_the_warehouse(simulator: SimulatorHandle, warehouse: object) -> None:
    rows = [r.as_row() for r in _run(_provider(simulator, "sable"), _probe(), n=2)]
    assert warehouse.insert_rows("probe_results", rows, key="run_id") == 2  # type: ignore[attr-defined]
    headers = json.loads(rows[0]["response_headers"])
    assert "anthropic-ratelimit-requests-limit" in headers
    assert rows[0]["rl_requests_limit"] is not None


@pytest.mark.parametrize("name", list(WIRES))
@pytest.mark.parametrize("error", ON_DEMAND_ERRORS)
def test_on_demand_errors(simulator: SimulatorHandle, name: str, error: str) -> None:
    expected = {
        "rate_limited": {"rate_limited"},
        "unavailable": {"overloaded"},
        "overloaded": {"overloaded"},
        "stream_error": {"server_error", "overloaded"},
        "business_error": {"rate_limited"},
        "quota_exhausted": {"quota_exhausted"},
        "auth": {"auth"},
    }[error]
    (r,) = _run(_provider(simulator, name), _probe(), extra_headers={"x-sim-error": error})
    assert r.error_class in expected, (r.http_status, r.error_code, r.error_detail)
    assert r.score_strict is None


FAULT_CLASS = {
    "reset_before_headers": "connection_error",
    "reset_mid_stream": "connection_error",
    "stall": "stall",
    "slow_drip": "stall",
    "malformed_json": "malformed_stream",
    "no_done": "ok",
    "truncated": "malformed_stream",
    "html_502": "server_error",
    "wrong_content_type": "ok",
    "redirect": "bad_request",
    "huge_chunk": "ok",
    "keepalive_minute": "ok",
}


def test_fault_table_covers_the_simulator() -> None:
    assert set(FAULT_CLASS) == set(FAULTS)
    assert set(FAULT_CLASS.values()) <= set(ERROR_CLASSES)


@pytest.mark.parametrize("name", ["nova", "sable"])
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_modes(simulator: SimulatorHandle, name: str, fault: str) -> None:
    probe = _probe(read_timeout_s=0.4, timeout_s=5.0)
    (r,) = _run(_provider(simulator, name), probe, extra_headers={"x-sim-fault": fault})
    assert r.error_class == FAULT_CLASS[fault], r.error_detail
    if fault in ("stall", "slow_drip", "reset_mid_stream"):
        assert r.ttft_ms is not None and r.total_ms is not None  # partial timings kept
        assert r.total_ms < 3_000
    if fault == "redirect":
        assert "redirect" in (r.error_detail or "")


def test_keepalive_comments_do_not_extend_the_deadline(simulator: SimulatorHandle) -> None:
    probe = _probe(timeout_s=0.3, read_timeout_s=5.0)
    (r,) = _run(
        _provider(simulator, "nova"), probe, extra_headers={"x-sim-fault": "keepalive_minute"}
    )
    assert r.error_class == "timeout_first_token"
    assert r.http_status == 200 and r.ttft_ms is None
    # the comments go on for a minute: ending within seconds is the deadline's doing
    assert r.total_ms is not None and 250 < r.total_ms < 10_000


def test_connect_refused_is_a_row() -> None:
    provider = ProviderConfig(
        name="gone", format="openai", base_url="http://127.0.0.1:9/v1", model="m",
        api_key_env=None,
    )  # fmt: skip
    (r,) = _run(provider, _probe())
    assert r.error_class == "connection_error"
    assert r.http_status is None and r.response_headers is None


def test_api_key_never_reaches_the_row(
    simulator: SimulatorHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NERFWATCH_TEST_KEY", "sk-test-0123456789abcdef")
    for name in ("nova", "sable"):
        provider = _provider(simulator, name, key_env="NERFWATCH_TEST_KEY")
        for headers in ({}, {"x-sim-error": "auth"}):
            (r,) = _run(provider, _probe(), extra_headers=headers)
            assert "sk-test-0123456789abcdef" not in r.to_json()


def test_estimator_learns_from_usage(simulator: SimulatorHandle) -> None:
    estimator = CharsPerToken(4.0)
    provider = _provider(simulator, "nova")
    before = estimator.estimate("multi_needle")
    _run(provider, _probe("multi_needle", context_tokens=8_000), estimator=estimator)
    after = estimator.estimate("multi_needle")
    assert after != before
    (r,) = _run(provider, _probe("multi_needle", context_tokens=8_000), estimator=estimator)
    assert r.input_tokens is not None and abs(r.input_tokens - 8_000) / 8_000 < 0.1


NON_STREAMED_FAULT_CLASS = {
    **FAULT_CLASS,
    "stall": "timeout_first_token",  # silence before the headers
    "slow_drip": "timeout_first_token",  # the body never completes
    "no_done": "malformed_stream",  # half a JSON body
}


@pytest.mark.parametrize("name", ["nova", "sable"])
@pytest.mark.parametrize("fault", [None, *sorted(FAULTS)])
def test_non_streamed(simulator: SimulatorHandle, name: str, fault: str | None) -> None:
    probe = _probe(stream=False, read_timeout_s=0.4, timeout_s=1.5)
    headers = {"x-sim-fault": fault} if fault else {}
    (r,) = _run(_provider(simulator, name), probe, extra_headers=headers)
    assert r.streamed is False
    if fault is None:
        assert (r.error_class, r.score_strict) == ("ok", "correct")
        assert r.ttft_ms is not None and r.input_tokens
    else:
        assert r.error_class == NON_STREAMED_FAULT_CLASS[fault], r.error_detail
