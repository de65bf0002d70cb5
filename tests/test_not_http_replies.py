"""Something listening that does not speak HTTP is told apart from nothing listening.

Real sockets on loopback: an SSH server's banner (sent on accept, before the request), a
TLS alert answering a plain-HTTP request, noise, and a plain-HTTP server behind an https
URL are ``malformed_stream`` (something answered, unreadably); a refused port, a silent
close and a status line cut by the close stay ``connection_error``.

Every case runs twice: over ``ProbeTransport`` (the bytes counted by its network streams,
public httpcore API; the fallback is made to fail there, so it cannot be what passed) and
over a plain ``httpx.AsyncClient`` (the fallback that wraps the stream's ``read``).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest

from pipeline.config import ProbeConfig, ProviderConfig
from probes.adapters.connection import Trace
from probes.adapters.transport import probe_client
from probes.result import ProbeResult
from probes.runner import run_probe
from tests.support.probing import loopback_provider, probe_n, short_probe

KEY = "sk-nothttp-0123456789abcdefghijklmnop"
KEY_ENV = "NW_NOT_HTTP_TEST_KEY"
JOIN_S = 30.0


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


@contextmanager
def _talker(on_accept: bytes, after_request: bytes) -> Iterator[int]:
    """One connection: write ``on_accept`` at once (as SSH does), wait for the client's
    first bytes, write ``after_request``, close. The close is a FIN after the client's
    bytes are all read: closing with some unread (the request in two writes) sends a
    reset instead, which can discard what the client had not read yet and reads as a
    bare ReadError, a different drop from the one a test means (seen once in CI)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(JOIN_S)

    def serve() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(JOIN_S)
            if on_accept:
                conn.sendall(on_accept)
            try:
                conn.recv(65536)
                if after_request:
                    conn.sendall(after_request)
                conn.shutdown(socket.SHUT_WR)
                while conn.recv(65536):  # until the client closes (its deadline bounds it)
                    pass
            except OSError:
                pass  # the client gave up first; what it saw is the test's business

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        thread.join(JOIN_S)
        assert not thread.is_alive(), f"the test server did not stop within {JOIN_S} s"


Probe = Callable[..., ProbeResult]


@pytest.fixture(params=["probe_transport", "plain_httpx"])
def probe_at(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Probe:
    """Probe ``127.0.0.1:port`` once over the client this parameter names."""
    over_probe_transport = request.param == "probe_transport"
    if over_probe_transport:

        def refuse(self: Trace, stream: Any) -> None:
            raise AssertionError(f"the read-wrapping fallback ran on {type(stream).__name__}")

        monkeypatch.setattr(Trace, "_wrap_reads", refuse)

    async def with_probe_client(provider: ProviderConfig, probe: ProbeConfig) -> ProbeResult:
        async with probe_client() as client:
            return await run_probe(provider, probe, client=client, seed=0)

    def run(port: int, scheme: str = "http") -> ProbeResult:
        provider = loopback_provider(port, api_key_env=KEY_ENV)
        provider = replace(provider, base_url=f"{scheme}://127.0.0.1:{port}/v1")
        probe = short_probe(timeout_s=4.0, read_timeout_s=2.0)
        if over_probe_transport:
            result = asyncio.run(with_probe_client(provider, probe))
        else:
            (result,) = probe_n(provider, probe)
        assert KEY not in result.to_json(), "the API key reached the row"
        return result

    return run


@pytest.mark.parametrize(
    ("on_accept", "after_request", "seen"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n", b"Invalid SSH identification string.\r\n", "SSH-2.0"),
        (b"SSH-2.0-OpenSSH_9.6\r\n", b"", "SSH-2.0"),  # banner, then a silent close
        (b"", b"\x15\x03\x03\x00\x02\x02\x46", "\\x15\\x03\\x03"),  # TLS alert record
        (b"", bytes(range(7, 200)), "\\x07\\x08"),
        (b"", b"220 mail.example ESMTP ready\r\n", "220 mail"),
    ],
    ids=["ssh-banner", "ssh-banner-then-close", "tls-alert", "noise", "smtp-greeting"],
)
def test_a_reply_that_is_not_http_is_unreadable_not_absent(
    on_accept: bytes, after_request: bytes, seen: str, probe_at: Probe
) -> None:
    with _talker(on_accept, after_request) as port:
        result = probe_at(port)
    assert (result.error_class, result.http_status) == ("malformed_stream", None), (
        result.error_detail
    )
    detail = result.error_detail or ""
    assert detail.startswith(f"not an HTTP reply from 127.0.0.1:{port}"), detail
    assert seen in detail, detail


def test_a_plain_http_server_behind_an_https_url_is_not_tls(probe_at: Probe) -> None:
    reply = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    with _talker(b"", reply) as port:
        result = probe_at(port, scheme="https")
    assert result.error_class == "malformed_stream", result.error_detail
    assert (result.error_detail or "").startswith(f"not a TLS reply from 127.0.0.1:{port}")


@pytest.mark.parametrize(
    ("after_request", "seen"),
    [
        (b"", "disconnected without sending a response"),
        (b"HTTP/1.1 200 OK\r\ncontent-ty", "disconnected without sending a response"),
        (b"HTTP/1", "disconnected without sending a response"),
    ],
    ids=["silent-close", "head-cut-by-close", "status-line-cut-by-close"],
)
def test_a_close_before_or_inside_a_valid_head_is_still_a_drop(
    after_request: bytes, seen: str, probe_at: Probe
) -> None:
    with _talker(b"", after_request) as port:
        result = probe_at(port)
    assert (result.error_class, result.http_status) == ("connection_error", None)
    assert seen in (result.error_detail or ""), result.error_detail


def test_nothing_listening_is_a_refused_connection(probe_at: Probe) -> None:
    with socket.create_server(("127.0.0.1", 0)) as spare:
        port = spare.getsockname()[1]  # closed on leaving: nothing listens there now
    result = probe_at(port)
    assert result.error_class == "connection_error", result.error_detail
    assert "connection refused" in (result.error_detail or ""), result.error_detail
