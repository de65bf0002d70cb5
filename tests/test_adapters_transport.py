"""``ProbeTransport`` (probes/adapters/transport.py) against a real loopback server: it answers,
pools, counts the bytes a connection received where the trace hook can read them, and
raises the httpx errors httpx's own transport raises, which ``http.execute`` classifies.

(The not-HTTP replies it exists for are in tests/test_not_http_replies.py, run over both
this transport and a plain ``httpx.AsyncClient``.)"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
import pytest

from probes.adapters.connection import Trace
from probes.adapters.transport import CountingStream, probe_client
from probes.result import ProbeResult
from probes.runner import run_probe
from tests.support.loopback import Reply, openai_answer, serving
from tests.support.probing import loopback_provider, short_probe

T = TypeVar("T")


def _run(work: Callable[[httpx.AsyncClient], Awaitable[T]]) -> T:
    async def go() -> T:
        async with probe_client() as client:
            return await work(client)

    return asyncio.run(go())


def test_answers_and_pools_like_httpx() -> None:
    with serving(lambda _n, _reused: openai_answer()) as srv:
        provider, probe = loopback_provider(srv.port), short_probe()

        async def twice(client: httpx.AsyncClient) -> list[ProbeResult]:
            return [await run_probe(provider, probe, client=client, seed=i) for i in (1, 2)]

        first, second = _run(twice)
    assert (first.error_class, second.error_class) == ("ok", "ok"), first.error_detail
    assert (first.connection_reused, second.connection_reused) == (False, True)
    assert first.response_text == "ANSWER: 4" and first.ttft_ms is not None


def test_the_trace_reads_the_count_from_the_connections_own_stream() -> None:
    body = b'{"ok": true}'
    with serving(lambda _n, _reused: Reply(body=body)) as srv:
        trace = Trace()

        async def send(client: httpx.AsyncClient) -> httpx.Response:
            url = f"http://127.0.0.1:{srv.port}/v1"
            return await client.post(url, content=b"{}", extensions={"trace": trace})

        response = _run(send)
    assert response.content == body
    assert trace.received >= len(body) + len(b"HTTP/1.1 200 OK\r\n\r\n")
    assert trace.head.startswith(b"HTTP/1.1 200 OK\r\n")


def test_new_connections_are_counting_streams() -> None:
    seen: list[Any] = []

    async def hook(name: str, info: dict[str, Any]) -> None:
        if name == "connection.connect_tcp.complete":
            seen.append(info.get("return_value"))

    with serving(lambda _n, _reused: Reply(body=b"{}")) as srv:

        async def send(client: httpx.AsyncClient) -> httpx.Response:
            url = f"http://127.0.0.1:{srv.port}/v1"
            return await client.post(url, content=b"{}", extensions={"trace": hook})

        _run(send)
    assert len(seen) == 1 and isinstance(seen[0], CountingStream)


def test_a_refused_port_is_httpxs_connect_error_with_the_os_cause() -> None:
    with socket.create_server(("127.0.0.1", 0)) as spare:
        port = spare.getsockname()[1]  # closed on leaving: nothing listens there now

    async def send(client: httpx.AsyncClient) -> httpx.Response:
        return await client.post(f"http://127.0.0.1:{port}/v1", content=b"{}")

    with pytest.raises(httpx.ConnectError) as caught:
        _run(send)
    cause: BaseException | None = caught.value
    while cause is not None and not isinstance(cause, ConnectionRefusedError):
        cause = cause.__cause__ or cause.__context__
    assert cause is not None, "the OS error under the ConnectError was lost"


def test_silence_is_httpxs_read_timeout() -> None:
    with serving(lambda _n, _reused: Reply(body=b"{}", delay_s=3.0)) as srv:

        async def send(client: httpx.AsyncClient) -> httpx.Response:
            timeout = httpx.Timeout(5.0, read=0.2)
            return await client.post(f"http://127.0.0.1:{srv.port}/v1", timeout=timeout)

        with pytest.raises(httpx.ReadTimeout):
            _run(send)


def test_a_reset_mid_body_is_an_httpx_transport_error_while_streaming() -> None:
    reply = Reply(chunks=(b"data: {}\n\n",), unended=True, reset=True)
    with serving(lambda _n, _reused: reply) as srv:

        async def read(client: httpx.AsyncClient) -> None:
            url = f"http://127.0.0.1:{srv.port}/v1"
            async with client.stream("POST", url, content=b"{}") as response:
                async for _ in response.aiter_bytes():
                    pass

        with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
            _run(read)
