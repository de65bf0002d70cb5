"""Run N probes back to back in this (fresh) process and print their TTFTs as JSON.

    python -m tests.support.first_probe PORT [N]

The parent serves a fixed-latency loopback endpoint; a fresh interpreter is what shows the
cost of anything loaded or initialised lazily on the first request.
"""

from __future__ import annotations

import asyncio
import json
import sys

from tests.support.probing import loopback_provider, probe_n_async, short_probe


async def _ttfts(port: int, n: int) -> list[float | None]:
    probe = short_probe(timeout_s=20.0, read_timeout_s=10.0)
    results = await probe_n_async(loopback_provider(port), probe, n)
    return [r.ttft_ms if r.error_class == "ok" else None for r in results]


if __name__ == "__main__":
    port, n = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 10
    print(json.dumps(asyncio.run(_ttfts(port, n))))
