"""The stopper alone: the first stop reason wins, from any thread; the grace period
waits for fired runs, then cancels the ones still probing."""

from __future__ import annotations

import asyncio
import threading

from pipeline.daemon.contract import DaemonStats
from pipeline.daemon.stopper import Stopper


def _stopper(stats: DaemonStats) -> Stopper:
    return Stopper(stats, install_signals=False, on_reload=lambda: None)


def test_the_first_reason_wins_even_from_another_thread() -> None:
    stats = DaemonStats()
    stopper = _stopper(stats)

    async def main() -> None:
        stopper.attach(asyncio.get_running_loop())
        other = threading.Thread(target=stopper.request, args=("SIGTERM",))
        other.start()
        await asyncio.wait_for(stopper.wait(None, None), timeout=5)
        other.join()
        stopper.request("requested")  # too late: the stop is already on its way
        await asyncio.sleep(0)

    asyncio.run(main())

    assert stats.stop_reason == "SIGTERM"
    assert not stopper.stopping  # stopping begins when the service says so


def test_a_caller_event_and_a_time_limit_name_themselves() -> None:
    by_event, by_time = DaemonStats(), DaemonStats()

    async def main() -> None:
        event = asyncio.Event()
        event.set()
        await _stopper(by_event).wait(None, event)
        await _stopper(by_time).wait(0.01, None)

    asyncio.run(main())

    assert (by_event.stop_reason, by_time.stop_reason) == ("stop_event", "stop_after")


class _Fired:
    """Fired runs as the bridge counts them: idle once every run has ended."""

    def __init__(self, runs: list[asyncio.Task[None]]) -> None:
        self.runs = runs

    @property
    def outstanding(self) -> int:
        return sum(not t.done() for t in self.runs)

    async def wait_idle(self, timeout: float) -> None:
        await asyncio.wait(self.runs, timeout=timeout)


class _InFlight(_Fired):
    @property
    def in_flight(self) -> int:
        return self.outstanding

    def cancel_unpersisted(self) -> int:
        return sum(t.cancel() for t in self.runs if not t.done())


def test_the_grace_period_lets_quick_runs_finish_and_cancels_the_rest() -> None:
    stopper = _stopper(DaemonStats())

    async def main() -> list[str]:
        ended: list[str] = []

        async def run(name: str, seconds: float) -> None:
            try:
                await asyncio.sleep(seconds)
                ended.append(f"{name} done")
            except asyncio.CancelledError:
                ended.append(f"{name} cancelled")

        runs = [asyncio.ensure_future(run("quick", 0.05)), asyncio.ensure_future(run("slow", 60))]
        stopper.begin()
        await asyncio.wait_for(stopper.end_in_flight(0.5, _Fired(runs), _InFlight(runs)), 15)
        return ended

    assert asyncio.run(main()) == ["quick done", "slow cancelled"]
    assert stopper.stopping
