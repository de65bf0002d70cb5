"""Concurrency caps: global, per provider, and one long-context probe per provider.

Probes that run side by side distort each other's latency (Gatus limits concurrency
for the same reason), and several long-context requests at once to one provider
measure our own load rather than theirs. Slots are always taken in the same order
(long-context lock, provider, global) so waiting probes can never deadlock.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from pipeline.config import Config, ProbeConfig, ProviderConfig

__all__ = ["CapUsage", "Caps"]


@dataclass(slots=True)
class CapUsage:
    """Live counts, for tests, metrics and the peak-concurrency check."""

    global_now: int = 0
    global_peak: int = 0
    provider_now: dict[str, int] = field(default_factory=dict)
    provider_peak: dict[str, int] = field(default_factory=dict)
    long_now: dict[str, int] = field(default_factory=dict)
    long_peak: dict[str, int] = field(default_factory=dict)


def _bump(now: dict[str, int], peak: dict[str, int], name: str, delta: int) -> None:
    now[name] = now.get(name, 0) + delta
    peak[name] = max(peak.get(name, 0), now[name])


class Caps:
    """Semaphores rebuilt on reload; a probe releases the one it acquired."""

    def __init__(self, config: Config) -> None:
        self.usage = CapUsage()
        self._global = asyncio.Semaphore(config.daemon.max_concurrency)
        self._global_limit = config.daemon.max_concurrency
        self._limits: dict[str, int] = {}
        self._provider: dict[str, asyncio.Semaphore] = {}
        self._long: dict[str, asyncio.Semaphore] = {}
        self.configure(config)

    def configure(self, config: Config) -> None:
        """Apply new limits; unchanged limits keep their semaphore (and its waiters)."""
        if config.daemon.max_concurrency != self._global_limit:
            self._global = asyncio.Semaphore(config.daemon.max_concurrency)
            self._global_limit = config.daemon.max_concurrency
        for provider in config.providers:
            if self._limits.get(provider.name) != provider.max_concurrency:
                self._provider[provider.name] = asyncio.Semaphore(provider.max_concurrency)
                self._limits[provider.name] = provider.max_concurrency
            self._long.setdefault(provider.name, asyncio.Semaphore(1))

    @asynccontextmanager
    async def slot(self, provider: ProviderConfig, probe: ProbeConfig) -> AsyncIterator[None]:
        """Hold every cap that applies to this probe for the duration of the block."""
        name = provider.name
        long_lock = probe.context_class == "long" and provider.serialize_long_context
        async with AsyncExitStack() as stack:
            if long_lock:
                await stack.enter_async_context(self._long[name])
            await stack.enter_async_context(self._provider[name])
            await stack.enter_async_context(self._global)
            self._count(name, long_lock, +1)
            try:
                yield
            finally:
                self._count(name, long_lock, -1)

    def _count(self, name: str, long_lock: bool, delta: int) -> None:
        u = self.usage
        u.global_now += delta
        u.global_peak = max(u.global_peak, u.global_now)
        _bump(u.provider_now, u.provider_peak, name, delta)
        if long_lock:
            _bump(u.long_now, u.long_peak, name, delta)
