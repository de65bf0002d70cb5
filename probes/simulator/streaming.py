"""Play a plan over time: the SSE stream or the whole body, with faults.

The server really sleeps: TTFT, then each inter-token gap, on a schedule anchored at the
moment the request was received (so slow event-loop turns do not add up). Sleeps are
already multiplied by the scenario's ``time_scale`` in the plan.

Server-side truth for benchmarks: ``x-sim-received-ns`` (response header) is
``time.perf_counter_ns()`` when the handler started; a streamed response carries the
first-token write time as an SSE comment ``: sim-first-token-ns=<int>`` just before its
terminator (``data: [DONE]`` / ``event: message_stop``); a non-streamed response carries
it in the ``x-sim-first-token-ns`` header.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from types import ModuleType

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from probes.simulator.plan import Plan
from probes.simulator.state import SimState, reset_connection

__all__ = ["first_token_comment", "stream_body", "whole_body"]


def first_token_comment(ns: int) -> bytes:
    return f": sim-first-token-ns={ns}\n\n".encode()


async def _sleep_until(deadline: float) -> None:
    delay = deadline - time.perf_counter()
    if delay > 0:
        await asyncio.sleep(delay)


async def _forever() -> None:
    """Wait until cancelled (Starlette cancels the stream when the client disconnects)."""
    await asyncio.Event().wait()


async def _keepalive(state: SimState, line: bytes) -> AsyncIterator[bytes]:
    timing = state.scenario.fault_timing
    scale = state.scenario.time_scale
    end = time.perf_counter() + timing.keepalive_s * scale
    interval = max(timing.keepalive_interval_s * scale, 0.001)
    while True:
        yield line
        if time.perf_counter() + interval > end:
            break
        await asyncio.sleep(interval)
    await _sleep_until(end)


async def _drip(state: SimState, data: bytes, forever: bytes) -> AsyncIterator[bytes]:
    """One byte per interval: ``data``, then ``forever`` repeated until cancelled."""
    interval = max(state.scenario.fault_timing.drip_interval_s * state.scenario.time_scale, 0.001)
    for i in range(len(data)):
        yield data[i : i + 1]
        await asyncio.sleep(interval)
    while True:
        for i in range(len(forever)):
            yield forever[i : i + 1]
            await asyncio.sleep(interval)


async def stream_body(
    state: SimState, request: Request, plan: Plan, w: ModuleType, t0: float
) -> AsyncIterator[bytes]:
    """The SSE byte stream of ``plan`` in wire format ``w``."""
    fault = plan.fault
    preamble = w.preamble(plan)
    if preamble:
        yield preamble
    target = t0 + plan.ttft_s
    if fault == "keepalive_minute":
        async for line in _keepalive(state, b": keep-alive\n\n"):
            yield line
        target = time.perf_counter() + plan.ttft_s
    n = len(plan.tokens)
    first_ns = 0
    if fault == "huge_chunk" or n == 0:
        await _sleep_until(target)
        first_ns = time.perf_counter_ns()
        if n:
            yield w.huge(plan, state.scenario.fault_timing.huge_chunk_bytes)
        yield w.finish(plan) + first_token_comment(first_ns) + w.terminator(plan)
        return
    cut = min(n // 2, n - 1)
    error_at = max(1, n // 3) if plan.error == "stream_error" else None
    for i in range(n):
        if i > 0:
            target += plan.gaps_s[i - 1]
        await _sleep_until(target)
        if i == 0:
            first_ns = time.perf_counter_ns()
        if i == error_at:
            yield w.stream_error(plan) + first_token_comment(first_ns)
            return
        if i == cut and fault in ("truncated", "reset_mid_stream"):
            if fault == "reset_mid_stream":
                await reset_connection(request)
            return
        if i == cut and fault == "malformed_json":
            yield w.malformed(plan)
        if i == min(1, n - 1) and fault == "stall":
            await _forever()
        if i == min(1, n - 1) and fault == "slow_drip":
            rest = b"".join(w.token_event(plan, j) for j in range(i, n)) + w.finish(plan)
            async for byte in _drip(state, rest, b": drip\n\n"):
                yield byte
        yield w.token_event(plan, i)
    tail = w.finish(plan) + first_token_comment(first_ns)
    yield tail if fault == "no_done" else tail + w.terminator(plan)


async def whole_body(
    state: SimState, request: Request, plan: Plan, w: ModuleType, t0: float, headers: dict[str, str]
) -> Response:
    """A non-streamed response, after sleeping TTFT and the whole decode."""
    fault = plan.fault
    if fault == "stall":
        while (await request.receive())["type"] != "http.disconnect":
            pass
        return Response(status_code=499)
    payload = w.body(plan)
    if fault == "huge_chunk":
        payload["sim_padding"] = "x" * state.scenario.fault_timing.huge_chunk_bytes
    body = json.dumps(payload, ensure_ascii=False).encode()
    if fault in ("malformed_json", "no_done", "truncated"):
        body = body[: len(body) // 2]
    media = "text/html; charset=utf-8" if fault == "wrong_content_type" else "application/json"
    if fault in ("keepalive_minute", "reset_mid_stream", "slow_drip"):
        stream = _special_body(state, request, plan, t0, body, fault)
        extra = {"content-length": str(len(body))} if fault == "reset_mid_stream" else {}
        return StreamingResponse(stream, media_type=media, headers={**headers, **extra})
    await _sleep_until(t0 + plan.ttft_s)
    first_ns = time.perf_counter_ns()
    await _sleep_until(t0 + plan.ttft_s + sum(plan.gaps_s))
    timing = {"x-sim-first-token-ns": str(first_ns), "x-sim-sent-ns": str(time.perf_counter_ns())}
    return Response(body, media_type=media, headers={**headers, **timing})


async def _special_body(
    state: SimState, request: Request, plan: Plan, t0: float, body: bytes, fault: str
) -> AsyncIterator[bytes]:
    """Non-streamed bodies that misbehave after the headers went out."""
    if fault == "keepalive_minute":
        async for line in _keepalive(state, b"\n"):
            yield line
        t0 = time.perf_counter()
    await _sleep_until(t0 + plan.ttft_s + sum(plan.gaps_s))
    if fault == "slow_drip":
        async for byte in _drip(state, body, b" "):
            yield byte
    if fault == "reset_mid_stream":
        yield body[: len(body) // 2]
        await reset_connection(request)
        return
    yield body
