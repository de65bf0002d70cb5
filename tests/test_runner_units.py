"""The runner's small parts: rate-limit headers, header scrubbing, sanity flags, timing,
pricing and the chars-per-token estimator."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import httpx
import pytest

from pipeline.config import ProbeConfig, ProviderConfig
from probes.adapters.state import StreamState, ThinkSplitter
from probes.pricing import cost_usd
from probes.ratelimits import parse_duration_s, rate_limits, request_id, safe_headers
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.sanity import sanity_flags
from probes.sizing import CharsPerToken
from probes.timing import Timeline

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("6m0s", 360.0), ("12ms", 0.012), ("1h2m3.5s", 3723.5), ("7", 7.0), ("0.5", 0.5),
     ("soon", None), ("", None)],
)  # fmt: skip
def test_go_durations(text: str, seconds: float | None) -> None:
    assert parse_duration_s(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_rate_limit_dialects() -> None:
    openai = rate_limits(
        {"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "-1",
         "x-ratelimit-limit-tokens_usage_based": "9000", "x-ratelimit-reset-tokens": "2s",
         "retry-after-ms": "1500"},
        NOW,
    )  # fmt: skip
    assert openai["rl_requests_limit"] == 500
    assert openai["rl_requests_remaining"] is None  # Azure's -1 means unknown
    assert openai["rl_tokens_limit"] == 9000
    assert openai["rl_tokens_reset_s"] == 2.0
    assert openai["retry_after_s"] == 1.5
    anthropic = rate_limits(
        {"anthropic-ratelimit-input-tokens-limit": "80000",
         "anthropic-ratelimit-requests-reset": "2026-11-20T12:00:30Z",
         "retry-after": "Fri, 20 Nov 2026 12:01:00 GMT"},
        NOW,
    )  # fmt: skip
    assert anthropic["rl_tokens_limit"] == 80000
    assert anthropic["rl_requests_reset_s"] == 30.0
    assert anthropic["retry_after_s"] == 60.0


def test_headers_never_keep_secrets() -> None:
    kept = safe_headers(
        {"Authorization": "Bearer sk-abc", "Set-Cookie": "a=b", "x-api-key": "k",
         "X-Goog-Api-Key": "g", "x-session-id": "s", "x-echo": "sk-live-1234567890",
         "x-ratelimit-remaining-tokens": "5", "Content-Type": "text/event-stream"}
    )  # fmt: skip
    assert kept == {"x-ratelimit-remaining-tokens": "5", "content-type": "text/event-stream"}
    assert request_id({"request-id": "req_1"}) == "req_1"


def test_sanity_flags() -> None:
    def flags(answer: str, **kw: object) -> list[str]:
        args: dict[str, object] = {
            "answer": answer, "prompt": "Add 2 and 2.", "finish_reason": "stop",
            "reported_model": None, "configured_model": "gpt-5.5", "cached_tokens": 0,
        }  # fmt: skip
        args.update(kw)
        return sanity_flags(**args)  # type: ignore[arg-type]

    assert flags("ANSWER: 4") == []
    assert flags("  ") == ["empty"]
    assert flags("ANSWER: 4", finish_reason="length") == ["truncated"]
    assert flags("The answer is สี่ four") == ["wrong_script"]
    assert flags("Tokyo", prompt="What is 東京?") == []
    assert flags("4 \ufffd") == ["invalid_unicode"]
    assert flags("4\x00") == ["invalid_unicode"]
    assert flags("and then we go " * 10) == ["repetition"]
    assert flags("abcabc" + "xyzxyzxyz!" * 5) == ["repetition"]
    assert flags("I'm sorry, but I can't help with that.") == ["refusal"]
    assert flags("4", reported_model="gpt-5.5-2026-01-01") == []
    assert flags("4", reported_model="openai/gpt-5.5") == []
    assert flags("4", reported_model="gpt-4o-mini") == ["model_mismatch"]
    assert flags("4", cached_tokens=128) == ["cache_hit"]
    assert flags("", attempted=False) == []


def test_timeline_gaps_and_speed() -> None:
    t = Timeline(sent=0, headers=1_000_000)
    t.token(10, answer=False, at=10_000_000)  # first token: reasoning, 10 chars
    t.token(30, answer=True, at=20_000_000)
    t.token(60, answer=True, at=110_000_000)
    t.end = 120_000_000
    s = t.summary(output_tokens=100)
    assert s["headers_ms"] == 1.0
    assert s["ttft_ms"] == 10.0 and s["first_answer_ms"] == 20.0
    assert s["last_token_ms"] == 110.0 and s["total_ms"] == 120.0
    assert s["itl_max_ms"] == 90.0 and s["itl_p50_ms"] == 50.0
    assert s["output_tokens_per_s"] == pytest.approx(90 / 0.1)  # 90% of tokens after chunk 1
    assert s["chunks"] == 3
    assert Timeline(sent=0).summary(None)["ttft_ms"] is None


def test_think_splitter_across_every_split() -> None:
    text = "<think>plan</think>answer"
    for cut in range(len(text) + 1):
        splitter = ThinkSplitter()
        parts = [splitter.feed(text[:cut]), splitter.feed(text[cut:]), splitter.flush()]
        assert "".join(p[0] for p in parts) == "plan"
        assert "".join(p[1] for p in parts) == "answer"


def test_state_texts_think_open_missing() -> None:
    state = StreamState(think_tags=True, think_open_missing=True)
    state.chunk(answer="reasoning here</think>\n\nfinal")
    assert state.texts() == ("final", "reasoning here")


def test_cost_and_estimator() -> None:
    provider = ProviderConfig(
        name="p", format="openai", base_url="http://x", model="m", api_key_env=None,
        price_input_per_mtok=2.0, price_output_per_mtok=8.0, price_cached_per_mtok=0.5,
    )  # fmt: skip
    cost = cost_usd(provider, input_tokens=1_000_000, output_tokens=500_000, cached_tokens=200_000)
    assert cost == pytest.approx(0.8 * 2.0 + 0.2 * 0.5 + 0.5 * 8.0)
    free = ProviderConfig(name="f", format="openai", base_url="http://x", model="m",
                          api_key_env=None)  # fmt: skip
    reported = cost_usd(free, input_tokens=1, output_tokens=1, cached_tokens=0, reported_cost=0.3)
    assert reported == 0.3
    est = CharsPerToken(4.0)
    assert est.estimate("kv_lookup") < est.estimate("multi_needle") == 4.0
    est.observe("multi_needle", 30_000, 10_000)
    assert est.estimate("multi_needle") == 3.0
    est.observe("multi_needle", 100, 10)  # too short to teach anything
    est.observe("multi_needle", 40_000, 10_000)
    assert est.estimate("multi_needle") == pytest.approx(3.3)


def _run_against(handler: Callable[[httpx.Request], httpx.Response]) -> ProbeResult:
    """One probe through a mock transport (wire formats we cannot reach otherwise)."""
    provider = ProviderConfig(
        name="p", format="openai", base_url="https://x.test/v1", model="m", api_key_env=None
    )
    probe = ProbeConfig(
        name="t", task="counting", context_tokens=100, every_s=60.0, cron=None, providers=("p",)
    )

    async def go() -> ProbeResult:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await run_probe(provider, probe, client=client)

    return asyncio.run(go())


def _raising(exc: Exception) -> ProbeResult:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return _run_against(handler)


@pytest.mark.parametrize(
    ("exc", "error_class"),
    [
        (httpx.ConnectTimeout("connect"), "timeout_connect"),
        (httpx.PoolTimeout("pool"), "timeout_connect"),
        (httpx.ConnectError("refused"), "connection_error"),
        (httpx.ReadTimeout("read"), "timeout_first_token"),
        (httpx.RemoteProtocolError("closed"), "connection_error"),
        (httpx.UnsupportedProtocol("ftp"), "bad_request"),
        (RuntimeError("a bug in a transport"), "malformed_stream"),
    ],
)
def test_transport_failures_are_rows(exc: Exception, error_class: str) -> None:
    result = _raising(exc)
    assert result.error_class == error_class
    assert result.http_status is None and result.expected_answer is not None
    assert result.total_ms is not None or error_class == "malformed_stream"


def test_hidden_reasoning_tokens_do_not_inflate_speed() -> None:
    body = (
        'data: {"choices":[{"index":0,"delta":{"content":"ANSWER:"}}]}\n\n'
        'data: {"choices":[{"index":0,"delta":{"content":" 4"},"finish_reason":"stop"}]}\n\n'
        'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":102,'
        '"completion_tokens_details":{"reasoning_tokens":100}}}\n\n'
        "data: [DONE]\n\n"
    )

    async def pieces() -> AsyncIterator[bytes]:
        for line in body.encode().split(b"\n\n"):
            yield line + b"\n\n"
            await asyncio.sleep(0.01)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=pieces())

    result = _run_against(handler)
    assert result.error_class == "ok" and result.reasoning_tokens == 100
    assert result.output_tokens_per_s is not None and result.output_tokens_per_s < 1_000
