"""Wire behaviours of /work/shared/providers.md that the transcript files cannot show:
timing of the first answer token and a stream that ends with an abrupt close. Every case is
the documented bytes, streamed by a real HTTP server on loopback through ``run_probe``.

A server-side pause before the answer is the quantity measured, not a synchronisation: the
answer cannot reach the client earlier, so ``first_answer_ms >= PAUSE_MS`` holds however
slow the machine is, and the old code (which timed the reasoning chunk) fails it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from probes.result import ProbeResult
from tests.support.http_server import QuietHandler, ThreadedServer
from tests.support.probing import loopback_provider, probe_n, short_probe

PAUSE_S = 0.3
PAUSE_MS = PAUSE_S * 1000
PAUSE = object()  # in a script: wait PAUSE_S before the next piece


@dataclass(frozen=True, slots=True)
class Script:
    """What the server sends: pieces of body and pauses; ``cut`` ends it with an abrupt
    close (a content-length the body never reaches), ``key`` is a bearer key it demands."""

    pieces: tuple[Any, ...]
    cut: bool = False
    key: str | None = None


class StreamServer(ThreadedServer):
    def __init__(self, script: Script) -> None:
        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                if script.key and self.headers.get("authorization") != f"Bearer {script.key}":
                    body = b'{"error":{"message":"unauthorized","type":"api_error","code":null}}'
                    self._head(401, "application/json", len(body))
                    self.wfile.write(body)
                    return
                size = sum(len(p) for p in script.pieces if isinstance(p, bytes))
                self._head(200, "text/event-stream", size + (100 if script.cut else 0))
                for piece in script.pieces:
                    if piece is PAUSE:
                        time.sleep(PAUSE_S)
                    else:
                        self.wfile.write(piece)
                        self.wfile.flush()
                self.close_connection = True

            def _head(self, status: int, kind: str, length: int) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(length))
                self.end_headers()

        super().__init__(Handler)


@contextmanager
def _serving(script: Script) -> Iterator[StreamServer]:
    server = StreamServer(script)
    try:
        yield server
    finally:
        server.close()


def _probe(script: Script, preset: str, wire: str = "openai", **provider: Any) -> ProbeResult:
    with _serving(script) as server:
        config = loopback_provider(server.port, wire, preset=preset, **provider)
        (result,) = probe_n(config, short_probe())
    return result


def _sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


def _delta(finish: str | None = None, **delta: Any) -> bytes:
    return _sse({"id": "c", "model": "m", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]})  # fmt: skip


USAGE = _sse({"id": "c", "model": "m", "choices": [],
              "usage": {"prompt_tokens": 40, "completion_tokens": 9}})  # fmt: skip
DONE = b"data: [DONE]\n\n"


def _anthropic_thinking() -> tuple[Any, ...]:
    start = {"type": "message_start", "message": {"id": "m1", "model": "m",
             "usage": {"input_tokens": 20, "output_tokens": 1}}}  # fmt: skip
    think = {"type": "content_block_delta", "index": 0,
             "delta": {"type": "thinking_delta", "thinking": "The user asks."}}  # fmt: skip
    text = {"type": "content_block_delta", "index": 1,
            "delta": {"type": "text_delta", "text": "ANSWER: 4"}}  # fmt: skip
    stop = {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 9}}  # fmt: skip
    return (
        _sse(start, "message_start"), _sse(think, "content_block_delta"), PAUSE,
        _sse(text, "content_block_delta"), _sse(stop, "message_delta"),
        _sse({"type": "message_stop"}, "message_stop"),
    )  # fmt: skip


SPLIT_REASONING = [{"type": "reasoning.text", "text": "The user asks."}]

# (preset, wire, pieces, stored reasoning): reasoning first, the answer after a pause.
REASONING_FIRST = {
    # §6: a </think> closes the reasoning, the blank lines after it are not the answer yet
    "minimax think tags, blank lines after </think>": ("minimax", "openai", (
        _delta(content="<think>\nThe user asks."), _delta(content="</think>\n\n"), PAUSE,
        _delta(content="ANSWER: 4"), _delta("stop", content=""), USAGE, DONE,
    ), "\nThe user asks."),
    # §6: the opening <think> may be missing (self-hosted templates)
    "minimax think tags, opening tag missing": ("minimax", "openai", (
        _delta(content="The user asks."), PAUSE, _delta(content="</think>\nANSWER: 4"),
        _delta("stop", content=""), USAGE, DONE,
    ), "The user asks."),
    # §6 with reasoning_split: reasoning_details, content clean
    "minimax reasoning_details": ("minimax", "openai", (
        _delta(content="", reasoning_details=SPLIT_REASONING),
        PAUSE, _delta(content="ANSWER: 4"), _delta("stop", content=""), USAGE, DONE,
    ), "The user asks."),
    # §7 DeepSeek (also GLM, Kimi, Qwen, vLLM): reasoning_content, content null
    "deepseek reasoning_content": ("deepseek", "openai", (
        b": keep-alive\n\n", _delta(content=None, reasoning_content="The user asks."), PAUSE,
        _delta("stop", content="ANSWER: 4"), USAGE, DONE,
    ), "The user asks."),
    # §11/§12 OpenRouter, Ollama: delta.reasoning beside an empty content
    "openrouter reasoning": ("openrouter", "openai", (
        b": OPENROUTER PROCESSING\n\n", _delta(content="", reasoning="The user asks."), PAUSE,
        _delta(content="ANSWER: 4"), _delta("stop", content=""), USAGE, DONE,
    ), "The user asks."),
    # §4 Anthropic thinking block before the text block
    "anthropic thinking block": ("anthropic", "anthropic", _anthropic_thinking(),
                                 "The user asks."),
}  # fmt: skip


@pytest.mark.parametrize("case", list(REASONING_FIRST))
def test_reasoning_is_not_the_first_answer_token(case: str) -> None:
    preset, wire, pieces, reasoning = REASONING_FIRST[case]
    result = _probe(Script(pieces), preset, wire)
    assert result.error_class == "ok", result.error_detail
    assert result.response_text == "ANSWER: 4"
    assert result.reasoning_text == reasoning
    assert result.ttft_ms is not None and result.first_answer_ms is not None
    assert result.first_answer_ms >= PAUSE_MS, (result.ttft_ms, result.first_answer_ms)


OVERLOADED = {"message": "The server is overloaded, please try again later.",
              "type": "service_unavailable_error", "param": None,
              "code": "server_is_overloaded"}  # fmt: skip
ANTHROPIC_ERROR = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@pytest.mark.parametrize("blank_line", [True, False], ids=["event-ended", "event-unended"])
@pytest.mark.parametrize(
    ("preset", "wire", "error_event", "error_class", "code"),
    [
        # §2: one data: line with an error object and no choices, then the connection closes
        ("openai", "openai", _sse({"error": OVERLOADED}), "overloaded", "server_is_overloaded"),
        # §4: event: error after HTTP 200
        ("anthropic", "anthropic", _sse(ANTHROPIC_ERROR, "error"), "overloaded",
         "overloaded_error"),
        # §9: DashScope data: {"error": ...} with a string code
        ("qwen", "openai", _sse({"error": {"code": "Throttling.RateQuota",
                                           "message": "Requests rate limit exceeded"}}),
         "rate_limited", "Throttling.RateQuota"),
    ],
    ids=["openai", "anthropic", "qwen"],
)  # fmt: skip
def test_an_in_stream_error_then_an_abrupt_close_keeps_the_providers_class(
    preset: str, wire: str, error_event: bytes, error_class: str, code: str, blank_line: bool
) -> None:
    if wire == "anthropic":
        text = {"type": "text_delta", "text": "Par"}
        begun = _sse(
            {"type": "content_block_delta", "index": 0, "delta": text}, "content_block_delta"
        )
    else:
        begun = _delta(content="Par")
    event = error_event if blank_line else error_event[:-1]
    result = _probe(Script((begun, event), cut=True), preset, wire)
    assert result.error_class == error_class, result.error_detail
    assert result.error_code == code
    assert result.http_status == 200
    assert result.score_strict is None
    assert "RemoteProtocolError" in (result.error_detail or "")  # the close is still told


def test_a_finish_chunk_then_an_abrupt_close_is_a_clean_end() -> None:
    """§1: EOF after a chunk with finish_reason is a clean end (MiniMax closes without
    [DONE]); here the socket drops before the event's blank line."""
    finish = _delta("stop", content="ANSWER: 4")
    result = _probe(Script((finish[:-1],), cut=True), "minimax")
    assert result.error_class == "ok", result.error_detail
    assert result.finish_reason == "stop"


