"""Feeding a streamed body into ``StreamState``, bounded by bytes, by the deadline and by
token silence.

The stream that keeps the socket busy with comments or drip-fed bytes but yields no token
for the read timeout after tokens began is a stall. A 200 body with no event or comment is
a JSON body (errors some providers send where a stream was asked for) or a page.
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from probes.adapters.body import (
    ERROR_BODY_LIMIT,
    NotAStream,
    TooLarge,
    decode_json,
    describe_body,
    drain,
)
from probes.adapters.sse import Comment, Event, SSEParser
from probes.adapters.state import StreamState
from probes.timing import now_ns

__all__ = ["PARSE_SLICE", "Stalled", "consume_stream"]

PARSE_SLICE = 64 * 1024  # decoded bytes parsed between two looks at the clock


class Stalled(Exception):
    """Bytes keep coming but no token has for longer than the read timeout."""


async def consume_stream(
    response: httpx.Response,
    state: StreamState,
    adapter: Any,
    stall_s: float,
    max_bytes: int,
    deadline_at: float,
) -> None:
    """Feed the event stream into ``state``, bounded by decoded bytes (``max_bytes``) and
    by the deadline. One network read of a compressed bomb decodes to tens of megabytes in
    a single synchronous burst that no ``await`` interrupts, so a decoded piece is parsed
    in slices with the clock read between them."""
    parser = SSEParser()
    timeline = state.timeline
    head = bytearray()  # the start of the body, in case it is plain JSON, not SSE
    events = 0
    received = 0
    chunks = response.aiter_bytes()
    try:
        async for piece in chunks:
            received += len(piece)
            if received > max_bytes:
                raise TooLarge(max_bytes)
            if len(head) < ERROR_BODY_LIMIT:
                head += piece[: ERROR_BODY_LIMIT - len(head)]
            before = len(timeline.token_times)
            for start in range(0, len(piece), PARSE_SLICE):
                if time.monotonic() > deadline_at:
                    raise TimeoutError
                at = now_ns()
                events += dispatch(
                    parser.feed(piece[start : start + PARSE_SLICE]), state, adapter, at
                )
            if state.done:
                timeline.finish()
                await drain(chunks)
                return
            quiet = len(timeline.token_times) == before and timeline.first_token is not None
            if quiet and timeline.since_last_token_s > stall_s:
                raise Stalled
    except httpx.TransportError:
        # A dropped connection still delivered what came before it: an error event or a
        # finish chunk whose blank line never arrived is applied, then the drop reported.
        dispatch(parser.close(), state, adapter, now_ns())
        raise
    events += dispatch(parser.close(), state, adapter, now_ns())
    if events or state.comments or not head.strip():
        return
    if head.strip()[:1] in (b"{", b"["):
        # A JSON body where a stream was asked for: MiniMax answers errors this way
        # (HTTP 200 + base_resp), some gateways too.
        adapter.on_body(decode_json(bytes(head)), state)
        return
    raise NotAStream(describe_body(response.headers.get("content-type", ""), bytes(head)))


def dispatch(items: list[Event | Comment], state: StreamState, adapter: Any, at: int) -> int:
    """Hand parsed items to the adapter; the number of events among them. Nothing after a
    terminator is applied: the stream has ended, whatever a server sends behind it."""
    events = 0
    for item in items:
        if state.done:
            break
        if isinstance(item, Comment):
            state.comment(item.text)
        else:
            events += 1
            adapter.on_event(item, state, at)
    return events
