"""OpenAI Chat Completions wire format (and every provider that imitates it).

Reads, for every preset: reasoning from ``reasoning_content``, ``reasoning`` or
``reasoning_details``; answer from ``content`` (``<think>`` tags split off when the preset says
so); usage from a final empty-``choices`` chunk, from ``choices[0].usage`` (Moonshot) or from
every chunk (MiniMax, some GLM resellers), merged as cumulative; errors from ``data: {"error"}``
events, Gemini's list-wrapped bodies and MiniMax ``base_resp`` codes even inside a 200.
Also kept: ``system_fingerprint``, the upstream a router names in ``provider`` (OpenRouter)
and, when asked for, the first token's top logprobs.
"""

from __future__ import annotations

import json
import math
from typing import Any

from probes.adapters.base import Request, auth_headers
from probes.adapters.presets import Preset
from probes.adapters.sse import Event
from probes.adapters.state import StreamState, error_fields

__all__ = ["WIRE", "build", "on_body", "on_event", "read_usage"]

WIRE = "openai"


def build(
    *,
    base_url: str,
    model: str,
    prompt: str,
    max_tokens: int,
    temperature: float,
    stream: bool,
    preset: Preset,
    api_key: str | None,
    extra_headers: dict[str, str],
) -> Request:
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        preset.max_tokens_field: max_tokens,
        "temperature": temperature,
        "stream": stream,
        **preset.body_fields,
    }
    if stream:
        body.update(preset.stream_fields)
    headers = {"content-type": "application/json", **preset.headers, **extra_headers}
    headers.update(auth_headers(preset, WIRE, api_key))
    return Request(
        url=base_url.rstrip("/") + "/chat/completions",
        headers=headers,
        body=body,
        stream=stream,
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _cost(value: Any) -> float | None:
    """A reported cost in USD, or None unless it is a finite, non-negative number: the
    budget guard adds it up, and one NaN (JSON allows ``NaN``) or negative figure from a
    server would disable the cap for the rest of the day."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        cost = float(value)
    except OverflowError:  # an integer beyond any float
        return None
    return cost if math.isfinite(cost) and cost >= 0 else None


def read_usage(usage: Any, state: StreamState, *, excludes_cache: bool) -> None:
    """Merge an OpenAI-style usage object (any provider's variant) into ``state.usage``."""
    if not isinstance(usage, dict):
        return
    prompt_details = usage.get("prompt_tokens_details")
    prompt_details = prompt_details if isinstance(prompt_details, dict) else {}
    output_details = usage.get("completion_tokens_details")
    output_details = output_details if isinstance(output_details, dict) else {}
    cached = _int(prompt_details.get("cached_tokens"))
    for alt in ("prompt_cache_hit_tokens", "cached_tokens", "cache_read_input_tokens"):
        cached = cached if cached is not None else _int(usage.get(alt))
    written = _int(prompt_details.get("cache_write_tokens"))
    prompt = _int(usage.get("prompt_tokens"))
    if prompt is not None and excludes_cache:  # as Anthropic's: add reads and writes back
        prompt += (cached or 0) + (written or 0)
    cost = _cost(usage.get("cost"))
    if cost is not None:
        state.usage.reported_cost = cost
    state.usage.merge(
        input_tokens=prompt,
        output_tokens=_int(usage.get("completion_tokens")),
        cached_tokens=cached,
        reasoning_tokens=_int(output_details.get("reasoning_tokens")),
        cache_write_tokens=written,
    )


def _reasoning_text(delta: dict[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        value = delta.get(key)
        if isinstance(value, str) and value:
            return value
    details = delta.get("reasoning_details")
    if isinstance(details, list):
        parts = [d.get("text") or d.get("summary") for d in details if isinstance(d, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def _apply(obj: Any, state: StreamState, at: int | None, *, message_key: str) -> None:
    if isinstance(obj, list):  # Gemini's OpenAI route may wrap bodies in a list
        obj = obj[0] if obj else None
    if not isinstance(obj, dict):
        what = "event payload" if message_key == "delta" else "body"
        state.bad_event(f"{what} is not a JSON object")
        return
    error = error_fields(obj)
    if error is not None:
        state.fail(error)
    state.model(obj.get("model"))
    state.fingerprint(obj.get("system_fingerprint"))
    state.upstream(obj.get("provider"))  # OpenRouter: the upstream that served it (§11)
    excludes = state.usage_excludes_cache
    read_usage(obj.get("usage"), state, excludes_cache=excludes)
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return  # usage-only chunk (choices: []), error event, or an unknown extra
    choice = choices[0]
    read_usage(choice.get("usage"), state, excludes_cache=excludes)
    delta = choice.get(message_key)
    if isinstance(delta, dict):
        content = delta.get("content")
        state.chunk(_reasoning_text(delta), content if isinstance(content, str) else "", at=at)
    _read_logprobs(choice.get("logprobs"), state)
    state.finish(choice.get("finish_reason"))


def _read_logprobs(logprobs: Any, state: StreamState) -> None:
    """``choice.logprobs.content[0].top_logprobs`` (OpenAI, llama.cpp, vLLM)."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if isinstance(content, list) and content and isinstance(content[0], dict):
        state.top_logprobs(content[0].get("top_logprobs"))


def on_event(event: Event, state: StreamState, at: int) -> None:
    """Apply one SSE event of a chat-completions stream."""
    data = event.data.strip()
    if data == "[DONE]":
        state.terminate("[DONE]")
        return
    if not data:
        return
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than json can read
        state.bad_event(f"undecodable data event: {data[:80]!r}")
        return
    _apply(obj, state, at, message_key="delta")


def on_body(body: Any, state: StreamState) -> None:
    """Apply a complete (non-streaming) chat-completion body."""
    _apply(body, state, None, message_key="message")
    state.done = state.error is None and state.finish_reason is not None
