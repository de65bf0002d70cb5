"""What the connection under a send did: new or pooled, stale, refused, and where.

A send that failed on a reused pooled connection before any response to it is a client
artefact (the server had closed the socket after its previous response, or that response
left bytes behind its stated length), so it earns one resend; a refused or unresolved
connect is named by ``host:port`` only, never the URL's path or query, which may carry a key.

A server that answers with bytes that are not an HTTP reply (an SSH banner, a TLS alert,
noise) is told apart from one that accepted and closed in silence by counting what the
connection this request opened received: httpcore reports both as "disconnected without
sending a response" when the bytes hold no complete header block. ``ProbeTransport``
(transport.py) counts them on public API; other transports get a wrapped ``read``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import ssl
from typing import Any

import httpx

from probes.adapters.transport import HEAD_KEPT, CountingStream
from probes.timing import Timeline, now_ns

__all__ = [
    "Trace",
    "connect_failure",
    "host_port",
    "not_http",
    "stale_note",
    "stale_pooled",
    "tls_mismatch",
]

SAMPLE_BYTES = 40  # of the first bytes a connection received, named in the detail


class Trace:
    """httpx trace hook: did this request open a new TCP connection, and what did it
    receive? A ``ProbeTransport`` connection counts its own bytes (public API); on any
    other transport the new stream's ``read`` is wrapped instead (``_wrap_reads``)."""

    def __init__(self) -> None:
        self.seen = False
        self.connected = False
        self.connecting = False  # inside TCP connect or TLS handshake
        self._counted: CountingStream | None = None  # the connection this request opened
        self._received = 0  # what _wrap_reads counted, when no CountingStream did
        self._head = b""

    async def __call__(self, name: str, info: dict[str, Any]) -> None:
        self.seen = True
        if name.startswith(("connection.connect_tcp", "connection.start_tls")):
            self.connected = True
            self.connecting = name.endswith(".started")
        if name in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            if isinstance(stream, CountingStream):
                self._counted = stream  # after TLS, the decrypted stream
            else:
                self._wrap_reads(stream)

    @property
    def received(self) -> int:
        """Bytes read on the connection this request opened."""
        return self._counted.received if self._counted is not None else self._received

    @property
    def head(self) -> bytes:
        """The first of them (up to ``HEAD_KEPT``)."""
        return self._counted.head if self._counted is not None else self._head

    def _wrap_reads(self, stream: Any) -> None:
        """Fallback for a transport that is not ``ProbeTransport`` (a plain
        ``httpx.AsyncClient``): replace the new stream's ``read`` on the instance. It leans
        on httpcore calling ``read`` on that very object, which no API promises;
        tests/test_not_http_replies.py fails if an httpcore upgrade breaks it."""
        read = getattr(stream, "read", None)
        if read is None:
            return

        async def counted(max_bytes: int, timeout: float | None = None) -> bytes:
            data: bytes = await read(max_bytes, timeout)
            if self._received < HEAD_KEPT:
                self._head += data[: HEAD_KEPT - self._received]
            self._received += len(data)
            return data

        with contextlib.suppress(AttributeError):  # a stream with __slots__: the count stays 0
            stream.read = counted

    def reset(self) -> None:
        self.seen = self.connected = self.connecting = False
        self._counted, self._received, self._head = None, 0, b""

    @property
    def reused(self) -> bool | None:
        return (not self.connected) if self.seen else None


def stale_pooled(exc: httpx.TransportError, trace: Trace) -> bool:
    """A send that failed on a reused connection before any response to it: the server had
    closed the pooled socket (some do after every response despite ``keep-alive``), or the
    previous response left bytes on it past its ``Content-Length``, which then read as this
    one's status line. Either is a client artefact, not a provider failure, so it earns one
    resend on a new connection; nothing else does."""
    del exc  # closed, reset, broken pipe or garbage before this request's status line
    return trace.reused is True


def stale_note(exc: httpx.TransportError, timeline: Timeline) -> str:
    after_ms = (now_ns() - (timeline.sent or now_ns())) / 1e6
    why = "the server had closed"
    if isinstance(exc, httpx.RemoteProtocolError) and "status line" in str(exc):
        why = "holding bytes past the previous response's end"
    return (
        f"retried once on a new connection: {type(exc).__name__} after {after_ms:.1f} ms "
        f"on a reused connection {why}"
    )


def host_port(url: httpx.URL) -> str:
    """``host:port`` of a URL; never its path or query, which may carry a key."""
    port = url.port or (443 if url.scheme == "https" else 80)
    return f"{url.host}:{port}"


def connect_failure(exc: httpx.ConnectError, url: httpx.URL) -> str:
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
    return f"ConnectError: cannot connect to {host_port(url)} ({reason})"


# The start of a status line ("HTTP/1.1 200"), or any prefix of one the close cut short.
_STATUS_START = re.compile(rb"HTTP/[0-9](\.[0-9])? [0-9]{3}[ \r\n]")
_PROTOCOL_FAILURES = (httpx.RemoteProtocolError, httpx.ReadError)


def _status_prefix(head: bytes) -> bool:
    sample = b"HTTP/1.1 200 "
    return bool(_STATUS_START.match(head)) or sample.startswith(head[: len(sample)])


def not_http(exc: httpx.TransportError, trace: Trace, url: httpx.URL) -> str | None:
    """What answered instead of HTTP, or None: bytes that do not begin a status line, or
    a status line h11 refused; a reply cut inside a valid head is a drop, not this. Only
    the first bytes are named (printable, cut), never the request."""
    if not isinstance(exc, _PROTOCOL_FAILURES) or trace.received == 0:
        return None
    cut = isinstance(exc, httpx.ReadError) or "without sending a response" in str(exc)
    if cut and _status_prefix(trace.head):
        return None
    sample = trace.head[:SAMPLE_BYTES]
    if trace.received > len(sample):  # a word cut here could be part of a key: drop it
        sample = re.sub(rb"\S+\Z", b"", sample)
    seen = sample.decode("ascii", "backslashreplace")
    return f"not an HTTP reply from {host_port(url)}: {trace.received} bytes beginning {seen!r}"


def tls_mismatch(exc: httpx.ConnectError, url: httpx.URL) -> str | None:
    """A TLS handshake the server did not speak (a plain-HTTP port behind an https URL),
    or None; a certificate the client refused is a different failure and not this."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ssl.SSLError):
        cause = cause.__cause__ or cause.__context__
    if cause is None or isinstance(cause, ssl.SSLCertVerificationError):
        return None
    why = getattr(cause, "reason", None) or type(cause).__name__
    return f"not a TLS reply from {host_port(url)}: the handshake failed ({why})"
