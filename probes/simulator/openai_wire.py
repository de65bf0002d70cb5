"""Render a ``Plan`` as OpenAI Chat Completions (SSE chunks or one JSON body).

Wire details follow the real API: a role chunk first, ``delta.reasoning_content`` for
reasoning (DeepSeek/GLM/Kimi style) or inline ``<think>`` tags, a finish chunk with an
empty delta, with ``stream_options.include_usage`` one more chunk whose ``choices`` is
empty and which carries ``usage``, then ``data: [DONE]``.
"""

from __future__ import annotations

import json
import time
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


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"


def _chunk(plan: Plan, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "id": f"chatcmpl-{plan.request_id[4:]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": plan.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if plan.spec.include_usage:
        chunk["usage"] = None
    return chunk


def usage(plan: Plan) -> dict[str, Any]:
    return {
        "prompt_tokens": plan.prompt_tokens,
        "completion_tokens": plan.completion_count,
        "total_tokens": plan.prompt_tokens + plan.completion_count,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": plan.reasoning_count},
    }


def _delta(plan: Plan, i: int) -> dict[str, Any]:
    token = plan.tokens[i]
    if i < plan.reasoning_count and not plan.think_tags:
        return {"content": None, "reasoning_content": token}
    return {"content": token}


def _logprobs(plan: Plan) -> dict[str, Any]:
    """``choice.logprobs`` of the first token, as OpenAI and llama.cpp send it."""
    top = [{"token": t, "logprob": lp} for t, lp in plan.first_logprobs]
    own = next((lp for t, lp in plan.first_logprobs if t == plan.tokens[0]), top[-1]["logprob"])
    return {"content": [{"token": plan.tokens[0], "logprob": own, "top_logprobs": top}]}


def preamble(plan: Plan) -> bytes:
    del plan
    return b""


def token_event(plan: Plan, i: int) -> bytes:
    """The chunk carrying token ``i`` (the first one is preceded by the role chunk)."""
    chunk = _chunk(plan, _delta(plan, i))
    if i == 0 and plan.first_logprobs:
        chunk["choices"][0]["logprobs"] = _logprobs(plan)
    out = _sse(chunk)
    if i == 0:
        return _sse(_chunk(plan, {"role": "assistant", "content": ""})) + out
    return out


def finish(plan: Plan) -> bytes:
    """Finish chunk, plus the usage chunk when the client asked for it."""
    out = _sse(_chunk(plan, {}, plan.finish))
    if plan.spec.include_usage:
        chunk = _chunk(plan, {})
        chunk["choices"] = []
        chunk["usage"] = usage(plan)
        out += _sse(chunk)
    return out


def terminator(plan: Plan) -> bytes:
    del plan
    return b"data: [DONE]\n\n"


def stream_error(plan: Plan | None = None) -> bytes:
    """A mid-stream error: one data line with an ``error`` object and no ``choices``."""
    del plan
    message = "The server had an error while processing your request. Sorry about that!"
    return _sse(
        {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
    )


def malformed(plan: Plan) -> bytes:
    text = json.dumps(_chunk(plan, {"content": "..."}))
    return b"data: " + text[: len(text) // 2].encode() + b"\n\n"


def huge(plan: Plan, padding: int) -> bytes:
    """The whole answer in one chunk, padded with a field clients must ignore."""
    reasoning = "".join(plan.reasoning_tokens)
    text = "".join(plan.tokens[plan.reasoning_count :])
    delta: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning and not plan.think_tags:
        delta["reasoning_content"] = reasoning
    elif reasoning:
        delta["content"] = reasoning + text
    chunk = _chunk(plan, delta)
    chunk["sim_padding"] = "x" * padding
    return _sse(chunk)


def body(plan: Plan) -> dict[str, Any]:
    """Non-streaming ``chat.completion`` object."""
    reasoning = "".join(plan.reasoning_tokens)
    text = "".join(plan.tokens[plan.reasoning_count :])
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning and plan.think_tags:
        message["content"] = reasoning + text
    elif reasoning:
        message["reasoning_content"] = reasoning
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": plan.finish}
    if plan.first_logprobs:
        choice["logprobs"] = _logprobs(plan)
    return {
        "id": f"chatcmpl-{plan.request_id[4:]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": plan.model,
        "choices": [choice],
        "usage": usage(plan),
    }


def business_error(plan: Plan) -> dict[str, Any]:
    """MiniMax-style failure inside an HTTP 200 body."""
    return {
        "id": plan.request_id[4:],
        "choices": None,
        "model": plan.model,
        "base_resp": {
            "status_code": plan.provider.business_error_code,
            "status_msg": plan.provider.business_error_message,
        },
    }


_ERRORS: dict[str, tuple[int, str, str | None, str]] = {
    "rate_limited": (429, "requests", "rate_limit_exceeded", "Rate limit reached for requests"),
    "quota_exhausted": (
        429,
        "insufficient_quota",
        "insufficient_quota",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    "unavailable": (503, "server_error", None, "The server is temporarily unavailable."),
    "overloaded": (
        503,
        "service_unavailable_error",
        "server_is_overloaded",
        "The server is overloaded. Please try again later.",
    ),
    "auth": (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    "bad_request": (400, "invalid_request_error", None, "Invalid request."),
}


def error_body(
    kind: str, plan: Plan | None, detail: str | None = None
) -> tuple[int, dict[str, Any]]:
    """HTTP status and OpenAI error object for an error kind."""
    if kind == "context_overflow" and plan is not None:
        message = (
            f"This model's maximum context length is {plan.provider.max_context} tokens. "
            f"However, your messages resulted in {plan.prompt_tokens} tokens."
        )
        return 400, {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
    key = "overloaded" if kind == "stream_error" else kind
    status, type_, code, message = _ERRORS.get(key, _ERRORS["bad_request"])
    return status, {
        "error": {"message": detail or message, "type": type_, "param": None, "code": code}
    }
