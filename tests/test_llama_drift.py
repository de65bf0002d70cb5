"""A quantized model behind the same name, caught by border-input tracking on llama.cpp.

The tiny random-weight model is served at f16, border inputs are discovered and a reference
is stored; then the same weights, quantized to q4_0 by llama-quantize, are served on the same
port under the same model name ("tiny"). llama-server is deterministic at temperature 0 on
one slot, so the probes sample at a low temperature with a seed per call (see
``pipeline.analysis.border_inputs``). q8_0 moves the tiny model's logits by about 0.005,
too little for a 0.03 temperature; q4_0 moves them by about 0.05.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from pipeline.analysis.logprob_tracking import logprob_test
from pipeline.config import ProviderConfig
from pipeline.drift.baseline import Baseline, DriftSettings, baseline_path, load, save
from pipeline.drift.check import check_baseline
from pipeline.drift.collect import discover, logprob_window, sample_day
from tests.support.llama_server import LlamaServer, start_llama_server, stop
from tests.support.quantized import quantize
from tests.support.tiny_model import N_CTX, write_tiny_model

pytestmark = [pytest.mark.llama, pytest.mark.slow]

SETTINGS = DriftSettings(
    candidates=40, discovery_calls=3, inputs=8, reference_calls=40, per_input=10,
    temperature=0.03,
)  # fmt: skip
FIRST_DAY = date(2026, 3, 2)
UNCHANGED_DAYS = 4  # f16 days before the swap
SWAPPED_DAYS = 3  # the rule needs 3 out days in a row


@dataclass(frozen=True, slots=True)
class Weights:
    folder: Path
    f16: Path
    q4_0: Path
    q8_0: Path


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> Weights:
    folder = tmp_path_factory.mktemp("drift-weights")
    source = write_tiny_model(folder / "tiny-f32.gguf")
    return Weights(
        folder,
        quantize(source, folder / "tiny-f16.gguf", "F16"),
        quantize(source, folder / "tiny-q4_0.gguf", "Q4_0"),
        quantize(source, folder / "tiny-q8_0.gguf", "Q8_0"),
    )


@pytest.fixture
def serve(weights: Weights) -> Iterator[list[LlamaServer]]:
    """Servers started by the test; all stopped at its end."""
    started: list[LlamaServer] = []
    yield started
    for server in started:
        if server.process.poll() is None:
            stop(server)


def _provider(port: int) -> ProviderConfig:
    return ProviderConfig(
        name="llama", format="openai", base_url=f"http://127.0.0.1:{port}/v1", model="tiny",
        api_key_env=None, preset="llamacpp", max_context=N_CTX,
    )  # fmt: skip


def _start(weights: Weights, started: list[LlamaServer], model: Path, port: int | None = None):
    server = start_llama_server(weights.folder, model, alias="tiny", port=port)
    started.append(server)
    return server


def _days(provider: ProviderConfig, baseline: Baseline, first: date, count: int) -> None:
    async def go() -> None:
        async with httpx.AsyncClient() as client:
            for i in range(count):
                baseline.add_day(await sample_day(provider, client, baseline, first + timedelta(i)))

    asyncio.run(go())


def _discover(provider: ProviderConfig) -> Baseline:
    async def go() -> Baseline:
        async with httpx.AsyncClient() as client:
            accepted = datetime(2026, 3, 1, tzinfo=UTC)
            return await discover(provider, client, SETTINGS, accepted_at=accepted)

    return asyncio.run(go())


def test_a_q4_0_swap_behind_the_same_name_is_flagged_and_f16_is_not(
    weights: Weights, serve: list[LlamaServer], tmp_path: Path
) -> None:
    f16 = _start(weights, serve, weights.f16)
    provider = _provider(f16.port)
    baseline = _discover(provider)
    assert len(baseline.reference) == SETTINGS.inputs, baseline.discovery
    path = baseline_path(tmp_path, "llama", "tiny")
    save(baseline, path)

    _days(provider, baseline, FIRST_DAY, UNCHANGED_DAYS)
    unchanged = load(path)  # the same stored reference, for the unchanged arm
    unchanged.days = list(baseline.days)
    swap_day = FIRST_DAY + timedelta(UNCHANGED_DAYS)
    _days(provider, unchanged, swap_day, SWAPPED_DAYS)  # f16 goes on serving

    stop(f16)
    _start(weights, serve, weights.q4_0, port=f16.port)  # same port, same name
    _days(provider, baseline, swap_day, SWAPPED_DAYS)
    save(baseline, path)

    swapped = check_baseline(load(path))
    still = check_baseline(unchanged)
    report = [(d, round(v.distance, 3), v.out) for d, v in swapped.days]
    null_report = [(d, round(v.distance, 3), v.out) for d, v in still.days]
    assert swapped.alarm_days == [(swap_day + timedelta(SWAPPED_DAYS - 1)).isoformat()], report
    assert still.alarm_days == [], null_report
    assert not any(v.out for _, v in still.days), null_report
    assert all(d.calls == SETTINGS.daily_calls and d.failed == 0 for d in baseline.days)
    assert {m for d in baseline.days for m in d.reported_models} == {"tiny"}
    # Same vocabulary and template: quantization leaves the provider's token counts as they were
    assert baseline.input_tokens and all(baseline.input_tokens.values())
    assert not any(baseline.token_count_changes(d) for d in baseline.days)
    assert swapped.false_alarms.upper95 < 0.01, swapped.false_alarms
    print("swap:", report, "\nunchanged:", null_report, "\nnull:", swapped.null)
    print("false alarms:", swapped.false_alarms)


LT_CALLS = 30


def _window(port: int) -> list[dict[str, float]]:
    async def go() -> list[dict[str, float]]:
        async with httpx.AsyncClient() as client:
            return await logprob_window(_provider(port), client, LT_CALLS, top_k=10)

    return asyncio.run(go())


def test_logprob_tracking_flags_q4_0_and_q8_0_but_not_a_restarted_f16(
    weights: Weights, serve: list[LlamaServer]
) -> None:
    """Each window is a fresh server process on the same port and name."""
    windows: dict[str, list[dict[str, float]]] = {}
    port: int | None = None
    for name, model in [
        ("f16", weights.f16), ("f16 again", weights.f16), ("q8_0", weights.q8_0),
        ("q4_0", weights.q4_0),
    ]:  # fmt: skip
        server = _start(weights, serve, model, port=port)
        port = server.port
        windows[name] = _window(port)
        stop(server)
    assert all(len(w) == LT_CALLS for w in windows.values()), {
        k: len(w) for k, w in windows.items()
    }
    assert all(len(row) >= 9 for w in windows.values() for row in w)
    tests = {
        name: logprob_test(windows["f16"], windows[name], seed=7, permutations=999)
        for name in ("f16 again", "q8_0", "q4_0")
    }
    print({name: (round(t.statistic, 4), t.p_value) for name, t in tests.items()})
    assert tests["f16 again"].p_value > 0.05, tests["f16 again"]
    assert tests["q8_0"].p_value < 0.01, tests["q8_0"]
    assert tests["q4_0"].p_value < 0.01, tests["q4_0"]
    assert tests["q4_0"].statistic > tests["q8_0"].statistic
