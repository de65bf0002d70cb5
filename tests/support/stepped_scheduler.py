"""APScheduler's own engine, stepped by hand on a pinned clock.

``SteppedScheduler`` is a real ``BaseScheduler`` (its job store, misfire grace, coalescing
and trigger arithmetic) whose jobs run synchronously on the ``DebugExecutor``; instead of
a thread or an event loop sleeping until the next run, the test moves a time_machine
clock there and asks for one round of ``_process_jobs`` (the method every APScheduler
scheduler's loop calls). A simulated week takes milliseconds, and nothing depends on the
machine's clock or load.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import time_machine
from apscheduler.executors.debug import DebugExecutor
from apscheduler.schedulers.base import STATE_STOPPED, BaseScheduler

__all__ = ["SteppedScheduler", "run_until"]


class SteppedScheduler(BaseScheduler):
    """A scheduler that never wakes itself: ``run_until`` drives it."""

    def shutdown(self, wait: bool = True) -> None:
        super().shutdown(wait)

    def wakeup(self) -> None:
        """Nothing to wake: each round is asked for."""

    def _create_default_executor(self) -> DebugExecutor:
        return DebugExecutor()

    def step(self) -> float | None:
        """One round: run what is due now; seconds until the next run (None: no job)."""
        wait: float | None = self._process_jobs()
        return wait


def run_until(scheduler: SteppedScheduler, clock: time_machine.Coordinates, end: datetime) -> int:
    """Move ``clock`` from run time to run time up to ``end``; return the rounds taken.
    Bounded: a schedule that never advances the clock fails instead of spinning."""
    if scheduler.state == STATE_STOPPED:
        scheduler.start()
    for rounds in range(1, 1_000_001):
        wait = scheduler.step()
        now = datetime.now(UTC)
        if wait is None or now + timedelta(seconds=wait) > end:
            clock.move_to(end)
            scheduler.step()
            return rounds
        clock.move_to(now + timedelta(seconds=max(wait, 0.0)))
    raise AssertionError(f"the schedule did not reach {end} in a million rounds")
