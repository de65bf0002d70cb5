"""A pooled connection the server already closed is resent once on a new connection; a
failure on a fresh connection is still a ``connection_error``. Real loopback sockets."""

from __future__ import annotations

from dataclasses import replace

from probes.result import ProbeResult
from tests.support.loopback import Reply, Server, openai_answer, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

PROBES = 10
ANSWER = openai_answer()


def _probes(srv: Server, n: int) -> list[ProbeResult]:
    return probe_n(loopback_provider(srv.port), short_probe(), n)


def test_server_closing_a_kept_alive_connection_gives_no_errors() -> None:
    # Says keep-alive, then drops the next request on that connection without a byte:
    # every reuse hits a dead socket, deterministically.
    with serving(lambda _n, reused: Reply(drop=True) if reused else ANSWER) as srv:
        results = _probes(srv, PROBES)
        assert srv.connections == PROBES  # the first probe's, then one per retry
        assert srv.requests == 2 * PROBES - 1
    assert [r.error_class for r in results] == ["ok"] * PROBES
    first, *retried = results
    assert first.error_detail is None
    for r in retried:
        assert r.connection_reused is False  # the timed request ran on the new connection
        assert r.error_detail is not None
        assert r.error_detail.startswith("retried once on a new connection: RemoteProtocolError")


def test_server_closing_after_every_response_gives_no_errors() -> None:
    # The field case: keep-alive announced, socket closed just after the body, while the
    # client, unaware, is already sending the next request on it.
    closing = replace(ANSWER, close_after=True, linger_s=0.05)
    with serving(lambda _n, _reused: closing) as srv:
        results = _probes(srv, PROBES)
    assert [r.error_class for r in results] == ["ok"] * PROBES


def test_failure_on_a_fresh_connection_is_not_retried() -> None:
    with serving(lambda _n, _reused: Reply(drop=True)) as srv:
        (result,) = _probes(srv, 1)
        assert srv.requests == 1
    assert result.error_class == "connection_error"
    assert result.connection_reused is False
    assert "retried" not in (result.error_detail or "")
