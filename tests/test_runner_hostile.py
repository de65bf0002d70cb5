"""Hostile servers cannot make a probe unbounded: a flood, a decompression bomb, an
endless line. Each is a real HTTP server on loopback; each ends as one classified row."""

from __future__ import annotations

import gzip
import json
import time
import zlib

from probes.result import ProbeResult
from tests.support.loopback import Reply, serving
from tests.support.probing import loopback_provider, probe_n, short_probe

STREAM = {"content-type": "text/event-stream"}


def _event(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _probe(reply: Reply, **probe: object) -> tuple[ProbeResult, float]:
    with serving(lambda _n, _reused: reply) as srv:
        started = time.monotonic()
        (result,) = probe_n(loopback_provider(srv.port), short_probe(**probe))
        return result, time.monotonic() - started


def _gzip_repeated(chunk: bytes, times: int) -> bytes:
    """``chunk * times`` gzipped without holding the whole decoded body in memory."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: a gzip container
    return b"".join([*(packer.compress(chunk) for _ in range(times)), packer.flush()])


def test_a_flood_of_valid_content_stops_at_the_byte_cap() -> None:
    flood = _event("x" * 1_000) * 3_000  # 3 MB of answer, never finished
    result, _ = _probe(Reply(body=flood, headers=STREAM), max_response_bytes=1_000_000)
    assert result.error_class == "response_too_large", result.error_detail
    assert "1,000,000" in (result.error_detail or "")
    assert result.response_text is None or len(result.response_text) <= 1_000_000


def test_a_gzip_bomb_stops_at_the_byte_cap() -> None:
    bomb = gzip.compress(b"\0" * 100_000_000, compresslevel=9)  # 100 MB from ~100 kB
    headers = {**STREAM, "content-encoding": "gzip"}  # sent although identity was asked
    result, _ = _probe(Reply(body=bomb, headers=headers))
    assert result.error_class == "response_too_large", result.error_detail


def test_the_deadline_holds_while_a_bomb_decodes() -> None:
    """Comments decode cheaply in bulk and parse slowly: without the clock read between
    slices, one decoded burst would run far past the deadline."""
    bomb = _gzip_repeated(b": k\n" * 1_000_000, times=100)  # 400 MB of comments from ~400 kB
    headers = {**STREAM, "content-encoding": "gzip"}
    result, took = _probe(
        Reply(body=bomb, headers=headers),
        timeout_s=2.0, read_timeout_s=2.0, max_response_bytes=1_000_000_000,
    )  # fmt: skip
    assert result.error_class in ("timeout_first_token", "stall"), result.error_detail
    # The deadline plus one slice, with room for a loaded machine; without the clock read
    # between slices, parsing the 100 M comment lines would take about a minute.
    assert took < 2.0 + 10.0, took


def test_an_endless_line_is_a_malformed_stream() -> None:
    line = b"data: " + b"x" * 5_000_000  # never ends, never dispatches
    result, _ = _probe(Reply(body=line, headers=STREAM))
    assert result.error_class == "malformed_stream", result.error_detail
    assert "unended" in (result.error_detail or "")
