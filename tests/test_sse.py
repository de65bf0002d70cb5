"""SSE parsing: the framing rules, and a property test feeding random bytes at random split
points through the whole streaming path (no crash, always a classified row)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.config import ProbeConfig, ProviderConfig
from probes.adapters.sse import Comment, Event, SSEParser
from probes.errors import ERROR_CLASSES
from probes.runner import run_probe


def _parse(data: bytes, splits: list[int] | None = None) -> list[Event | Comment]:
    parser = SSEParser()
    cuts = sorted({0, len(data), *(s % (len(data) + 1) for s in (splits or []))})
    out: list[Event | Comment] = []
    for a, b in itertools.pairwise(cuts):
        out += parser.feed(data[a:b])
    return out + parser.close()


def test_framing_rules() -> None:
    data = (
        b"\xef\xbb\xbf: keep-alive\r\n\r\n"
        b'event: error\r\ndata: {"a":\r\ndata: 1}\r\n\r\n'
        b"id: 7\nretry: 100\ndata:no-space\n\n"
        b"event: lonely\n\n"
        b"data: [DONE]\r\r"
        b"data: last without blank line"
    )
    expected = [
        Comment("keep-alive"),
        Event("error", '{"a":\n1}'),
        Event("message", "no-space"),
        Event("message", "[DONE]"),
        Event("message", "last without blank line"),
    ]
    assert _parse(data) == expected
    for step in (1, 2, 3, 5):
        assert _parse(data, list(range(0, len(data), step))) == expected


def test_invalid_utf8_becomes_replacement_char() -> None:
    events = _parse(b"data: caf\xc3\n\ndata: \xe2\x82")
    assert events == [Event("message", "caf\ufffd"), Event("message", "\ufffd")]


def test_multibyte_char_split_across_reads() -> None:
    text = "data: 東京\n\n".encode()
    assert _parse(text, [7, 8, 9]) == [Event("message", "東京")]


def test_pending_reports_half_event() -> None:
    parser = SSEParser()
    parser.feed(b"data: x\n")
    assert parser.pending
    parser.feed(b"\n")
    assert not parser.pending


_PROVIDERS = {
    wire: ProviderConfig(
        name="fuzz",
        format=wire,
        base_url="https://fuzz.test/v1",
        model="m",
        api_key_env=None,
        preset=wire,
    )
    for wire in ("openai", "anthropic")
}
_PROBE = ProbeConfig(
    name="fuzz", task="arithmetic", context_tokens=100, every_s=60.0, cron=None,
    providers=("fuzz",), timeout_s=5.0, read_timeout_s=5.0,
)  # fmt: skip

_FRAGMENTS = st.sampled_from(
    [
        b"data: ",
        b"event: ",
        b": ping",
        b"\n",
        b"\r\n",
        b"\n\n",
        b"[DONE]",
        b"{",
        b"}",
        b'"choices":[{"delta":{"content":"4',
        b'2"},"finish_reason":"stop"}]',
        b'"error":{"code":"1302"}',
        b'"type":"message_stop"',
        b'"type":"content_block_delta"',
        b'"delta":{"type":"text_delta","text":"x"}',
        b"\xff\xfe",
        b"\xe6\x9d",
        b"<think>",
        b'"usage":{"prompt_tokens":-1}',
        b"null",
        b"[]",
        b'"base_resp":{"status_code":1002}',
    ]
)
_BODIES = st.one_of(
    st.binary(max_size=400),
    st.lists(_FRAGMENTS, max_size=40).map(b"".join),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=_BODIES,
    splits=st.lists(st.integers(min_value=0, max_value=500), max_size=12),
    wire=st.sampled_from(["openai", "anthropic"]),
    status=st.sampled_from([200, 200, 200, 429, 500]),
)
def test_random_bytes_always_give_a_classified_row(
    body: bytes, splits: list[int], wire: str, status: int
) -> None:
    cuts = sorted({0, len(body), *(s % (len(body) + 1) for s in splits)})

    async def pieces() -> AsyncIterator[bytes]:
        for a, b in itertools.pairwise(cuts):
            yield body[a:b]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=pieces())

    async def go() -> str | None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            result = await run_probe(_PROVIDERS[wire], _PROBE, client=client, seed=1)
        assert not (result.error_detail or "").startswith("internal error"), result.error_detail
        return result.error_class

    assert asyncio.run(go()) in ERROR_CLASSES
    assert _parse(body, splits) == _parse(body)  # split points never change the events


def test_an_event_of_many_data_lines_joins_them_in_order() -> None:
    """Data lines are kept in joined runs (memory); the event is still every line, in
    order, joined by one newline, across runs and across reads that split a line."""
    lines = [f"line {i}" for i in range(1_000)]
    raw = "".join(f"data: {line}\n" for line in lines).encode() + b"\n"
    parser = SSEParser()
    events = [e for k in range(0, len(raw), 7) for e in parser.feed(raw[k : k + 7])]
    assert events == [Event("message", "\n".join(lines))]
