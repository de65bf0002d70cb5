"""One HTTP exchange, streamed, timed, bounded, and never raising.

Two clocks bound an attempt: httpx's per-read timeout (silence on the socket) and an overall
deadline (``asyncio.timeout``) that keep-alive comments cannot extend. A third rule catches
the stream that keeps the socket busy with comments or drip-fed bytes but yields no token for
``read_timeout_s`` after tokens began: that is a stall too. Whatever happens, the partial
timeline and text survive in ``StreamState`` and the failure becomes an error class.

One send is repeated: one that failed on a reused pooled connection before any response byte
(the server had closed it after the previous response). The row times the resend.

A body is only read as what it says it is: one in a content-encoding httpx cannot decode
(it would pass the bytes through as if plain) is refused, and a 200 body that holds no event,
no comment and no JSON is reported as the page it is, not as a stream that stopped early.

The parts live beside it: ``body`` (byte-capped reads, encodings, what a non-stream body
is), ``stream`` (the event stream into ``StreamState``), ``connection`` (new or pooled,
stale resend, connect failures); this module sends and turns every outcome into a class.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from probes.adapters.base import Request
from probes.adapters.body import (
    BODY_LIMIT,
    ERROR_BODY_LIMIT,
    CutEncoding,
    NotAStream,
    TooLarge,
    decode_json,
    read_limited,
    read_whole,
    undecodable,
)
from probes.adapters.connection import (
    Trace,
    connect_failure,
    host_port,
    not_http,
    stale_note,
    stale_pooled,
    tls_mismatch,
)
from probes.adapters.sse import LineTooLong
from probes.adapters.state import StreamState
from probes.adapters.stream import OpenAfterFinish, Stalled, consume_stream, finished
from probes.adapters.warmup import WARMUP_LIMIT_S, warm_transport

__all__ = ["Exchange", "execute"]


@dataclass(slots=True)
class Exchange:
    """Transport-level facts of one attempt (the content lives in ``StreamState``)."""

    status: int | None = None
    reason: str = ""  # the status line's reason phrase ("" over HTTP/2, or when none sent)
    headers: dict[str, str] = field(default_factory=dict)
    error_body: Any = None  # decoded JSON of a non-2xx body, or its text
    failure: str | None = None  # error class decided by the transport, if any
    detail: str | None = None
    connection_reused: bool | None = None
    stale_retry: str | None = None  # why the first send was retried (see connection.py)
    # The answer finished, then the server neither closed nor sent a terminator: how long
    # the client waited (the row is answered; its timeline ends at the last event)
    open_after_finish: str | None = None


def _refuse_encoding(ex: Exchange, coding: str) -> None:
    """An error reply keeps its status (and so its class); a 200 is unreadable."""
    note = f"a body in content-encoding {coding}, which this client cannot decode"
    if ex.status is not None and 200 <= ex.status < 300:
        ex.failure, ex.detail = "malformed_stream", note
    else:
        ex.error_body = note


async def execute(
    client: httpx.AsyncClient,
    request: Request,
    state: StreamState,
    adapter: Any,
    *,
    deadline_s: float,
    read_timeout_s: float,
    connect_timeout_s: float = 10.0,
    max_bytes: int = BODY_LIMIT,
) -> Exchange:
    """Send ``request`` and feed the response into ``state`` through ``adapter``."""
    ex = Exchange()
    deadline_at = time.monotonic() + deadline_s
    trace = Trace()
    timeout = httpx.Timeout(
        connect=min(connect_timeout_s, deadline_s),
        read=read_timeout_s,
        write=min(connect_timeout_s, deadline_s),
        pool=min(connect_timeout_s, deadline_s),
    )
    headers = dict(request.headers)
    if request.stream:
        headers.setdefault("accept", "text/event-stream")
        headers.setdefault("accept-encoding", "identity")  # compression buffers tokens
    http_request = client.build_request(
        "POST",
        request.url,
        headers=headers,
        content=json.dumps(request.body).encode(),
        timeout=timeout,
        extensions={"trace": trace},
    )
    timeline = state.timeline
    await warm_transport(min(deadline_s / 4, WARMUP_LIMIT_S))
    try:
        async with asyncio.timeout(deadline_s):
            timeline.mark_sent()
            try:
                response = await client.send(http_request, stream=True, follow_redirects=False)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                if not stale_pooled(exc, trace):
                    raise
                ex.stale_retry = stale_note(exc, timeline)
                trace.reset()
                timeline.mark_sent()  # the row times the retry, not the dead socket
                response = await client.send(http_request, stream=True, follow_redirects=False)
            try:
                timeline.mark_headers()
                ex.status = response.status_code
                ex.reason = response.reason_phrase
                ex.headers = {k.lower(): v for k, v in response.headers.items()}
                ex.connection_reused = trace.reused
                coding = undecodable(response.headers)
                if coding is not None:
                    _refuse_encoding(ex, coding)
                elif not 200 <= response.status_code < 300:
                    ex.error_body = decode_json(await read_limited(response, ERROR_BODY_LIMIT))
                elif request.stream:
                    await consume_stream(
                        response, state, adapter, read_timeout_s, max_bytes, deadline_at
                    )
                else:
                    await read_whole(response, state, adapter, min(BODY_LIMIT, max_bytes))
            finally:
                await response.aclose()
    except OpenAfterFinish as exc:
        _open_after_finish(ex, state, f"nothing for {exc.args[0]:.1f} s")
    except TimeoutError:
        _timed_out(ex, state, trace, f"overall deadline of {deadline_s:.1f} s passed")
    except Stalled:
        ex.failure, ex.detail = "stall", f"no token for {read_timeout_s:.1f} s"
    except (NotAStream, CutEncoding) as exc:
        ex.failure, ex.detail = "malformed_stream", str(exc)
    except TooLarge as exc:
        ex.failure = "response_too_large"
        ex.detail = f"the answer passed {exc.args[0]:,} decoded bytes; the rest was not read"
    except LineTooLong as exc:
        ex.failure, ex.detail = "malformed_stream", str(exc)
    except httpx.ConnectTimeout:
        where = host_port(http_request.url)
        ex.failure, ex.detail = "timeout_connect", f"ConnectTimeout: no connection to {where}"
    except httpx.PoolTimeout:
        ex.failure, ex.detail = "timeout_connect", "PoolTimeout: no free pooled connection"
    except httpx.ReadTimeout:
        _timed_out(ex, state, trace, f"no byte for {read_timeout_s:.1f} s")
    except httpx.WriteTimeout:
        # Connected, but the server stopped taking the request: silence, as when it takes it
        # and never answers (which the deadline reports), not a dropped connection.
        _timed_out(
            ex, state, trace, f"the server took no more of the request for {timeout.write} s"
        )
    except httpx.DecodingError as exc:
        ex.failure, ex.detail = "malformed_stream", f"undecodable body: {type(exc).__name__}"
    except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
        ex.failure, ex.detail = "bad_request", f"{type(exc).__name__}: request not sendable"
    except httpx.ConnectError as exc:
        # Something that does not speak TLS answered: unreadable, not absent.
        mismatch = tls_mismatch(exc, http_request.url)
        ex.failure = "connection_error" if mismatch is None else "malformed_stream"
        ex.detail = mismatch or connect_failure(exc, http_request.url)
    except httpx.TransportError as exc:
        # Connection refused, reset, or closed mid-body. A close after the finish reason is
        # how some servers end a stream (no [DONE]); that is not a failure. Bytes that were
        # no HTTP reply mean something else is listening: unreadable, not a drop.
        alien = not_http(exc, trace, http_request.url) if ex.status is None else None
        if alien is not None:
            ex.failure, ex.detail = "malformed_stream", alien
        elif state.finish_reason is None or ex.status is None:
            ex.failure, ex.detail = "connection_error", _transport_detail(exc)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        ex.failure, ex.detail = "malformed_stream", f"unreadable response ({type(exc).__name__})"
    timeline.finish()
    if ex.connection_reused is None:
        ex.connection_reused = trace.reused
    return ex


def _transport_detail(exc: httpx.TransportError) -> str:
    """The error's type and, for a reply that broke HTTP (an SSH banner, a bad status line,
    a chunk size that is not hex), what httpx saw; the runner masks any key in it."""
    name = type(exc).__name__
    seen = " ".join(str(exc).split())[:120]
    return f"{name}: {seen}" if isinstance(exc, httpx.RemoteProtocolError) and seen else name


def _open_after_finish(ex: Exchange, state: StreamState, why: str) -> None:
    """A complete answer whose connection stayed open: answered, and timed to its last
    event, since the wait for a close is the client's, not the answer's latency."""
    ex.open_after_finish = f"no terminator or close after the finish signal: {why}"
    state.timeline.end_at_last_event()


def _timed_out(ex: Exchange, state: StreamState, trace: Trace, why: str) -> None:
    if finished(state):  # silence after the finish signal: the deadline came first
        _open_after_finish(ex, state, why)
        return
    if trace.connecting:
        ex.failure = "timeout_connect"
    elif state.timeline.first_token is None:
        ex.failure = "timeout_first_token"
    else:
        ex.failure = "stall"
    ex.detail = why
