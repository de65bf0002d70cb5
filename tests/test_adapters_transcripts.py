"""Replayed wire transcripts of eleven providers (tests/fixtures/transcripts/*.toml) through
the whole runner, over httpx.MockTransport, bodies delivered in small uneven pieces."""

from __future__ import annotations

import asyncio
import json
import re
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.config import ProbeConfig, ProviderConfig
from probes.result import ProbeResult
from probes.runner import run_probe

HERE = Path(__file__).parent / "fixtures" / "transcripts"
PROVIDERS = sorted(p.stem for p in HERE.glob("*.toml"))


def _load(name: str) -> dict[str, Any]:
    return tomllib.loads((HERE / f"{name}.toml").read_text())


def _cases() -> list[Any]:
    out = []
    for name in PROVIDERS:
        for case in _load(name).get("case", []):
            out.append(pytest.param(name, case, id=f"{name}: {case['name']}"))
    return out


def _errors() -> list[Any]:
    out = []
    for name in PROVIDERS:
        for i, (status, body, cls) in enumerate(_load(name).get("errors", [])):
            out.append(pytest.param(name, status, body, cls, id=f"{name}-{status}-{i}-{cls}"))
    return out


async def _pieces(body: bytes, size: int) -> AsyncIterator[bytes]:
    for i in range(0, len(body), size):
        yield body[i : i + size]


def _replay(
    provider_file: str, status: int, headers: dict[str, str], body: str, *, stream: bool = True
) -> tuple[ProbeResult, list[httpx.Request]]:
    meta = _load(provider_file)
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, headers=headers, content=_pieces(body.encode(), 7))

    provider = ProviderConfig(
        name=provider_file,
        format=meta["format"],
        base_url="https://api.example.test/v1",
        model=meta.get("model", "test-model"),
        api_key_env=None,
        preset=meta["preset"],
        price_input_per_mtok=1.0,
        price_output_per_mtok=2.0,
    )
    probe = ProbeConfig(
        name="t", task="arithmetic", context_tokens=1_000, every_s=60.0, cron=None,
        providers=(provider_file,), stream=stream, timeout_s=10.0, read_timeout_s=5.0,
    )  # fmt: skip

    async def go() -> ProbeResult:
        transport = httpx.MockTransport(handler)
        async with httpx.AsyncClient(transport=transport) as client:
            return await run_probe(provider, probe, client=client, seed=1)

    return asyncio.run(go()), seen


def test_every_provider_has_transcripts() -> None:
    assert set(PROVIDERS) >= {
        "openai", "anthropic", "zai", "minimax", "deepseek", "moonshot", "qwen", "gemini",
        "openrouter", "vllm", "ollama",
    }  # fmt: skip


@pytest.mark.parametrize(("provider_file", "case"), _cases())
def test_transcript(provider_file: str, case: dict[str, Any]) -> None:
    result, requests = _replay(
        provider_file,
        case.get("status", 200),
        case.get("headers", {"content-type": "text/event-stream"}),
        case["body"],
        stream=case.get("stream", True),
    )
    expect = dict(case["expect"])
    flags = expect.pop("flags", None)
    missing_header = expect.pop("no_header", None)
    reasoning_contains = expect.pop("reasoning_contains", None)
    for key, value in expect.items():
        actual = getattr(result, key)
        if isinstance(value, float):
            assert actual == pytest.approx(value, abs=1.0 if key.endswith("reset_s") else 1e-6)
        else:
            assert actual == value, f"{key}: {actual!r} != {value!r} ({result.error_detail})"
    if flags is not None:
        assert result.sanity_flags == flags
    if missing_header:
        assert missing_header not in (result.response_headers or {})
    if reasoning_contains:
        assert reasoning_contains in (result.reasoning_text or "")
    assert result.run_status == "done" and result.error_class is not None
    assert len(requests) == 1  # no retries


@pytest.mark.parametrize(("provider_file", "status", "body", "error_class"), _errors())
def test_documented_error(provider_file: str, status: int, body: str, error_class: str) -> None:
    result, _ = _replay(provider_file, status, {"content-type": "application/json"}, body)
    assert result.error_class == error_class, result.error_detail
    assert result.http_status == status
    assert result.score_strict is None
    if body.lstrip().startswith(("{", "[")) and '"code"' in body:
        assert result.error_code is not None


def test_request_shape_follows_preset() -> None:
    body = 'data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}\n\n'
    _, openai_requests = _replay("openai", 200, {}, body)
    sent = json.loads(openai_requests[0].content)
    assert sent["stream_options"] == {"include_usage": True}
    assert "max_completion_tokens" in sent
    assert re.match(r"[0-9a-f]{32} family=", sent["messages"][0]["content"])
    _, minimax_requests = _replay("minimax", 200, {}, body)
    assert "stream_options" not in json.loads(minimax_requests[0].content)
    anthropic_body = 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    _, anthropic_requests = _replay("anthropic", 200, {}, anthropic_body)
    request = anthropic_requests[0]
    assert request.url.path.endswith("/v1/messages")
    assert request.headers["anthropic-version"] == "2023-06-01"
