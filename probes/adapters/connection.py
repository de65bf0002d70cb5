"""What the connection under a send did: new or pooled, stale, refused, and where.

A send that failed on a reused pooled connection before any response to it is a client
artefact (the server had closed the socket after its previous response, or that response
left bytes behind its stated length), so it earns one resend; a refused or unresolved
connect is named by ``host:port`` only, never the URL's path or query, which may carry a key.
"""

from __future__ import annotations

import errno
import os
import socket
from typing import Any

import httpx

from probes.timing import Timeline, now_ns

__all__ = ["Trace", "connect_failure", "host_port", "stale_note", "stale_pooled"]


class Trace:
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
