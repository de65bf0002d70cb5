"""An httpx transport whose connections count the bytes they receive, on public API only.

A reply that is not HTTP (an SSH banner, a TLS alert, noise) and a server that accepted and
closed in silence both reach httpx as "disconnected without sending a response"; only the
bytes the connection received tell them apart (``connection.not_http``). httpx's own
transport builds its httpcore pool with no way to choose the network backend, so this one
builds the pool itself (``httpcore.AsyncConnectionPool(network_backend=...)``, public) over
``CountingBackend``, and maps httpcore's errors to httpx's as httpx's transport does (both
sets of classes are public). The request's trace hook (``connection.Trace``) is handed the
``CountingStream`` a new connection opens and reads its count from there.

Clients that probe should be built with ``probe_client``; a plain ``httpx.AsyncClient``
still works, and ``connection.Trace`` then falls back to wrapping the stream's ``read``.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

import httpcore
import httpx

__all__ = [
    "DEFAULT_LIMITS",
    "HEAD_KEPT",
    "CountingBackend",
    "CountingStream",
    "ProbeTransport",
    "probe_client",
]

HEAD_KEPT = 64  # first bytes of a connection kept to tell what answered
# httpx's own default (its ``DEFAULT_LIMITS`` is private), so a swap changes nothing else
DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)

SocketOption = Any  # httpcore's SOCKET_OPTION tuple shapes, passed through unread


class CountingStream(httpcore.AsyncNetworkStream):
    """A network stream that counts what it reads and keeps the first ``HEAD_KEPT`` bytes.
    After TLS it is the decrypted stream that is counted (what h11 was handed)."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self.received = 0
        self.head = b""

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = await self._inner.read(max_bytes, timeout)
        if self.received < HEAD_KEPT:
            self.head += data[: HEAD_KEPT - self.received]
        self.received += len(data)
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return CountingStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class CountingBackend(httpcore.AsyncNetworkBackend):
    """``httpcore.AnyIOBackend`` whose streams are ``CountingStream``s."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return CountingStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_unix_socket(path, timeout, socket_options)
        return CountingStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


# httpcore's errors and the httpx ones httpx's transport raises for them, most specific first.
_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core, mapped in _ERRORS:
            if isinstance(exc, core):
                raise mapped(str(exc)) from exc
        raise


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            with _as_httpx_errors():
                await close()


class ProbeTransport(httpx.AsyncBaseTransport):
    """HTTP/1.1 over an httpcore pool of ``CountingStream`` connections. (A proxy named in
    the environment is still honoured: the client mounts httpx's own transport for it,
    whose connections are not counted.)"""

    def __init__(
        self, *, limits: httpx.Limits = DEFAULT_LIMITS, verify: ssl.SSLContext | bool = True
    ) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=CountingBackend(),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def probe_client(limits: httpx.Limits = DEFAULT_LIMITS, **client: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` over ``ProbeTransport`` (``limits`` go to its pool)."""
    return httpx.AsyncClient(transport=ProbeTransport(limits=limits), **client)
