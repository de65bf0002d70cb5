"""One provider, one probe, N real probes: the set-up many client tests share.

``loopback_provider`` points an OpenAI- or Anthropic-wire provider at a port on
127.0.0.1; ``short_probe`` is an arithmetic probe with short deadlines; ``probe_n`` runs
them through ``run_probe`` over one client, one after another, as the daemon would.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from pipeline.config import ProbeConfig, ProviderConfig
from probes.adapters.transport import probe_client
from probes.result import ProbeResult
from probes.runner import run_probe
from probes.sizing import CharsPerToken

__all__ = ["loopback_provider", "probe_n", "probe_n_async", "short_probe"]


def loopback_provider(port: int, wire: str = "openai", **fields: Any) -> ProviderConfig:
    """Provider ``p`` at ``http://127.0.0.1:PORT/v1``, keyless; ``fields`` override."""
    base = ProviderConfig(
        name="p", format=wire, base_url=f"http://127.0.0.1:{port}/v1", model="m",
        api_key_env=None, preset=wire,
    )  # fmt: skip
    return replace(base, **fields)


def short_probe(**fields: Any) -> ProbeConfig:
    """An arithmetic probe of provider ``p`` (10 s deadline, 5 s read timeout)."""
    base = ProbeConfig(
        name="t", task="arithmetic", context_tokens=1_000, every_s=60.0, cron=None,
        providers=("p",), timeout_s=10.0, read_timeout_s=5.0,
    )  # fmt: skip
    return replace(base, **fields)


async def probe_n_async(
    provider: ProviderConfig,
    probe: ProbeConfig,
    n: int = 1,
    *,
    seed: int | None = 0,
    estimator: CharsPerToken | None = None,
) -> list[ProbeResult]:
    """``n`` probes one after another over one client (seeds ``seed``, ``seed + 1``...;
    ``None``: each drawn as the daemon draws it)."""
    async with probe_client() as client:
        return [
            await run_probe(
                provider,
                probe,
                client=client,
                seed=None if seed is None else seed + i,
                estimator=estimator,
            )
            for i in range(n)
        ]


def probe_n(*args: Any, **kwargs: Any) -> list[ProbeResult]:
    """``probe_n_async`` in a fresh event loop: ``n`` probes one after another."""
    return asyncio.run(probe_n_async(*args, **kwargs))
