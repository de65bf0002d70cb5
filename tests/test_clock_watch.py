"""The clock watch names what moved the wall clock: a suspend (the boot-time clock gained
the same time) or a step (NTP, by hand). The old watch passed the step on unnamed, and
the bridge could only say "suspend or correction"."""

from __future__ import annotations

import asyncio
import logging

import pytest

from pipeline.daemon.clock_watch import ClockWatch
from tests.support.waiting import wait_until_async


class Clocks:
    """Wall, monotonic and time-slept, each moved by hand."""

    def __init__(self) -> None:
        self.wall = 1_790_000_000.0
        self.mono = 1_000.0
        self.slept_ns = 0


async def _watch(clocks: Clocks, wall_s: float, slept_s: float) -> list[float]:
    steps: list[float] = []
    watch = ClockWatch(
        steps.append,
        every_s=0.01,
        wall=lambda: clocks.wall,
        monotonic=lambda: clocks.mono,
        slept=lambda: clocks.slept_ns,
    )
    watch.start()
    try:
        await asyncio.sleep(0)
        clocks.wall += wall_s
        clocks.slept_ns += int(slept_s * 1e9)
        await wait_until_async(lambda: bool(steps), timeout=30, what="the step to be seen")
    finally:
        watch.stop()
    return steps


@pytest.mark.parametrize(
    ("wall_s", "slept_s", "line"),
    [
        (32_400.0, 32_400.0, "machine resumed after a suspend of 32400 s"),
        (-7_200.0, 0.0, "wall clock set -7200 s while the machine ran (NTP or by hand)"),
        (
            36_000.0,
            32_400.0,
            "machine resumed after a suspend of 32400 s, and the wall clock was set +3600 s",
        ),
    ],
)
def test_a_wall_clock_jump_is_named_and_passed_on_once(
    caplog: pytest.LogCaptureFixture, wall_s: float, slept_s: float, line: str
) -> None:
    clocks = Clocks()
    with caplog.at_level(logging.WARNING, logger="nerfwatch.daemon"):
        steps = asyncio.run(_watch(clocks, wall_s, slept_s))
    assert steps == [wall_s]
    assert [r.getMessage() for r in caplog.records] == [line]


def test_time_passing_on_both_clocks_is_no_step() -> None:
    async def main() -> list[float]:
        steps: list[float] = []
        clocks = Clocks()
        looked = 0

        def wall() -> float:
            nonlocal looked
            looked += 1
            clocks.wall += 5.0  # both clocks move 5 s between looks: time passing
            clocks.mono += 5.0
            return clocks.wall

        watch = ClockWatch(
            steps.append, every_s=0.01, wall=wall, monotonic=lambda: clocks.mono,
            slept=lambda: 0,
        )  # fmt: skip
        watch.start()
        await wait_until_async(lambda: looked >= 5, timeout=30, what="five looks")
        watch.stop()
        return steps

    assert asyncio.run(main()) == []
