"""Wire shapes no test server of ours sent before: SSE ``id:``/``retry:`` fields, ``data:``
without its space, an event cut into one-byte chunks, JSON with duplicated keys or ``NaN``,
an error object in the first line of a 200, a gzip or deflate body cut short, an HTTP/1.0
body ended by the close, a ``Content-Length`` that lies either way, a reset mid-answer,
interim ``100`` and ``103`` responses. Each is real HTTP on loopback through ``run_probe``
and must end as one classified row within the probe's deadline, with the key nowhere in it."""

from __future__ import annotations

import gzip
import json
import socket
import struct
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from probes.result import ProbeResult
from tests.support.flood_server import _read_request
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

KEY = "sk-shapes-0123456789abcdefghijklmnop"
KEY_ENV = "NW_SHAPES_TEST_KEY"
DEADLINE_S = 4.0
SLACK_S = 6.0  # what a loaded 2-CPU machine may add before the test calls it a hang
SSE_HEAD = "content-type: text/event-stream\r\n"


def _chunk(content: str = "", finish: str | None = None) -> str:
    event = {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}
    return json.dumps(event)


USAGE = '{"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 3}}'
ANSWER = "".join(f"data: {d}\n\n" for d in (_chunk("ANSWER: 4"), _chunk(finish="stop"), USAGE))
ANSWER_DONE = (ANSWER + "data: [DONE]\n\n").encode()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


@contextmanager
def _raw(payload: bytes, end: str = "close") -> Iterator[int]:
    """A one-request server that writes ``payload`` verbatim, then closes, resets
    (``reset``) or holds the connection open until the block ends (``hold``)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(30)
    finished = threading.Event()

    def serve() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            _read_request(conn)
            conn.sendall(payload)
            if end == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            elif end == "hold":
                finished.wait(30)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        finished.set()
        listener.close()
        thread.join(30)
        assert not thread.is_alive(), "the raw server did not stop"


def _run(port: int, n: int = 1, *, stream: bool = True) -> list[ProbeResult]:
    probe = short_probe(timeout_s=DEADLINE_S, read_timeout_s=2.0, stream=stream)
    started = time.monotonic()
    results = probe_n(loopback_provider(port, api_key_env=KEY_ENV), probe, n)
    took = time.monotonic() - started
    assert took < n * DEADLINE_S + SLACK_S, f"took {took:.1f} s, deadline {DEADLINE_S} s"
    for result in results:
        assert KEY not in result.to_json(), "the API key reached the row"
    return results


def _raw_probe(payload: bytes, end: str = "close") -> ProbeResult:
    with _raw(payload, end) as port:
        (result,) = _run(port)
    return result


def _http11(body: bytes, head: str = SSE_HEAD) -> bytes:
    return f"HTTP/1.1 200 OK\r\n{head}content-length: {len(body)}\r\n\r\n".encode() + body


SHAPES = {
    "id and retry fields": f"id: 1\nretry: 3000\n{ANSWER}".replace("\n\ndata", "\nid: 2\n\ndata"),
    "data without its space": ANSWER.replace("data: ", "data:") + "data:[DONE]\n\n",
    "duplicated keys, the last wins": ANSWER.replace(
        '"content": "ANSWER: 4"', '"content": "ANSWER: 5", "content": "ANSWER: 4"'
    ),
    "NaN and Infinity in usage": ANSWER.replace(
        '"completion_tokens": 3}', '"completion_tokens": 3, "cost": NaN, "total_tokens": Infinity}'
    ),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_odd_but_valid_event_streams_are_read(shape: str) -> None:
    result = _raw_probe(_http11(SHAPES[shape].encode()))
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4"), result.error_detail
    assert result.output_tokens == 3
    assert result.cost_usd is None  # no prices configured, and a reported NaN is no cost


def test_an_event_cut_into_one_byte_chunks_is_read() -> None:
    pieces = tuple(ANSWER_DONE[i : i + 1] for i in range(len(ANSWER_DONE)))
    reply = Reply(headers={"content-type": "text/event-stream"}, chunks=pieces)
    with serving(lambda _n, _reused: reply) as srv:
        (result,) = _run(srv.port)
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4"), result.error_detail


def test_an_error_object_in_the_first_line_of_a_200_is_the_providers_error() -> None:
    error = {"error": {"message": "Rate limit reached", "type": "requests",
                       "code": "rate_limit_exceeded"}}  # fmt: skip
    result = _raw_probe(_http11(f"data: {json.dumps(error)}\n\n".encode()))
    assert (result.error_class, result.http_status) == ("rate_limited", 200), result.error_detail
    assert result.score_strict is None


GZIP_HEAD = f"{SSE_HEAD}content-encoding: gzip\r\n"
JSON_ANSWER = json.dumps(
    {"choices": [{"index": 0, "message": {"content": "ANSWER: 4"}, "finish_reason": "stop"}]}
).encode()


def _no_trailer(packed: bytes) -> bytes:
    return packed[:-8]  # a gzip member ends in CRC-32 and ISIZE, 4 bytes each


@pytest.mark.parametrize(
    ("body", "head", "stream"),
    [
        (_no_trailer(gzip.compress(ANSWER.encode())), GZIP_HEAD, True),
        (gzip.compress(ANSWER.encode())[:-60], GZIP_HEAD, True),  # the usage chunk cut
        (zlib.compress(ANSWER.encode())[:-4], f"{SSE_HEAD}content-encoding: deflate\r\n", True),
        (_no_trailer(gzip.compress(JSON_ANSWER)), "content-type: application/json\r\n"
         "content-encoding: gzip\r\n", False),
    ],
    ids=["stream-no-trailer", "stream-cut-in-data", "deflate-no-adler", "json-no-trailer"],
)  # fmt: skip
def test_a_compressed_body_that_ends_early_may_be_cut(body: bytes, head: str, stream: bool) -> None:
    """It read as ok: httpx flushes what a cut gzip stream decodes to and says nothing. The
    finish chunk arrived, but with no terminator the end of the body is the end of the answer,
    and that end is not the compressed stream's: the usage (or more) may be lost."""
    with _raw(_http11(body, head)) as port:
        (result,) = _run(port, stream=stream)
    assert result.error_class == "malformed_stream", result.error_detail
    assert "ended before its compressed stream did" in (result.error_detail or "")
    assert result.score_strict is None


