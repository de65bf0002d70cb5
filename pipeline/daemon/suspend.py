"""Probes the machine slept through: their durations are not measurements.

A probe's timings come from ``CLOCK_MONOTONIC`` (``time.perf_counter_ns``), which stops
while the machine is suspended. A probe in flight across a suspend was stored with its
awake time as its latency: plausible, and wrong (the server went on streaming, or gave
up, while the client slept). ``CLOCK_BOOTTIME`` counts the suspend, so the gap between
the two grows by exactly the time slept. A probe during which it grew keeps its answer,
usage and error class, loses its timing columns (no figure rather than a wrong one) and
is flagged ``suspended``, a metadata flag that the answers' flag rate does not count.

An NTP step moves neither clock: a stepped wall clock only moves ``started_at``, and
durations stay right. Where there is no ``CLOCK_BOOTTIME`` (not Linux) nothing is seen.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable

from pipeline.daemon.schedule import JobSpec
from probes.result import ProbeResult

__all__ = ["SUSPENDED_FLAG", "TIMING_FIELDS", "SuspendAware", "slept_ns"]

log = logging.getLogger("nerfwatch.daemon")

SUSPENDED_FLAG = "suspended"
TIMING_FIELDS = (
    "headers_ms",
    "ttft_ms",
    "first_answer_ms",
    "last_token_ms",
    "total_ms",
    "itl_p50_ms",
    "itl_p95_ms",
    "itl_max_ms",
    "output_tokens_per_s",
)
_TOLERANCE_NS = 100_000_000  # both clocks tick together while awake; 0.1 s is slack


def slept_ns() -> int:
    """Nanoseconds this machine has spent suspended since boot (0 where unknown)."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boottime is None:
        return 0
    return time.clock_gettime_ns(boottime) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class SuspendAware:
    """Wraps the daemon's probe call: a result the machine slept through loses its
    timings and is flagged."""

    def __init__(
        self,
        probe: Callable[[JobSpec], Awaitable[ProbeResult]],
        *,
        slept: Callable[[], int] = slept_ns,
    ) -> None:
        self._probe = probe
        self._slept = slept

    async def __call__(self, spec: JobSpec) -> ProbeResult:
        before = self._slept()
        result = await self._probe(spec)
        slept = self._slept() - before
        if slept <= _TOLERANCE_NS:
            return result
        log.warning(
            "probe %s was in flight while the machine slept %.0f s: its timings are"
            " dropped and the row is flagged %r",
            spec.key,
            slept / 1e9,
            SUSPENDED_FLAG,
        )
        cleared: dict[str, object] = dict.fromkeys(TIMING_FIELDS)
        flags = [*result.sanity_flags, SUSPENDED_FLAG]
        return dataclasses.replace(result, **cleared, sanity_flags=flags)  # type: ignore[arg-type]
