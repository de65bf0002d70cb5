"""Servers that break the wire contract in ways a probe must not mistake for an answer: data
after the terminator, an encoding the client cannot decode, a captive portal's HTML page,
usage that contradicts the text, a redirect to another origin, a connection reset or broken
chunked framing right after the headers. Each is real HTTP on loopback through
``run_probe``; each must end as one classified row, within the probe's deadline, with the
key nowhere in it."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import time

import httpx
import pytest
from httpx._decoders import SUPPORTED_DECODERS

from probes.adapters import openai
from probes.adapters.base import Request
from probes.adapters.http import Exchange, execute
from probes.adapters.state import StreamState
from probes.result import ProbeResult
from probes.runner import NO_OUTPUT_FLAG
from tests.support.brotli_stored import brotli_stored
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

STREAM = {"content-type": "text/event-stream"}
KEY = "sk-hostile-0123456789abcdefghijklmn"
KEY_ENV = "NW_HOSTILE_TEST_KEY"
DEADLINE_S = 4.0  # the probe's own deadline in these tests
SLACK_S = 6.0  # what a loaded 2-CPU machine may add before the test calls it a hang


def _chunk(content: str = "", finish: str | None = None) -> bytes:
    event = {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}
    return f"data: {json.dumps(event)}\n\n".encode()


USAGE = b'data: {"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 3}}\n\n'
ANSWER = _chunk("ANSWER: 4") + _chunk(finish="stop") + USAGE + b"data: [DONE]\n\n"


def _anthropic(*events: dict[str, object]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _text(text: str) -> dict[str, object]:
    delta = {"type": "text_delta", "text": text}
    return {"type": "content_block_delta", "index": 0, "delta": delta}


def _probe(reply: Reply, wire: str = "openai", **fields: object) -> ProbeResult:
    """One probe against a server giving ``reply``; fails if it outlives the deadline."""
    probe = short_probe(timeout_s=DEADLINE_S, read_timeout_s=2.0, **fields)
    with serving(lambda _n, _reused: reply) as srv:
        provider = loopback_provider(srv.port, wire, api_key_env=KEY_ENV)
        started = time.monotonic()
        (result,) = probe_n(provider, probe)
        took = time.monotonic() - started
    assert took < DEADLINE_S + SLACK_S, f"the probe took {took:.1f} s, deadline {DEADLINE_S} s"
    _assert_keyless(result)
    return result


def _assert_keyless(result: ProbeResult) -> None:
    assert KEY not in result.to_json(), "the API key reached the row"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def test_openai_data_after_done_is_not_part_of_the_answer() -> None:
    """§2: the stream ends at ``data: [DONE]``. What a server sends after it (a second
    answer, a usage chunk) was appended to the answer and scored."""
    body = ANSWER + _chunk(" ANSWER: 5") + USAGE.replace(b": 3}", b": 900}")
    result = _probe(Reply(body=body, headers=STREAM))
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4")
    assert result.output_tokens == 3


def test_anthropic_events_after_message_stop_are_not_part_of_the_answer() -> None:
    body = _anthropic(
        {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 5}}},
        _text("ANSWER: 4"),
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
        _text(" ANSWER: 5"),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )  # fmt: skip
    result = _probe(Reply(body=body, headers=STREAM), wire="anthropic")
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4")


@pytest.mark.parametrize(
    ("text", "error_class"),
    [("Overloaded", "overloaded"), ("upstream connect error or disconnect", "server_error")],
)
def test_an_anthropic_error_event_in_plain_text_is_the_providers_error(
    text: str, error_class: str
) -> None:
    """``event: error`` names the failure even when its data is not JSON: it was read as
    an undecodable event (malformed_stream) and the server's words were lost."""
    body = (
        _anthropic(
            {"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 5}}},
            _text("ANSWER:"),
        )
        + f"event: error\ndata: {text}\n\n".encode()
    )
    result = _probe(Reply(body=body, headers=STREAM), wire="anthropic")
    assert (result.error_class, result.error_detail) == (error_class, text)
    assert result.response_text == "ANSWER:" and result.score_strict is None


ENCODERS = {"gzip": gzip.compress, "br": brotli_stored, "compress": brotli_stored}


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
def test_a_body_in_an_encoding_the_client_cannot_decode_is_not_read_as_plain(
    encoding: str,
) -> None:
    """httpx passes a body in an encoding it has no decoder for through as is. A brotli
    stream of stored meta-blocks is the plain stream behind a few header bytes, so the
    first event was lost and the rest read: an answer cut to nothing, stored as ``empty``.
    (The probe asks for identity; one it can decode, gzip, is read whole.)"""
    body = ENCODERS[encoding](ANSWER)
    result = _probe(Reply(body=body, headers={**STREAM, "content-encoding": encoding}))
    if encoding in SUPPORTED_DECODERS:  # gzip; br too where brotli is installed
        assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4")
        return
    assert result.error_class == "malformed_stream", result.error_detail
    assert f"content-encoding {encoding}" in (result.error_detail or ""), result.error_detail
    assert not result.response_text
    assert result.ttft_ms is None and result.score_strict is None


def test_an_error_body_in_an_undecodable_encoding_is_classified_by_its_status() -> None:
    body = brotli_stored(b'{"error": {"message": "Overloaded", "type": "overloaded_error"}}')
    reply = Reply(status=529, body=body, headers={"content-encoding": "compress"})
    result = _probe(reply, wire="anthropic")
    assert (result.error_class, result.http_status) == ("overloaded", 529)
    assert "content-encoding compress" in (result.error_detail or ""), result.error_detail


def test_a_captive_portal_page_says_what_came_instead_of_a_stream() -> None:
    """A 200 text/html page (a hotel portal, a proxy's block page) read as 'stream ended
    before any finish signal', which blames the provider for a truncation."""
    page = f"<!doctype html><html><head><title>Sign in to Guest Wi-Fi {KEY}</title></head>"
    page += "<body><form>...</form></body></html>"
    headers = {"content-type": "text/html; charset=utf-8"}
    result = _probe(Reply(body=page.encode(), headers=headers))
    assert (result.error_class, result.http_status) == ("malformed_stream", 200)
    detail = result.error_detail or ""
    assert "text/html" in detail and "Sign in to Guest Wi-Fi" in detail, detail
    assert result.ttft_ms is None and result.score_strict is None


def test_a_valid_stream_labelled_html_is_still_read() -> None:
    """Only a body with no event at all is called a page: some proxies relabel streams."""
    result = _probe(Reply(body=ANSWER, headers={"content-type": "text/html"}))
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4")


def test_comments_then_eof_still_reads_as_a_stream_without_a_finish() -> None:
    result = _probe(Reply(body=b": keep-alive\n\n" * 3, headers=STREAM))
    assert result.error_class == "malformed_stream"
    assert result.error_detail == "stream ended before any finish signal"


def test_a_non_streamed_page_says_what_came_instead_of_json() -> None:
    page = b"<html><head><title>Access denied by proxy</title></head></html>"
    reply = Reply(body=page, headers={"content-type": "text/html"})
    result = _probe(reply, stream=False)
    assert (result.error_class, result.http_status) == ("malformed_stream", 200)
    detail = result.error_detail or ""
    assert "text/html" in detail and "not JSON" in detail and "Access denied" in detail, detail


def test_a_non_streamed_body_past_the_cap_is_too_large() -> None:
    """It was cut at the cap and then read as broken JSON ('body is not a JSON object')."""
    message = {"content": "x" * 2_000_000}
    body = json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
    reply = Reply(body=body.encode(), headers={"content-type": "application/json"})
    result = _probe(reply, stream=False, max_response_bytes=1_000_000)
    assert result.error_class == "response_too_large", result.error_detail
    assert "1,000,000" in (result.error_detail or "")


def test_a_non_streamed_body_at_the_cap_is_read() -> None:
    message = {"content": "ANSWER: 4"}
    body = json.dumps({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
    reply = Reply(body=body.encode(), headers={"content-type": "application/json"})
    result = _probe(reply, stream=False, max_response_bytes=len(body))
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_usage_of_zero_output_tokens_beside_text_is_flagged(wire: str) -> None:
    """Text arrived and usage says no output token: the count is stored as reported (it is
    what the provider bills) but flagged, since speed and cost derived from it are wrong."""
    if wire == "openai":
        body = ANSWER.replace(b'"completion_tokens": 3', b'"completion_tokens": 0')
    else:
        body = _anthropic(
            {"type": "message_start", "message": {"usage": {"input_tokens": 5,
                                                             "output_tokens": 0}}},
            _text("ANSWER: 4"),
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
             "usage": {"output_tokens": 0}},
            {"type": "message_stop"},
        )  # fmt: skip
    result = _probe(Reply(body=body, headers=STREAM), wire=wire)
    assert (result.error_class, result.output_tokens) == ("ok", 0)
    assert NO_OUTPUT_FLAG in result.sanity_flags


def test_a_usage_with_output_tokens_is_not_flagged() -> None:
    result = _probe(Reply(body=ANSWER, headers=STREAM))
    assert NO_OUTPUT_FLAG not in result.sanity_flags


@pytest.mark.parametrize("status", [301, 307, 308])
def test_a_redirect_to_another_origin_is_not_followed(status: int) -> None:
    """The key must not travel to another origin, and a probe must not time another
    server: the redirect is the row (bad_request), and the other server sees nothing."""
    with serving(lambda _n, _reused: Reply(body=ANSWER, headers=STREAM)) as elsewhere:
        location = f"http://127.0.0.1:{elsewhere.port}/v1/chat/completions?key={KEY}"
        result = _probe(Reply(status=status, headers={"location": location}))
        assert elsewhere.requests == 0, "the redirect was followed"
    assert (result.error_class, result.http_status) == ("bad_request", status)
    assert f"redirect to http://127.0.0.1:{elsewhere.port}/" in (result.error_detail or "")
    assert result.ttft_ms is None and result.response_text is None


def test_a_reset_right_after_the_headers_is_a_connection_error() -> None:
    result = _probe(Reply(headers=STREAM, chunks=(), unended=True, reset=True))
    assert (result.error_class, result.http_status) == ("connection_error", 200)
    assert result.ttft_ms is None and result.total_ms is not None


def test_broken_chunked_framing_mid_stream_keeps_what_came_before() -> None:
    reply = Reply(headers=STREAM, chunks=(_chunk("ANSWER:"),), unended=True, tail=b"zz\r\nxx")
    result = _probe(reply)
    assert (result.error_class, result.http_status) == ("connection_error", 200)
    assert result.response_text == "ANSWER:" and result.ttft_ms is not None
    assert result.score_strict is None


def test_a_server_that_takes_no_request_is_a_first_token_timeout() -> None:
    """A listener that never reads: the send blocks once the socket buffers are full. It
    was connection_error ('WriteTimeout') when the deadline was longer than the write
    timeout and timeout_first_token when shorter: one behaviour, two classes."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)  # the kernel completes the handshake; nothing ever reads
        port = listener.getsockname()[1]
        request = Request(
            url=f"http://127.0.0.1:{port}/v1/chat/completions",
            headers={"content-type": "application/json"},
            body={"model": "m", "pad": "x" * 30_000_000},  # far past any socket buffer
            stream=True,
        )

        async def send() -> Exchange:
            async with httpx.AsyncClient() as client:
                return await execute(
                    client, request, StreamState(), openai,
                    deadline_s=60.0, read_timeout_s=60.0, connect_timeout_s=1.0,
                )  # fmt: skip

        started = time.monotonic()
        ex = asyncio.run(send())
        took = time.monotonic() - started
    assert took < 1.0 + SLACK_S, f"took {took:.1f} s: the write timeout did not end it"
    assert (ex.failure, ex.status) == ("timeout_first_token", None), ex.detail
    assert "took no more of the request" in (ex.detail or "")
