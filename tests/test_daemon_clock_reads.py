"""A pause between the clock watch's wall and monotonic reads is not a clock step.

On a loaded machine (load ~20) the watch's thread can be descheduled for a second between
reading the wall clock and the monotonic clock. The old watch took that pause for a step
back of its length and the bridge re-timed every job a second early: a run fired twice
for one slot (test_daemon_clock_steps' spacing assertion). Here the clocks are fakes that
pause on chosen wall reads; nothing steps.
"""

from __future__ import annotations

import asyncio

from pipeline.daemon.clock_watch import ClockWatch
from tests.support.waiting import wait_until_async


class PausingClocks:
    """One real time behind both clocks; the listed wall reads are followed by a pause
    (the reading thread descheduled) of ``pause_s`` before the next read."""

    def __init__(self, pause_after_wall_reads: set[int], pause_s: float) -> None:
        self.now = 1_000.0
        self.wall_reads = 0
        self.stepped_s = 0.0  # a real step of the wall clock
        self._pauses, self._pause_s = pause_after_wall_reads, pause_s

    def wall(self) -> float:
        self.wall_reads += 1
        value = 1_790_000_000.0 + self.now + self.stepped_s
        if self.wall_reads in self._pauses:
            self.now += self._pause_s
        return value

    def monotonic(self) -> float:
        return self.now


def _watch(clocks: PausingClocks, steps: list[float]) -> ClockWatch:
    """A watch on ``clocks`` that looks every 10 ms and appends each step it sees."""
    return ClockWatch(
        steps.append, every_s=0.01, wall=clocks.wall, monotonic=clocks.monotonic, slept=lambda: 0
    )


def test_a_pause_between_the_reads_is_not_a_step() -> None:
    clocks = PausingClocks(pause_after_wall_reads={2, 4, 6}, pause_s=1.5)
    steps: list[float] = []

    async def main() -> None:
        watch = _watch(clocks, steps)
        watch.start()
        try:  # enough looks that every paused read has been taken and compared
            await wait_until_async(lambda: clocks.wall_reads >= 10, timeout=30, what="ten looks")
        finally:
            watch.stop()

    asyncio.run(main())
    # Before the fix: [-1.5, 1.5, -1.5, 1.5, -1.5, 1.5]: each pause a phantom step back
    # (the jobs re-timed a slot early) and, at the next look, a phantom jump forward.
    assert steps == [], steps


def test_a_real_step_is_still_seen_at_its_size_despite_pauses() -> None:
    clocks = PausingClocks(pause_after_wall_reads={2}, pause_s=1.5)
    steps: list[float] = []

    async def main() -> None:
        watch = _watch(clocks, steps)
        watch.start()
        try:
            await wait_until_async(lambda: clocks.wall_reads >= 4, timeout=30, what="four looks")
            clocks.stepped_s = -60.0  # NTP steps the wall clock back a minute
            await wait_until_async(lambda: bool(steps), timeout=30, what="the step")
        finally:
            watch.stop()

    asyncio.run(main())
    assert len(steps) == 1 and abs(steps[0] + 60.0) < 0.01, steps
