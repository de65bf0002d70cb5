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
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import re
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from httpx._decoders import SUPPORTED_DECODERS  # what httpx decodes; it skips the rest

from probes.adapters.base import Request
from probes.adapters.sse import Comment, Event, LineTooLong, SSEParser
from probes.adapters.state import StreamState
from probes.adapters.warmup import WARMUP_LIMIT_S, warm_transport
from probes.timing import Timeline, now_ns

__all__ = ["Exchange", "execute"]

ERROR_BODY_LIMIT = 64 * 1024
BODY_LIMIT = 32 * 1024 * 1024
PARSE_SLICE = 64 * 1024  # decoded bytes parsed between two looks at the clock


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
    stale_retry: str | None = None  # why the first send was retried (see _stale_pooled)


class _Stalled(Exception):
    """Bytes keep coming but no token has for longer than the read timeout."""


class _TooLarge(Exception):
    """The decoded answer passed the probe's byte cap."""


class _NotAStream(Exception):
    """A 200 body with no event, comment or JSON in it: a portal or proxy page."""


_TITLE = re.compile(rb"<title[^>]*>([^<]{1,200})", re.I)


def _undecodable(headers: httpx.Headers) -> str | None:
    """The first content-encoding httpx has no decoder for, or None."""
    for value in headers.get_list("content-encoding", split_commas=True):
        coding = value.strip().lower()
        if coding and coding not in SUPPORTED_DECODERS:
            return coding
    return None


def _refuse_encoding(ex: Exchange, coding: str) -> None:
    """An error reply keeps its status (and so its class); a 200 is unreadable."""
    note = f"a body in content-encoding {coding}, which this client cannot decode"
    if ex.status is not None and 200 <= ex.status < 300:
        ex.failure, ex.detail = "malformed_stream", note
    else:
        ex.error_body = note


def _not_a_stream(content_type: str, head: bytes, expected: str = "an event stream") -> str:
    """What came instead of ``expected``, in a few words (the caller scrubs it)."""
    media = content_type.split(";")[0].strip()
    what = f"a body of type {media}" if media else "a body without a content-type"
    found = _TITLE.search(head)
    title = " ".join(found[1].decode("utf-8", "replace").split())[:80] if found else ""
    return f"{what}, not {expected}" + (f": {title!r}" if title else "")


class _Trace:
    """httpx trace hook: did this request open a new TCP connection?"""

    def __init__(self) -> None:
        self.seen = False
        self.connected = False
        self.connecting = False  # inside TCP connect or TLS handshake

    async def __call__(self, name: str, info: dict[str, Any]) -> None:
        del info
        self.seen = True
        if name.startswith(("connection.connect_tcp", "connection.start_tls")):
            self.connected = True
            self.connecting = name.endswith(".started")

    def reset(self) -> None:
        self.seen = self.connected = self.connecting = False

    @property
    def reused(self) -> bool | None:
        return (not self.connected) if self.seen else None


def _decode_json(raw: bytes) -> Any:
    text = raw.decode("utf-8", errors="replace").strip()  # DeepSeek pads with blank lines
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # nesting deeper than the parser's recursion limit
        return text[:500]


