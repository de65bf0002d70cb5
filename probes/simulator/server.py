"""The simulator's ASGI app: several simulated providers behind one loopback port.

Routes (``{provider}`` is a scenario provider name; both wire formats are served for
every provider, as vendors with an Anthropic-compatible route do):

* ``POST /{provider}/v1/chat/completions`` - OpenAI Chat Completions
* ``POST /{provider}/v1/messages`` - Anthropic Messages
* ``GET /{provider}/v1/models`` - the model list
* ``POST /{provider}/tokenize`` - llama.cpp-style token count ({"content"} -> {"tokens"})
* ``GET /_sim/state[?at=ISO]`` - phase, multipliers and demand per provider (JSON)
* ``GET /_sim/health``, ``GET /_sim/moved`` (target of the ``redirect`` fault)

Request headers that steer one request: ``x-sim-fault`` (``probes.simulator.faults``),
``x-sim-error`` (``plan.ON_DEMAND_ERRORS``), ``x-sim-quality`` (``answers.QUALITY_MODES``),
``x-sim-at`` (scenario instant, ISO 8601 or Unix seconds), ``x-sim-seed`` (integer).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, MutableMapping
from dataclasses import replace
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from probes.simulator import anthropic_wire, model, openai_wire, streaming
from probes.simulator.answers import QUALITY_MODES
from probes.simulator.faults import FAULTS, NO_FAULT
from probes.simulator.first_token import sampling_of
from probes.simulator.plan import ON_DEMAND_ERRORS, Plan, RequestSpec, make_plan
from probes.simulator.state import TRANSPORT_KEY, SimState, reset_connection
from probes.simulator.tokens import count_tokens
from probes.tasks.base import parse_header

__all__ = ["SimState", "create_app", "describe"]

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]
_BAD_GATEWAY = (
    "<html><head><title>502 Bad Gateway</title></head>"
    "<body><center><h1>502 Bad Gateway</h1></center></body></html>"
)
_WIRES: dict[str, ModuleType] = {"openai": openai_wire, "anthropic": anthropic_wire}


class _CaptureTransport:
    """Expose the connection's transport so faults can reset the TCP connection.

    ASGI has no "abort the socket" message; uvicorn's ``send`` is a bound method of its
    request cycle, which holds the transport. Without it, resets degrade to closes.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope[TRANSPORT_KEY] = getattr(getattr(send, "__self__", None), "transport", None)
        await self.app(scope, receive, send)


