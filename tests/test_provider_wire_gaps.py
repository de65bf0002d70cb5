"""Wire shapes providers.md documents that no other test replayed, each served as the
provider's bytes from a real loopback server through ``run_probe``.

* §2: ``finish_reason: "tool_calls"`` (the probe sends no tools, but a model may still call
  one): with text it is the answer, with only ``delta.tool_calls`` it is no answer.
* §13: vLLM's ``continuous_usage_stats`` puts a cumulative ``usage`` on every chunk; the
  last count is the count, and a usage chunk does not end the stream.
* §4 (compatible Messages endpoints): Z.ai's Anthropic route reports its business codes
  inside ``event: error`` after HTTP 200; the code decides the class, as on a 429 body.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from probes.result import ProbeResult
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

STREAM = {"content-type": "text/event-stream"}


def _sse(*events: dict[str, Any], names: tuple[str, ...] = ()) -> bytes:
    """``data:`` lines (with ``event:`` names when given), then nothing more."""
    out = []
    for i, event in enumerate(events):
        head = f"event: {names[i]}\n" if names else ""
        out.append(f"{head}data: {json.dumps(event, separators=(',', ':'))}\n\n")
    return "".join(out).encode()


def _probe(body: bytes, preset: str, wire: str = "openai") -> ProbeResult:
    with serving(lambda _n, _reused: Reply(body=body, headers=STREAM)) as srv:
        provider = loopback_provider(srv.port, wire, preset=preset)
        (result,) = probe_n(provider, short_probe(timeout_s=4.0, read_timeout_s=2.0))
    return result


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1763600000,
            "model": "gpt-5.5", "choices": [choice], **extra}  # fmt: skip


TOOL_CALL = {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                             "function": {"name": "calc", "arguments": "{\"x\":"}}]}  # fmt: skip


@pytest.mark.parametrize(
    ("deltas", "error_class", "text"),
    [
        (({"role": "assistant", "content": "ANSWER: 4"},), "ok", "ANSWER: 4"),
        (({"role": "assistant", "content": None}, TOOL_CALL), "empty", ""),
    ],
    ids=["text-then-tool-call", "tool-call-only"],
)
def test_openai_tool_calls_finish(
    deltas: tuple[dict[str, Any], ...], error_class: str, text: str
) -> None:
    chunks = [_chunk(d) for d in deltas] + [_chunk({}, "tool_calls")]
    body = _sse(*chunks) + b"data: [DONE]\n\n"
    result = _probe(body, "openai")
    assert (result.error_class, result.finish_reason) == (error_class, "tool_calls"), (
        result.error_detail
    )
    assert (result.response_text or "") == text


def test_vllm_continuous_usage_on_every_chunk_is_cumulative() -> None:
    def usage(done: int) -> dict[str, int]:
        return {"prompt_tokens": 30, "total_tokens": 30 + done, "completion_tokens": done}

    chunks = [
        _chunk({"role": "assistant", "content": ""}, usage=usage(0)),
        _chunk({"reasoning_content": "Easy."}, usage=usage(2)),
        _chunk({"content": "ANSWER:"}, usage=usage(5)),
        _chunk({"content": " 4"}, "stop", usage=usage(7)),
        {"id": "chatcmpl-t", "object": "chat.completion.chunk", "model": "gpt-5.5",
         "choices": [], "usage": usage(7)},
    ]  # fmt: skip
    result = _probe(_sse(*chunks) + b"data: [DONE]\n\n", "vllm")
    assert (result.error_class, result.response_text) == ("ok", "ANSWER: 4"), result.error_detail
    assert (result.input_tokens, result.output_tokens) == (30, 7)
    assert result.reasoning_text == "Easy."


@pytest.mark.parametrize(
    ("code", "error_type", "error_class"),
    [
        ("1302", "rate_limit_error", "rate_limited"),
        ("1305", "rate_limit_error", "overloaded"),
        ("1113", "rate_limit_error", "quota_exhausted"),
        ("1310", "rate_limit_error", "quota_exhausted"),
    ],
)
def test_zai_anthropic_route_business_code_inside_an_error_event(
    code: str, error_type: str, error_class: str
) -> None:
    """Every message says 'overloaded' and every type 'rate_limit_error': the business
    code must outrank both (1113 is a balance refusal, not a wait)."""
    start = {"type": "message_start", "message": {
        "id": "msg_z", "type": "message", "role": "assistant", "model": "glm-5.3",
        "content": [], "stop_reason": None,
        "usage": {"input_tokens": 22, "output_tokens": 1}}}  # fmt: skip
    delta = {"type": "content_block_delta", "index": 0,
             "delta": {"type": "text_delta", "text": "ANSWER:"}}  # fmt: skip
    error = {"type": "error", "error": {"type": error_type, "code": code,
             "message": f"[{code}][The service may be temporarily overloaded][req-1]"}}  # fmt: skip
    body = _sse(start, delta, error, names=("message_start", "content_block_delta", "error"))
    result = _probe(body, "anthropic", wire="anthropic")
    assert (result.error_class, result.error_code) == (error_class, code), result.error_detail
    assert (result.http_status, result.response_text) == (200, "ANSWER:")
    assert result.score_strict is None


def test_anthropic_redacted_thinking_and_tool_use_blocks_carry_no_answer_text() -> None:
    """§4: block types ``redacted_thinking`` and ``tool_use`` (arguments as partial JSON in
    ``input_json_delta``) sit beside the text block; neither is answer or reasoning text,
    and ``stop_reason: "tool_use"`` still finishes the answer."""
    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_r", "type": "message", "role": "assistant", "model": "claude-opus-5",
            "content": [], "stop_reason": None, "usage": {
                "input_tokens": 22, "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 0, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "redacted_thinking",
                                                   "data": "EmwKAhgBEgy3va3pzix"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "text_delta", "text": "ANSWER: 4"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("content_block_start", {"type": "content_block_start", "index": 2, "content_block": {
            "type": "tool_use", "id": "toolu_1", "name": "calc", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 2, "delta": {
            "type": "input_json_delta", "partial_json": "{\"expr\": \"2+"}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 2, "delta": {
            "type": "input_json_delta", "partial_json": "2\"}"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 2}),
        ("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 40}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    body = _sse(*(e for _, e in events), names=tuple(n for n, _ in events))
    result = _probe(body, "anthropic", wire="anthropic")
    assert (result.error_class, result.finish_reason) == ("ok", "tool_use"), result.error_detail
    assert result.response_text == "ANSWER: 4"
    assert not result.reasoning_text
    assert (result.input_tokens, result.cache_write_tokens, result.output_tokens) == (122, 100, 40)