async def _read_limited(response: httpx.Response, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for piece in response.aiter_bytes():
        parts.append(piece)
        size += len(piece)
        if size >= limit:
            break
    return b"".join(parts)


async def _consume_stream(
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
                raise _TooLarge(max_bytes)
            if len(head) < ERROR_BODY_LIMIT:
                head += piece[: ERROR_BODY_LIMIT - len(head)]
            before = len(timeline.token_times)
            for start in range(0, len(piece), PARSE_SLICE):
                if time.monotonic() > deadline_at:
                    raise TimeoutError
                at = now_ns()
                events += _dispatch(
                    parser.feed(piece[start : start + PARSE_SLICE]), state, adapter, at
                )
            if state.done:
                timeline.finish()
                await _drain(chunks)
                return
            quiet = len(timeline.token_times) == before and timeline.first_token is not None
            if quiet and timeline.since_last_token_s > stall_s:
                raise _Stalled
    except httpx.TransportError:
        # A dropped connection still delivered what came before it: an error event or a
        # finish chunk whose blank line never arrived is applied, then the drop reported.
        _dispatch(parser.close(), state, adapter, now_ns())
        raise
    events += _dispatch(parser.close(), state, adapter, now_ns())
    if events or state.comments or not head.strip():
        return
    if head.strip()[:1] in (b"{", b"["):
        # A JSON body where a stream was asked for: MiniMax answers errors this way
        # (HTTP 200 + base_resp), some gateways too.
        adapter.on_body(_decode_json(bytes(head)), state)
        return
    raise _NotAStream(_not_a_stream(response.headers.get("content-type", ""), bytes(head)))


def _dispatch(items: list[Event | Comment], state: StreamState, adapter: Any, at: int) -> int:
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


async def _read_whole(response: httpx.Response, state: StreamState, adapter: Any, cap: int) -> None:
    """A non-streamed body: past ``cap`` it is too large (cut, it would only read as broken
    JSON), and one that cannot be JSON at all is named for what it is."""
    raw = await _read_limited(response, cap + 1)
    if len(raw) > cap:
        raise _TooLarge(cap)
    if raw.strip() and raw.strip()[:1] not in (b"{", b"[", b'"'):
        content_type = response.headers.get("content-type", "")
        raise _NotAStream(_not_a_stream(content_type, raw[:ERROR_BODY_LIMIT], "JSON"))
    adapter.on_body(_decode_json(raw), state)


async def _drain(chunks: AsyncIterator[bytes], limit_s: float = 0.25) -> None:
    """Read what follows the terminator (the chunked-encoding end), so the connection
    goes back to the pool instead of being closed; bounded, since it is not needed."""
    try:
        async with asyncio.timeout(limit_s):
            async for _ in chunks:
                pass
    except (TimeoutError, httpx.TransportError):
        pass


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
    trace = _Trace()
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
                if not _stale_pooled(exc, trace):
                    raise
                ex.stale_retry = _stale_note(exc, timeline)
                trace.reset()
                timeline.mark_sent()  # the row times the retry, not the dead socket
                response = await client.send(http_request, stream=True, follow_redirects=False)
            try:
                timeline.mark_headers()
                ex.status = response.status_code
                ex.reason = response.reason_phrase
                ex.headers = {k.lower(): v for k, v in response.headers.items()}
                ex.connection_reused = trace.reused
                coding = _undecodable(response.headers)
                if coding is not None:
                    _refuse_encoding(ex, coding)
                elif not 200 <= response.status_code < 300:
                    ex.error_body = _decode_json(await _read_limited(response, ERROR_BODY_LIMIT))
                elif request.stream:
                    await _consume_stream(
                        response, state, adapter, read_timeout_s, max_bytes, deadline_at
                    )
                else:
                    await _read_whole(response, state, adapter, min(BODY_LIMIT, max_bytes))
            finally:
                await response.aclose()
    except TimeoutError:
        _timed_out(ex, state, trace, f"overall deadline of {deadline_s:.1f} s passed")
    except _Stalled:
        ex.failure, ex.detail = "stall", f"no token for {read_timeout_s:.1f} s"
    except _NotAStream as exc:
        ex.failure, ex.detail = "malformed_stream", str(exc)
    except _TooLarge as exc:
        ex.failure = "response_too_large"
        ex.detail = f"the answer passed {exc.args[0]:,} decoded bytes; the rest was not read"
    except LineTooLong as exc:
        ex.failure, ex.detail = "malformed_stream", str(exc)
    except httpx.ConnectTimeout:
        where = _host_port(http_request.url)
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
        ex.failure, ex.detail = "connection_error", _connect_failure(exc, http_request.url)
    except httpx.TransportError as exc:
        # Connection refused, reset, or closed mid-body. A close after the finish reason is
        # how some servers end a stream (no [DONE]); that is not a failure.
        if state.finish_reason is None or ex.status is None:
            ex.failure, ex.detail = "connection_error", type(exc).__name__
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        ex.failure, ex.detail = "malformed_stream", f"unreadable response ({type(exc).__name__})"
    timeline.finish()
    if ex.connection_reused is None:
        ex.connection_reused = trace.reused
    return ex


def _stale_pooled(exc: httpx.TransportError, trace: _Trace) -> bool:
    """A send that failed on a reused connection before any response byte: the server had
    closed the pooled socket (some do after every response despite ``keep-alive``). That
    is a client artefact, not a provider failure, so it earns one retry; nothing else does."""
    if trace.reused is not True:
        return False
    if isinstance(exc, httpx.RemoteProtocolError):
        return "without sending a response" in str(exc)
    return True  # reset or broken pipe while sending or awaiting the status line


def _stale_note(exc: httpx.TransportError, timeline: Timeline) -> str:
    after_ms = (now_ns() - (timeline.sent or now_ns())) / 1e6
    return (
        f"retried once on a new connection: {type(exc).__name__} after {after_ms:.1f} ms "
        "on a reused connection the server had closed"
    )


def _host_port(url: httpx.URL) -> str:
    """``host:port`` of a URL; never its path or query, which may carry a key."""
    port = url.port or (443 if url.scheme == "https" else 80)
    return f"{url.host}:{port}"


def _connect_failure(exc: httpx.ConnectError, url: httpx.URL) -> str:
    """Which address refused, and why, from the OS error under httpx's wrapper."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__cause__ or cause.__context__
    while isinstance(cause, OSError) and cause.errno is None and cause.__cause__:
        cause = cause.__cause__  # anyio wraps the per-address errors in a bare OSError
    if isinstance(cause, socket.gaierror):
        reason = "host name not resolved"
    elif isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED:
        reason = "connection refused"
    elif isinstance(cause, OSError) and cause.errno:
        reason = os.strerror(cause.errno).lower()
    else:
        reason = "no connection"
    return f"ConnectError: cannot connect to {_host_port(url)} ({reason})"


def _timed_out(ex: Exchange, state: StreamState, trace: _Trace, why: str) -> None:
    if trace.connecting:
        ex.failure = "timeout_connect"
    elif state.timeline.first_token is None:
        ex.failure = "timeout_first_token"
    else:
        ex.failure = "stall"
    ex.detail = why