def create_app(state: SimState) -> ASGIApp:
    """The ASGI application for a scenario."""

    async def chat(request: Request) -> Response:
        return await _handle(state, request, "openai")

    async def messages(request: Request) -> Response:
        return await _handle(state, request, "anthropic")

    async def models(request: Request) -> Response:
        provider = _provider(state, request)
        if provider is None:
            return JSONResponse({"error": {"message": "unknown provider"}}, status_code=404)
        data = [{"id": provider.model_at(_day(state, state.now())), "object": "model"}]
        return JSONResponse({"object": "list", "data": data})

    async def tokenize(request: Request) -> Response:
        """llama.cpp's /tokenize: {"content": text} -> {"tokens": [...]}, this tokenizer."""
        if _provider(state, request) is None:
            return JSONResponse({"error": {"message": "unknown provider"}}, status_code=404)
        try:
            content = (await request.json())["content"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": {"message": "expected {content}"}}, status_code=400)
        return JSONResponse({"tokens": list(range(count_tokens(str(content))))})

    async def sim_state(request: Request) -> Response:
        at = _parse_at(request.query_params.get("at")) or state.now()
        return JSONResponse(describe(state, at))

    async def health(request: Request) -> Response:
        del request
        return JSONResponse({"ok": True, "scenario": state.scenario.name})

    async def moved(request: Request) -> Response:
        del request
        return Response("<html><body><h1>Moved</h1></body></html>", media_type="text/html")

    routes = [
        Route("/{provider}/v1/chat/completions", chat, methods=["POST"]),
        Route("/{provider}/v1/messages", messages, methods=["POST"]),
        Route("/{provider}/v1/models", models, methods=["GET"]),
        Route("/{provider}/tokenize", tokenize, methods=["POST"]),
        Route("/_sim/state", sim_state, methods=["GET"]),
        Route("/_sim/health", health, methods=["GET"]),
        Route("/_sim/moved", moved, methods=["GET", "POST"]),
    ]
    return _CaptureTransport(Starlette(routes=routes))


def describe(state: SimState, at: datetime) -> dict[str, Any]:
    """Phase, multipliers and demand of every provider at ``at`` (the /_sim/state body)."""
    t = np.array([at.timestamp()])
    days = model.days_since(state.start, t)
    out: dict[str, Any] = {
        "at": at.isoformat(),
        "start": state.start.isoformat(),
        "day": float(days[0]),
    }
    providers = {}
    for provider in state.scenario.providers:
        pv = model.phase_values(provider, days)
        rhythm = state.scenario.rhythm_of(provider)
        dem = model.demand(rhythm, t)
        providers[provider.name] = {
            "stage": provider.phases[int(pv.index[0])].stage,
            "model": provider.model_at(float(days[0])),
            "demand": float(dem[0]),
            "latency_short": float(pv.latency_short[0]),
            "latency_long": float(pv.latency_long[0]),
            "speed": float(pv.speed[0]),
            "rate_limit": float(pv.rate_limit[0]),
            "quantized": float(pv.quantized[0]),
            "error_probabilities": {
                k: float(v[0])
                for k, v in model.error_probabilities(provider, rhythm, pv, dem).items()
            },
        }
    out["providers"] = providers
    return out


def _day(state: SimState, at: datetime) -> float:
    return (at - state.start).total_seconds() / 86_400.0


def _provider(state: SimState, request: Request) -> Any:
    try:
        return state.scenario.provider(request.path_params["provider"])
    except KeyError:
        return None


def _parse_at(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        return datetime.fromtimestamp(float(raw), UTC)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _parse_body(body: Any, wire: str) -> tuple[list[str], bool, bool, int]:
    """Message texts (system first), stream flag, include_usage and max tokens."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise ValueError("body must be a JSON object with a 'messages' array")
    texts = [_texts(body["system"])] if wire == "anthropic" and "system" in body else []
    texts += [_texts(m.get("content")) for m in body["messages"] if isinstance(m, dict)]
    stream = bool(body.get("stream", False))
    options = body.get("stream_options") or {}
    include_usage = bool(isinstance(options, dict) and options.get("include_usage"))
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or 4096
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError("max_tokens must be a positive integer")
    return [t for t in texts if t], stream, include_usage, limit


async def _handle(state: SimState, request: Request, wire: str) -> Response:
    received_ns = time.perf_counter_ns()
    w = _WIRES[wire]
    provider = _provider(state, request)
    base = {"x-sim-received-ns": str(received_ns)}
    if provider is None:
        status, payload = w.error_body("bad_request", None, "unknown provider")
        return JSONResponse(payload, status_code=404, headers=base)
    try:
        body = await request.body()
    except ClientDisconnect:  # the client gave up (its deadline) before sending it all
        return Response(status_code=499, headers=base)  # nobody reads it
    try:
        raw = json.loads(body)
        texts, stream, include_usage, max_tokens = _parse_body(raw, wire)
        spec = _spec(request, wire, texts, stream, include_usage, max_tokens)
        spec = replace(spec, sampling=sampling_of(raw))
    except ValueError as exc:
        status, payload = w.error_body("bad_request", None, str(exc))
        return JSONResponse(payload, status_code=status, headers=base)
    at = _parse_at(request.headers.get("x-sim-at")) or state.now()
    name = provider.name
    plan = make_plan(
        state.scenario,
        provider,
        spec,
        at=at,
        start=state.start,
        inflight=state.inflight.get(name, 0),
        counter=next(state.counter),
    )
    state.inflight[name] = state.inflight.get(name, 0) + 1
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            state.inflight[name] -= 1

    try:
        response = await _respond(state, request, plan, w, received_ns, at)
    except BaseException:
        release()
        raise
    if isinstance(response, StreamingResponse):
        response.body_iterator = _released(response.body_iterator, release)
    else:
        release()
    return response


async def _released(body: AsyncIterable[Any], release: Callable[[], None]) -> AsyncIterator[Any]:
    """Pass a streamed body through and count the request done when it ends or dies."""
    try:
        async for chunk in body:
            yield chunk
    finally:
        release()


def _spec(
    request: Request,
    wire: str,
    texts: list[str],
    stream: bool,
    include_usage: bool,
    max_tokens: int,
) -> RequestSpec:
    headers = request.headers
    fault = headers.get("x-sim-fault")
    if fault is not None and fault != NO_FAULT and fault not in FAULTS:
        raise ValueError(f"x-sim-fault: unknown fault {fault!r}; known: {sorted(FAULTS)}")
    error = headers.get("x-sim-error")
    if error is not None and error not in ON_DEMAND_ERRORS:
        raise ValueError(f"x-sim-error: unknown error {error!r}; known: {list(ON_DEMAND_ERRORS)}")
    quality = headers.get("x-sim-quality")
    if quality is not None and quality not in QUALITY_MODES:
        raise ValueError(f"x-sim-quality: unknown mode {quality!r}; known: {list(QUALITY_MODES)}")
    seed_raw = headers.get("x-sim-seed")
    task = next((t for t in texts if parse_header(t)), texts[-1] if texts else "")
    return RequestSpec(
        wire=wire,
        prompt="\n".join(texts),
        task_prompt=task,
        stream=stream,
        include_usage=include_usage,
        max_tokens=max_tokens,
        fault=fault,
        error=error,
        quality=quality,
        seed=int(seed_raw) if seed_raw and seed_raw.lstrip("-").isdigit() else None,
    )


def _headers(plan: Plan, wire: str, received_ns: int, at: datetime) -> dict[str, str]:
    headers = {
        "x-sim-received-ns": str(received_ns),
        "x-sim-phase": plan.stage,
        "x-sim-plan": plan.debug_header(),
        "x-sim-scenario-time": at.isoformat(),
        ("x-request-id" if wire == "openai" else "request-id"): plan.request_id,
        **plan.rate_headers,
    }
    if plan.retry_after_s is not None:
        headers["retry-after"] = str(plan.retry_after_s)
    return headers


async def _sleep_until(deadline: float) -> None:
    delay = deadline - time.perf_counter()
    if delay > 0:
        await asyncio.sleep(delay)


async def _respond(
    state: SimState,
    request: Request,
    plan: Plan,
    w: ModuleType,
    received_ns: int,
    at: datetime,
) -> Response:
    headers = _headers(plan, plan.spec.wire, received_ns, at)
    scale = state.scenario.time_scale
    t0 = received_ns / 1e9
    fault = plan.fault
    if fault == "reset_before_headers":
        await reset_connection(request)
        return Response(status_code=499)
    if fault == "html_502":
        await _sleep_until(t0 + plan.ttft_s)
        page = _BAD_GATEWAY
        return Response(page, status_code=502, media_type="text/html", headers=headers)
    if fault == "redirect":
        target = str(request.base_url).rstrip("/") + "/_sim/moved"
        return Response(status_code=302, headers={**headers, "location": target})
    if plan.error is not None and not (plan.error == "stream_error" and plan.spec.stream):
        await _sleep_until(t0 + plan.provider.base_latency_ms / 1000.0 * scale)
        if plan.error == "business_error":
            return _business(plan, w, headers)
        status, payload = w.error_body(plan.error, plan)
        return JSONResponse(payload, status_code=status, headers=headers)
    if plan.spec.stream:
        body = streaming.stream_body(state, request, plan, w, t0)
        return StreamingResponse(
            body, media_type="text/event-stream", headers=_sse_headers(headers, fault)
        )
    return await streaming.whole_body(state, request, plan, w, t0, headers)


def _sse_headers(headers: dict[str, str], fault: str | None) -> dict[str, str]:
    out = {**headers, "cache-control": "no-cache"}
    if fault == "wrong_content_type":
        out["content-type"] = "text/html; charset=utf-8"
    return out


def _business(plan: Plan, w: ModuleType, headers: dict[str, str]) -> Response:
    payload = w.business_error(plan)
    if not plan.spec.stream:
        return JSONResponse(payload, headers=headers)
    data = b"data: " + json.dumps(payload).encode() + b"\n\n"
    return Response(data, media_type="text/event-stream", headers=headers)
