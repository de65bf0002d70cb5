"""Feeding a streamed body into ``StreamState``, bounded by bytes, by the deadline and by
token silence.

The stream that keeps the socket busy with comments or drip-fed bytes but yields no token
for the read timeout after tokens began is a stall. A 200 body with no event or comment is
a JSON body (errors some providers send where a stream was asked for) or a page.

After a finish signal the answer is complete (providers.md: the finish reason is the clean
end; ``[DONE]``, ``message_stop`` and the close are framing). Usage may still follow, so the
client waits for more events, but at most ``FINISH_GRACE_S`` (or the read timeout, if
shorter); a server that then keeps the socket open in silence, or with only comments,
ends the read with ``OpenAfterFinish``, which is not a failure of the answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

from probes.adapters.body import (
    ERROR_BODY_LIMIT,
    NotAStream,
    TooLarge,
    decode_json,
    describe_body,
    drain,
    encoding_ended,
)
from probes.adapters.sse import Comment, Event, SSEParser
from probes.adapters.state import StreamState
from probes.timing import now_ns

__all__ = ["FINISH_GRACE_S", "PARSE_SLICE", "OpenAfterFinish", "Stalled", "consume_stream"]

PARSE_SLICE = 64 * 1024  # decoded bytes parsed between two looks at the clock
FINISH_GRACE_S = 5.0  # longest wait for usage or a terminator after the finish signal


class Stalled(Exception):
    """Bytes keep coming but no token has for longer than the read timeout."""


class OpenAfterFinish(Exception):
    """The answer finished, then no event and no close came within the wait for one."""


def finished(state: StreamState) -> bool:
    """A finish signal arrived and no provider error: the answer itself is complete."""
    return state.finish_reason is not None and state.error is None and not state.done


async def _next_piece(chunks: AsyncIterator[bytes], state: StreamState, wait_s: float) -> bytes:
    """The next decoded piece; after a finish signal, waited for at most ``wait_s``
    since the last event (comments do not extend it)."""
    if not finished(state):
        return await anext(chunks)
    last = state.timeline.last_event or now_ns()
    left = wait_s - (now_ns() - last) / 1e9
    if left <= 0:
        raise OpenAfterFinish(wait_s)
    limit = asyncio.timeout(left)
    try:
        async with limit:
            return await anext(chunks)
    except TimeoutError:
        if limit.expired():  # this wait's own; the overall deadline's propagates as it is
            raise OpenAfterFinish(wait_s) from None
        raise


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
    wait_s = min(stall_s, FINISH_GRACE_S)
    try:
        while True:
            try:
                piece = await _next_piece(chunks, state, wait_s)
            except StopAsyncIteration:
                encoding_ended(response)  # EOF before the terminator: was the body whole?
                break
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
            state.timeline.event(at)
            adapter.on_event(item, state, at)
    return events
