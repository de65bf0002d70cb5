"""A stop because prompt and output filled the context window is ``context_full``; a stop
at the output limit stays ``truncated``. Replayed over real loopback HTTP."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from pipeline.config import ProbeConfig, ProviderConfig
from probes.result import ProbeResult
from probes.runner import run_probe
from tests.support.loopback import Reply, serving

MAX_OUTPUT = 512


def _openai_stream(prompt_tokens: int, completion_tokens: int) -> str:
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"content": "Let me count the"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
        {"choices": [], "usage": {
            "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
        }},
    ]  # fmt: skip
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def _anthropic_stream(stop_reason: str, output_tokens: int) -> str:
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {
            "id": "m", "model": "m", "usage": {"input_tokens": 199_800, "output_tokens": 1}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "Let me count the"}}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason},
                           "usage": {"output_tokens": output_tokens}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


def _replay(body: str, *, wire: str = "openai", max_context: int = 128_000) -> ProbeResult:
    reply = Reply(body=body.encode(), headers={"content-type": "text/event-stream"})
    with serving(lambda _n, _reused: reply) as srv:
        provider = ProviderConfig(
            name="p", format=wire, base_url=f"http://127.0.0.1:{srv.port}/v1", model="m",
            api_key_env=None, preset=wire, max_context=max_context,
        )  # fmt: skip
        probe = ProbeConfig(
            name="t", task="arithmetic", context_tokens=1_000, every_s=60.0, cron=None,
            providers=("p",), timeout_s=10.0, read_timeout_s=5.0, max_output_tokens=MAX_OUTPUT,
        )  # fmt: skip

        async def go() -> ProbeResult:
            async with httpx.AsyncClient() as client:
                return await run_probe(provider, probe, client=client, seed=9)

        return asyncio.run(go())


@pytest.mark.parametrize(
    ("prompt_tokens", "completion_tokens", "max_context", "expected"),
    [
        (8_000, 192, 8_192, "context_full"),  # llama.cpp n_ctx 8192: prompt + output == window
        (8_000, 192, 128_000, "context_full"),  # window not configured: stopped short of 512
        (150, MAX_OUTPUT, 128_000, "truncated"),  # used the whole output budget
        (7_680, MAX_OUTPUT, 8_192, "context_full"),  # both limits met: the window ended it
    ],
)
def test_length_finish_is_told_apart(
    prompt_tokens: int, completion_tokens: int, max_context: int, expected: str
) -> None:
    result = _replay(_openai_stream(prompt_tokens, completion_tokens), max_context=max_context)
    assert result.finish_reason == "length"
    assert result.error_class == expected, result.error_detail
    assert expected in result.sanity_flags
    other = {"truncated", "context_full"} - {expected}
    assert not other & set(result.sanity_flags)
    assert result.score_strict is not None  # a stopped answer is still scored


def test_context_full_detail_names_the_token_counts() -> None:
    result = _replay(_openai_stream(8_000, 192), max_context=8_192)
    assert result.error_detail == (
        "finish_reason=length: prompt 8000 + output 192 tokens filled the context"
    )


@pytest.mark.parametrize(
    ("stop_reason", "output_tokens", "expected"),
    [("model_context_window_exceeded", 200, "context_full"), ("max_tokens", 4, "truncated")],
)
def test_anthropic_names_the_cause(stop_reason: str, output_tokens: int, expected: str) -> None:
    result = _replay(_anthropic_stream(stop_reason, output_tokens), wire="anthropic")
    assert result.error_class == expected, result.error_detail
    assert expected in result.sanity_flags