def test_a_whole_gzip_stream_is_an_answer_and_a_cut_error_reply_keeps_its_class() -> None:
    whole = _raw_probe(_http11(gzip.compress(ANSWER.encode()), GZIP_HEAD))
    assert (whole.error_class, whole.response_text) == ("ok", "ANSWER: 4"), whole.error_detail
    error = b'{"error": {"message": "slow down", "code": "rate_limit_exceeded"}}'
    body = _no_trailer(gzip.compress(error))
    reply = "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
    reply += f"content-encoding: gzip\r\ncontent-length: {len(body)}\r\n\r\n"
    cut = _raw_probe(reply.encode() + body)
    assert (cut.error_class, cut.http_status) == ("rate_limited", 429), cut.error_detail


def test_a_gzip_stream_whose_terminator_arrived_is_whole_without_its_trailer() -> None:
    """``[DONE]`` ends the answer by its own framing (providers.md §1); what follows is not
    read as part of it, so a missing trailer after it cuts nothing."""
    result = _raw_probe(_http11(_no_trailer(gzip.compress(ANSWER_DONE)), GZIP_HEAD))
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4"), result.error_detail


def test_an_http10_body_ended_by_the_close_is_read() -> None:
    payload = f"HTTP/1.0 200 OK\r\n{SSE_HEAD}\r\n".encode() + ANSWER.encode()
    result = _raw_probe(payload)
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4"), result.error_detail


def test_a_content_length_longer_than_the_body_then_a_close() -> None:
    """The close after the finish chunk is a clean end (providers.md); before it, a drop."""
    whole = ANSWER.encode()
    cut = whole[: whole.index(b"data:", 10)]  # the first chunk only
    long_head = f"HTTP/1.1 200 OK\r\n{SSE_HEAD}content-length: {len(whole) + 100}\r\n\r\n"
    after = _raw_probe(long_head.encode() + whole)
    before = _raw_probe(long_head.encode() + cut)
    assert (after.error_class, after.response_text) == ("ok", "ANSWER: 4"), after.error_detail
    assert (before.error_class, before.response_text) == ("connection_error", "ANSWER: 4")


