"""Anthropic Messages wire format (also Z.ai, MiniMax, DeepSeek, Kimi and DashScope routes).

Events: ``message_start`` (model, input usage) → content blocks (``text_delta`` is answer,
``thinking_delta`` is reasoning, other deltas ignored) → ``message_delta`` (stop reason,
cumulative usage) → ``message_stop``. ``ping`` and unknown events are ignored; ``event: error``
is an in-stream failure. Input usage excludes cache reads and writes; they are added back so
``input_tokens`` is the whole prompt as on the OpenAI wire.
"""

from __future__ import annotations

import json
from typing import Any

from probes.adapters.base import Request, auth_headers
from probes.adapters.presets import Preset
from probes.adapters.sse import Event
from probes.adapters.state import ProviderError, StreamState, error_fields

__all__ = ["WIRE", "build", "on_body", "on_event", "read_usage"]

WIRE = "anthropic"
VERSION = "2023-06-01"


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
        "max_tokens": max_tokens,
        "temperature": temperature,
        "stream": stream,
        **preset.body_fields,
    }
    headers = {
        "content-type": "application/json",
        "anthropic-version": VERSION,
        **preset.headers,
        **extra_headers,
    }
    headers.update(auth_headers(preset, WIRE, api_key))
    return Request(
        url=base_url.rstrip("/") + "/messages",
        headers=headers,
        body=body,
        stream=stream,
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_usage(usage: Any, state: StreamState) -> None:
    if not isinstance(usage, dict):
        return
    uncached = _int(usage.get("input_tokens"))
    read = _int(usage.get("cache_read_input_tokens"))
    written = _int(usage.get("cache_creation_input_tokens"))
    total = None if uncached is None else uncached + (read or 0) + (written or 0)
    state.usage.merge(
        input_tokens=total,
        output_tokens=_int(usage.get("output_tokens")),
        cached_tokens=read,
        cache_write_tokens=written,
    )


def _block_text(block: Any) -> tuple[str, str]:
    """(reasoning, answer) text carried by a content block or a delta."""
    if not isinstance(block, dict):
        return "", ""
    kind = block.get("type")
    if kind in ("thinking", "thinking_delta"):
        value = block.get("thinking")
        return (value if isinstance(value, str) else ""), ""
    if kind in ("text", "text_delta"):
        value = block.get("text")
        return "", value if isinstance(value, str) else ""
    return "", ""


def on_event(event: Event, state: StreamState, at: int) -> None:
    """Apply one SSE event of a Messages stream."""
    if not event.data.strip():
        return
    try:
        obj = json.loads(event.data)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than json can read
        if event.event == "error":  # gateways (Envoy, some proxies) name the error in plain text
            state.fail(ProviderError((), event.data.strip()[:500]))
        else:
            state.bad_event(f"undecodable {event.event} event: {event.data[:80]!r}")
        return
    if not isinstance(obj, dict):
        state.bad_event(f"{event.event} payload is not a JSON object")
        return
    kind = obj.get("type") or event.event
    if kind == "error" or event.event == "error" or "base_resp" in obj:
        error = error_fields(obj)
        if error is not None or kind == "error" or event.event == "error":
            state.fail(error or ProviderError((), "error event without details"))
            return
    elif kind == "message_start":
        message = obj.get("message")
        if isinstance(message, dict):
            state.model(message.get("model"))
            read_usage(message.get("usage"), state)
    elif kind == "content_block_start":
        state.chunk(*_block_text(obj.get("content_block")), at=at)
    elif kind == "content_block_delta":
        state.chunk(*_block_text(obj.get("delta")), at=at)
    elif kind == "message_delta":
        delta = obj.get("delta")
        if isinstance(delta, dict):
            state.finish(delta.get("stop_reason"))
        read_usage(obj.get("usage"), state)
    elif kind == "message_stop":
        state.terminate("message_stop")
    elif kind == "ping":
        state.comments += 1
    # content_block_stop and unknown event types carry nothing a probe needs


def on_body(body: Any, state: StreamState) -> None:
    """Apply a complete (non-streaming) Messages body."""
    if not isinstance(body, dict):
        state.bad_event("body is not a JSON object")
        return
    error = error_fields(body)
    if error is not None:
        state.fail(error)
        return
    state.model(body.get("model"))
    read_usage(body.get("usage"), state)
    reasoning, answer = [], []
    content = body.get("content")
    for block in content if isinstance(content, list) else []:
        r, a = _block_text(block)
        reasoning.append(r)
        answer.append(a)
    state.chunk("".join(reasoning), "".join(answer))
    state.finish(body.get("stop_reason"))
    state.done = state.finish_reason is not None
