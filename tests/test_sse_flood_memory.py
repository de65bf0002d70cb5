"""A flood of ``data:`` lines with no blank line never dispatches an event: the parser
holds every line until the byte cap ends the read. Each held line was its own str (about
50 bytes of object for a two-character value), so a flood of ``data: xy`` lines peaked at
about 7x the cap in memory before ``response_too_large`` cut it. The server runs in its
own process (its bytes are not the client's) and speaks real HTTP on loopback; the
client's peak is measured with tracemalloc. Assumes CPython's str layout (the bound has
room for buffers, not for one object per line)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import tracemalloc

import httpx
import pytest

from probes.adapters import openai
from probes.adapters.base import Request
from probes.adapters.http import Exchange, execute
from probes.adapters.state import StreamState
from tests.support.waiting import read_line, stop_server

CAP = 2_000_000
DEADLINE_S = 30.0  # the probe's own deadline; parsing 2 MB under tracemalloc takes ~1 s
PEAK_BOUND = 1.8  # times the cap: 6.9x, 7.7x and 2.0x before the fix, 0.94x to 1.22x after


def _flood(line: bytes, limit: int = CAP * 4) -> tuple[Exchange, int, float]:
    """Execute one streamed request against a flood of ``line``: (exchange, peak, seconds)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.support.flood_server", line.hex(), str(limit)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(read_line(server, timeout=30, what="the flood server's port"))
        request = Request(
            url=f"http://127.0.0.1:{port}/v1/chat/completions",
            headers={"content-type": "application/json"},
            body={"model": "m"},
            stream=True,
        )
        client = httpx.AsyncClient()

        async def send() -> Exchange:
            async with client:
                return await execute(
                    client, request, StreamState(), openai,
                    deadline_s=DEADLINE_S, read_timeout_s=DEADLINE_S, max_bytes=CAP,
                )  # fmt: skip

        started = time.monotonic()
        tracemalloc.start()
        try:
            ex = asyncio.run(send())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return ex, peak, time.monotonic() - started
    finally:
        stop_server(server, timeout=10)
        assert server.stdout is not None
        server.stdout.close()


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """A first exchange allocates once per process what the flood is not (about 6 MB of
    lazily imported transport modules); measure after it."""
    _flood(b"data: w\n", limit=CAP // 4)


@pytest.mark.parametrize("line", [b"data: xy\n", b"data:{}\n", b"data: " + b"z" * 60 + b"\n"])
def test_a_flood_of_data_lines_stays_near_the_cap_in_memory(line: bytes) -> None:
    ex, peak, took = _flood(line)
    assert took < DEADLINE_S + 10, f"took {took:.1f} s"
    assert ex.failure == "response_too_large", (ex.failure, ex.detail)
    assert peak < PEAK_BOUND * CAP, f"peak {peak / CAP:.1f}x the {CAP:,} byte cap for {line!r}"