def test_an_abrupt_close_before_any_finish_is_still_a_connection_error() -> None:
    result = _probe(Script((_delta(content="ANS"),), cut=True), "openai")
    assert result.error_class == "connection_error"


def test_a_finish_reason_of_error_without_an_error_object_is_a_failure() -> None:
    """§11: after streaming starts, OpenRouter reports an upstream failure as an ``error``
    field, typically beside a choice with ``finish_reason: "error"``. Should the field be
    missing, the finish reason alone still says the answer failed: not a scored answer."""
    pieces = (_delta(content="ANSWER: 4"), _delta("error"), USAGE, DONE)
    result = _probe(Script(pieces), "openrouter")
    assert result.error_class == "server_error", result.error_detail
    assert result.finish_reason == "error"
    assert result.score_strict is None


def test_ollama_cloud_gets_its_bearer_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """§12: Ollama Cloud (https://ollama.com/v1) needs ``Authorization: Bearer``; a local
    server ignores it, and no key configured still sends none."""
    key = "ollama-cloud-test-key-0123456789"
    monkeypatch.setenv("NW_OLLAMA_KEY", key)
    pieces = (_delta("stop", content="ANSWER: 4"), USAGE, DONE)
    result = _probe(Script(pieces, key=key), "ollama", api_key_env="NW_OLLAMA_KEY")
    assert result.error_class == "ok", result.error_detail
    assert result.http_status == 200
    keyless = _probe(Script(pieces, key=key), "ollama")
    assert keyless.error_class == "auth" and keyless.http_status == 401
