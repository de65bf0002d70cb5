"""Noticing wall-clock steps: NTP stepping back, a resumed suspend, a clock corrected by days.

APScheduler plans runs in wall time but sleeps on the event loop's monotonic clock, so it
cannot tell a step from the passage of time: after a step back it waits, probing nothing,
until the wall clock has caught up again. The watch compares how far each clock moved
between two looks; a difference of more than ``tolerance_s`` is a step (NTP slews smaller
offsets, and a stalled loop delays both clocks alike). A third clock tells a suspend
from a step: ``CLOCK_BOOTTIME`` gains on the monotonic clock exactly the time slept, so a
jump forward that it matches is logged as a suspend and resume, anything else as the wall
clock being set (NTP, by hand).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from pipeline.daemon.suspend import slept_ns

__all__ = ["ClockWatch"]

log = logging.getLogger("nerfwatch.daemon")

_READ_SPREAD_S = 0.05  # wall read between two monotonic reads at most this far apart
_READ_TRIES = 5


class ClockWatch:
    """Calls ``on_step(seconds)`` (negative: backward) when the wall clock steps."""

    def __init__(
        self,
        on_step: Callable[[float], None],
        *,
        every_s: float = 1.0,
        tolerance_s: float = 1.0,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        slept: Callable[[], int] = slept_ns,
    ) -> None:
        self._on_step = on_step
        self._every_s = every_s
        self._tolerance_s = tolerance_s
        self._wall = wall
        self._monotonic = monotonic
        self._slept = slept
        self._last = (0.0, 0.0, 0)
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Start looking (inside the running loop)."""
        self._last = self._read()
        self._handle = asyncio.get_running_loop().call_later(self._every_s, self._look)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _look(self) -> None:
        wall, mono, slept = self._read()
        step = (wall - self._last[0]) - (mono - self._last[1])
        asleep = (slept - self._last[2]) / 1e9
        self._last = (wall, mono, slept)
        self._handle = asyncio.get_running_loop().call_later(self._every_s, self._look)
        if abs(step) > self._tolerance_s:
            self._explain(step, asleep)
            self._on_step(step)

    def _read(self) -> tuple[float, float, int]:
        """The clocks read together. A loaded machine may deschedule this thread between
        the wall and the monotonic read; unnoticed, that pause counts as a step of its
        length, and a 1 s pause re-timed the jobs by a phantom second (a run fired twice)."""
        for _ in range(_READ_TRIES):
            before = self._monotonic()
            wall, slept = self._wall(), self._slept()
            after = self._monotonic()
            if after - before <= _READ_SPREAD_S:
                break
        return wall, (before + after) / 2, slept

    def _explain(self, step: float, asleep: float) -> None:
        """One line saying what moved the wall clock."""
        if asleep > self._tolerance_s and abs(step - asleep) <= self._tolerance_s:
            log.warning("machine resumed after a suspend of %.0f s", asleep)
        elif asleep > self._tolerance_s:
            log.warning(
                "machine resumed after a suspend of %.0f s, and the wall clock was set %+.0f s",
                asleep,
                step - asleep,
            )
        else:
            log.warning("wall clock set %+.0f s while the machine ran (NTP or by hand)", step)
