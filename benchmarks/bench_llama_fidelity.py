"""TTFT fidelity against llama.cpp: client TTFT minus the server's own prompt time.

llama-server reports ``timings.prompt_ms`` (prompt processing) on its last chunk. For
each context size, N requests go through nerfwatch's ``run_probe`` and N through a
minimal reference client (raw asyncio socket, one request per connection), interleaved.
For both we print the median and p90 of TTFT - prompt_ms: what the client adds beyond the
server's own work (network, HTTP, first-token decode, parsing). Targets: nerfwatch's
median within 2 ms of the reference client's; first-prompt size within 5 % of target.

    .venv/bin/python benchmarks/bench_llama_fidelity.py [--n 20]

Needs the built server (python3 -m tests.support.llama_build).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.config import ProbeConfig, ProviderConfig  # noqa: E402
from probes.runner import build_item, run_probe  # noqa: E402
from probes.sizing import CharsPerToken  # noqa: E402
from probes.tasks import FAMILIES  # noqa: E402
from tests.support.llama_build import binary  # noqa: E402
from tests.support.llama_server import start_llama_server, stop  # noqa: E402

SIZES = [("arithmetic", 1_000), ("kv_lookup", 2_000), ("kv_lookup", 6_000)]


class _TimingsTap(httpx.AsyncBaseTransport):
    """Passes bytes through unchanged and keeps the last ``timings`` object it saw."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.prompt_ms: float | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        tap = self

        class Stream(httpx.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in response.stream:  # type: ignore[union-attr]
                    tap._scan(chunk)
                    yield chunk

            async def aclose(self) -> None:
                await response.aclose()

        return httpx.Response(
            response.status_code, headers=response.headers, stream=Stream(),
            extensions=response.extensions,
        )  # fmt: skip

    def _scan(self, chunk: bytes) -> None:
        for line in chunk.split(b"\n"):
            if b'"timings"' in line and line.startswith(b"data: "):
                self.prompt_ms = json.loads(line[6:])["timings"]["prompt_ms"]

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _reference(port: int, prompt: str) -> tuple[float, float]:
    """TTFT (first content delta) and the server's prompt_ms, on a fresh connection."""
    body = json.dumps({
        "model": "tiny", "stream": True, "max_tokens": 8, "temperature": 0,
        "messages": [{"role": "user", "content": prompt}],
    }).encode()  # fmt: skip
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.perf_counter()
    writer.write(head + body)
    await writer.drain()
    ttft = prompt_ms = None
    while True:
        line = await reader.readline()
        if not line:
            break
        if ttft is None and b'"content":"' in line and b'"content":""' not in line:
            ttft = (time.perf_counter() - started) * 1000
        if line.startswith(b"data: ") and b'"timings"' in line:
            prompt_ms = json.loads(line[6:])["timings"]["prompt_ms"]
        if line.startswith(b"data: [DONE]"):
            break
    writer.close()
    assert ttft is not None and prompt_ms is not None
    return ttft, prompt_ms


async def _measure(port: int, base_url: str, n: int) -> None:
    provider = ProviderConfig(
        name="llama", format="openai", base_url=base_url, model="tiny", api_key_env=None,
        preset="llamacpp", max_context=8192,
    )  # fmt: skip
    print(f"{'task':12} {'target':>6} {'size miss':>9}  {'nerfwatch ms':>22}  {'reference ms':>22}")
    for task, size in SIZES:
        probe = ProbeConfig(
            name="b", task=task, context_tokens=size, every_s=600.0, cron=None,
            providers=("llama",), max_output_tokens=8, timeout_s=120, read_timeout_s=120,
        )  # fmt: skip
        tap = _TimingsTap()
        ours: list[float] = []
        theirs: list[float] = []
        misses: list[float] = []
        async with httpx.AsyncClient(transport=tap) as client:
            estimator = CharsPerToken(provider.chars_per_token)
            for i in range(n):
                row = await run_probe(provider, probe, client=client, seed=900 + i,
                                      estimator=estimator)  # fmt: skip
                if row.ttft_ms is not None and tap.prompt_ms is not None:
                    ours.append(row.ttft_ms - tap.prompt_ms)
                if row.input_tokens and FAMILIES[task].KIND == "long":
                    misses.append(row.input_tokens / size - 1)  # short families: own size
                item, _, _ = build_item(FAMILIES[task], probe, 900 + i, estimator.estimate(task))
                ttft, prompt_ms = await _reference(port, item.prompt)
                theirs.append(ttft - prompt_ms)

        def show(values: list[float]) -> str:
            p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
            return f"median {statistics.median(values):6.2f} p90 {p90:6.2f}"

        first = f"{misses[0]:+.1%}" if misses else "-"
        print(f"{task:12} {size:6} {first:>9}  {show(ours):>22}  {show(theirs):>22}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20)
    args = parser.parse_args()
    if binary("llama-server") is None:
        sys.exit("llama-server is not built: python3 -m tests.support.llama_build")
    with tempfile.TemporaryDirectory() as tmp:
        server = start_llama_server(Path(tmp))
        try:
            asyncio.run(_measure(server.port, server.base_url, args.n))
        finally:
            stop(server)


if __name__ == "__main__":
    main()
