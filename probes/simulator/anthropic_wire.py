"""Render a ``Plan`` as Anthropic Messages (named SSE events or one JSON body).

Event order as the real API: ``message_start`` and a ``ping`` right away, then per
content block ``content_block_start``, deltas (``thinking_delta`` + ``signature_delta``
for a thinking block, ``text_delta`` for text), ``content_block_stop``; then
``message_delta`` (stop reason, cumulative usage) and ``message_stop``. Errors after
HTTP 200 arrive as ``event: error``.
"""

from __future__ import annotations

import json
from typing import Any

from probes.simulator.plan import Plan

__all__ = [
    "body",
    "business_error",
    "error_body",
    "finish",
    "huge",
    "malformed",
    "preamble",
    "stream_error",
    "terminator",
    "token_event",
]

_STOP = {"stop": "end_turn", "length": "max_tokens"}


def _event(name: str, payload: dict[str, Any]) -> bytes:
    data = json.dumps({"type": name, **payload}, ensure_ascii=False)
    return f"event: {name}\ndata: {data}\n\n".encode()


def _text_index(plan: Plan) -> int:
    return 1 if plan.reasoning_count else 0


def _message(plan: Plan, output_tokens: int) -> dict[str, Any]:
    return {
        "id": f"msg_{plan.request_id[4:]}",
        "type": "message",
        "role": "assistant",
        "model": plan.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": plan.prompt_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        },
    }


def preamble(plan: Plan) -> bytes:
    return _event("message_start", {"message": _message(plan, 1)}) + _event("ping", {})


def _start(index: int, thinking: bool) -> bytes:
    block = (
        {"type": "thinking", "thinking": "", "signature": ""}
        if thinking
        else {"type": "text", "text": ""}
    )
    return _event("content_block_start", {"index": index, "content_block": block})


def _end_thinking() -> bytes:
    signature = {"type": "signature_delta", "signature": "c2ltdWxhdGVkLXNpZ25hdHVyZQ=="}
    return _event("content_block_delta", {"index": 0, "delta": signature}) + _event(
        "content_block_stop", {"index": 0}
    )


def token_event(plan: Plan, i: int) -> bytes:
    """Token ``i`` as a delta, with block starts/stops where the block changes."""
    out = b""
    thinking = i < plan.reasoning_count
    if i == 0:
        out += _start(0, thinking)
    if plan.reasoning_count and i == plan.reasoning_count:
        out += _end_thinking() + _start(1, False)
    token = plan.tokens[i]
    if thinking:
        delta = {"type": "thinking_delta", "thinking": token}
        index = 0
    else:
        delta = {"type": "text_delta", "text": token}
        index = _text_index(plan)
    return out + _event("content_block_delta", {"index": index, "delta": delta})


def finish(plan: Plan) -> bytes:
    out = b""
    if plan.tokens:
        last_is_thinking = plan.reasoning_count == len(plan.tokens)
        out += (
            _end_thinking()
            if last_is_thinking
            else _event("content_block_stop", {"index": _text_index(plan)})
        )
    delta = {"stop_reason": _STOP[plan.finish], "stop_sequence": None}
    return out + _event(
        "message_delta", {"delta": delta, "usage": {"output_tokens": plan.completion_count}}
    )


def terminator(plan: Plan) -> bytes:
    del plan
    return _event("message_stop", {})


def stream_error(plan: Plan | None = None) -> bytes:
    del plan
    return _event("error", {"error": {"type": "overloaded_error", "message": "Overloaded"}})


def malformed(plan: Plan) -> bytes:
    data = json.dumps(
        {
            "type": "content_block_delta",
            "index": _text_index(plan),
            "delta": {"type": "text_delta", "text": "..."},
        }
    )
    return f"event: content_block_delta\ndata: {data[: len(data) // 2]}\n\n".encode()


def huge(plan: Plan, padding: int) -> bytes:
    """All text in one delta event, padded with a field clients must ignore."""
    out = b""
    if plan.reasoning_count:
        thinking = "".join(plan.reasoning_tokens)
        out += (
            _start(0, True)
            + _event(
                "content_block_delta",
                {"index": 0, "delta": {"type": "thinking_delta", "thinking": thinking}},
            )
            + _end_thinking()
        )
    text = "".join(plan.tokens[plan.reasoning_count :])
    index = _text_index(plan)
    payload = {
        "index": index,
        "delta": {"type": "text_delta", "text": text},
        "sim_padding": "x" * padding,
    }
    return out + _start(index, False) + _event("content_block_delta", payload)


def body(plan: Plan) -> dict[str, Any]:
    """Non-streaming ``message`` object."""
    message = _message(plan, plan.completion_count)
    content: list[dict[str, Any]] = []
    if plan.reasoning_count:
        content.append(
            {
                "type": "thinking",
                "thinking": "".join(plan.reasoning_tokens),
                "signature": "c2ltdWxhdGVkLXNpZ25hdHVyZQ==",
            }
        )
    content.append({"type": "text", "text": "".join(plan.tokens[plan.reasoning_count :])})
    message["content"] = content
    message["stop_reason"] = _STOP[plan.finish]
    return message


def business_error(plan: Plan) -> dict[str, Any]:
    """Vendor failure inside an HTTP 200 body (compatible endpoints do this)."""
    return {
        "id": plan.request_id[4:],
        "type": "message",
        "content": None,
        "base_resp": {
            "status_code": plan.provider.business_error_code,
            "status_msg": plan.provider.business_error_message,
        },
    }


_ERRORS: dict[str, tuple[int, str, str]] = {
    "rate_limited": (429, "rate_limit_error", "Number of requests has exceeded your rate limit."),
    "quota_exhausted": (429, "rate_limit_error", "You have reached your specified spend limit."),
    "unavailable": (503, "api_error", "Service temporarily unavailable."),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "auth": (401, "authentication_error", "invalid x-api-key"),
    "bad_request": (400, "invalid_request_error", "Invalid request."),
}


def error_body(
    kind: str, plan: Plan | None, detail: str | None = None
) -> tuple[int, dict[str, Any]]:
    """HTTP status and Anthropic error object for an error kind."""
    request_id = plan.request_id if plan else None
    if kind == "context_overflow" and plan is not None:
        message = (
            f"prompt is too long: {plan.prompt_tokens} tokens > {plan.provider.max_context} maximum"
        )
        error: dict[str, Any] = {"type": "invalid_request_error", "message": message}
        return 400, {"type": "error", "error": error, "request_id": request_id}
    key = "overloaded" if kind == "stream_error" else kind
    status, type_, message = _ERRORS.get(key, _ERRORS["bad_request"])
    error = {"type": type_, "message": detail or message}
    if kind == "quota_exhausted":
        error["details"] = {"error_code": "enforced_spend_limit_reached"}
    return status, {"type": "error", "error": error, "request_id": request_id}