def test_a_content_length_shorter_than_the_body_does_not_poison_the_next_probe() -> None:
    """The bytes past the stated length must not be read as the next probe's response."""
    cut_at = ANSWER_DONE.index(b"data:", 10)  # the first chunk only
    replies = [
        Reply(body=ANSWER_DONE, headers={"content-type": "text/event-stream",
                                         "content-length": str(cut_at)}),
        Reply(body=ANSWER_DONE, headers={"content-type": "text/event-stream"}),
    ]  # fmt: skip
    with serving(lambda n, _reused: replies[min(n, 2) - 1]) as srv:
        first, second = _run(srv.port, n=2)
    assert (first.error_class, first.response_text) == ("malformed_stream", "ANSWER: 4")
    assert (second.error_class, second.response_text) == ("ok", "ANSWER: 4"), second.error_detail
    assert "holding bytes past the previous response" in (second.error_detail or "")


def test_a_reset_mid_answer_keeps_the_text_and_is_a_connection_error() -> None:
    first = f"data: {_chunk('ANSWER:')}\n\n".encode()
    reply = Reply(headers={"content-type": "text/event-stream"}, chunks=(first,),
                  unended=True, reset=True)  # fmt: skip
    with serving(lambda _n, _reused: reply) as srv:
        (result,) = _run(srv.port)
    assert (result.error_class, result.response_text) == ("connection_error", "ANSWER:")
    assert result.ttft_ms is not None and result.score_strict is None


@pytest.mark.parametrize("interim", ["100 Continue", "103 Early Hints"])
def test_an_interim_response_before_the_answer_is_skipped(interim: str) -> None:
    payload = f"HTTP/1.1 {interim}\r\nlink: </x>\r\n\r\n".encode() + _http11(ANSWER_DONE)
    result = _raw_probe(payload)
    assert (result.error_class, result.http_status) == ("ok", 200), result.error_detail
    assert result.response_text == "ANSWER: 4"


@pytest.mark.parametrize(
    ("payload", "seen"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n", "SSH-2.0-OpenSSH_9.6"),
        (f"HTTP/1.1 abc {KEY} and more words\r\n\r\n".encode(), "HTTP/1.1 abc"),
    ],
)
def test_a_reply_that_is_not_http_says_what_came(payload: bytes, seen: str) -> None:
    """It was 'connection_error', as for a refused port: something unreadable answered
    (tests/test_not_http_replies.py has more). The cut sample drops its cut word, which
    could be the start of a key the server echoed."""
    result = _raw_probe(payload)
    assert (result.error_class, result.http_status) == ("malformed_stream", None)
    detail = result.error_detail or ""
    assert detail.startswith("not an HTTP reply from 127.0.0.1:") and seen in detail, detail
    assert KEY[:8] not in detail, detail


ANTHROPIC_STOP = 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
EMPTY_FINISH = f"data: {_chunk(finish='stop')}\n\ndata: [DONE]\n\n"


@pytest.mark.parametrize(
    ("wire", "body", "error_class", "seen"),
    [
        ("openai", "data: [DONE]\n\n", "malformed_stream", "[DONE] before any chunk"),
        ("openai", f"data: {USAGE}\n\ndata: [DONE]\n\n", "malformed_stream", "[DONE] before"),
        ("anthropic", ANTHROPIC_STOP, "malformed_stream", "message_stop before any chunk"),
        ("openai", EMPTY_FINISH, "empty", ""),
    ],
    ids=["done-only", "usage-then-done", "message-stop-only", "finish-without-text"],
)
def test_a_terminator_before_any_finish_or_text_is_a_broken_stream(
    wire: str, body: str, error_class: str, seen: str
) -> None:
    """``[DONE]`` alone was ``empty``, a class scored as the model's (empty) answer, though
    no model said anything: providers.md §1 makes the finish reason the clean end and the
    terminator framing, and the taxonomy's malformed_stream is 'ended without a finish
    signal'. A finish chunk with no text is still the model's empty answer."""
    with _raw(_http11(body.encode())) as port:
        probe = short_probe(timeout_s=DEADLINE_S, read_timeout_s=2.0)
        (result,) = probe_n(loopback_provider(port, wire, api_key_env=KEY_ENV), probe)
    assert (result.error_class, result.http_status) == (error_class, 200), result.error_detail
    assert seen in (result.error_detail or ""), result.error_detail
    assert result.score_strict is None or error_class == "empty"
